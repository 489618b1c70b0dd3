//===- PlanMemory.cpp - the plan's activations in one workspace -----------===//
//
// Part of sgc. Gives every `plan.alloc` of an entry a byte offset in the
// entry's workspace: a buffer lives from the step that first writes it to
// the last step that reads it (the logits and the argmax to the end), and
// buffers whose lives do not overlap share bytes (first fit in order of
// first write, 64-byte aligned). The plan.entry verifier checks the result.
// On a GPU target it runs again after convert-sg-to-gpu, when every step is
// one launch: the buffers between a step's launches and the kernels' own
// scratch are placed as the rest. The zeroed region's buffers (sg.zeroed:
// counters the kernels leave at zero) share one offset past every entry's
// workspace, which the runtime shares between the entries.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Plan/IR/PlanOps.h"
#include "dialects/SG/IR/SGDialect.h"

#include "mlir/IR/Builders.h"

namespace mlir::sgc {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;
using namespace mlir::sgc;

namespace {

constexpr int64_t kAlignment = 64;

struct Interval {
  plan::AllocOp alloc;
  int64_t begin, end; // steps, inclusive
  int64_t bytes;
  int64_t offset = -1;
};

int64_t alignUp(int64_t v) {
  return (v + kAlignment - 1) / kAlignment * kAlignment;
}

/// Places the allocs of `entry` but those of the zeroed region (appended to
/// `zeroed`) and records the workspace size.
void planEntry(plan::EntryOp entry, SmallVectorImpl<plan::AllocOp> &zeroed) {
  Block &block = entry.getBlock();
  int64_t numSteps = llvm::range_size(block.getOps<plan::StepOpInterface>());
  SmallVector<Interval> intervals;
  llvm::DenseMap<Value, size_t> indexOf;
  sg::SGDialect::ZeroedAttrHelper zeroedTag(entry.getContext());
  for (plan::AllocOp alloc : block.getOps<plan::AllocOp>()) {
    if (zeroedTag.isAttrPresent(alloc)) {
      zeroed.push_back(alloc);
      continue;
    }
    int64_t bytes = alignUp(alloc.getType().getBytes(entry.getMaxTokens()));
    indexOf[alloc.getResult()] = intervals.size();
    intervals.push_back(Interval{alloc, numSteps, -1, bytes});
  }
  int64_t step = 0;
  for (plan::StepOpInterface call : block.getOps<plan::StepOpInterface>()) {
    for (Value v : call->getOperands())
      if (auto it = indexOf.find(v); it != indexOf.end()) {
        Interval &interval = intervals[it->second];
        interval.begin = std::min(interval.begin, step);
        interval.end = std::max(interval.end, step);
      }
    ++step;
  }
  auto ret = cast<plan::ReturnOp>(block.getTerminator());
  for (Value returned : {ret.getLogits(), ret.getArgmax()})
    if (auto it = indexOf.find(returned); it != indexOf.end())
      intervals[it->second].end = numSteps;

  SmallVector<size_t> order(intervals.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::stable_sort(order, [&](size_t x, size_t y) {
    return intervals[x].begin < intervals[y].begin;
  });
  int64_t total = 0;
  SmallVector<size_t> placed;
  for (size_t i : order) {
    Interval &cur = intervals[i];
    int64_t offset = 0;
    bool moved = true;
    while (moved) {
      moved = false;
      for (size_t j : placed) {
        const Interval &other = intervals[j];
        bool liveTogether = cur.begin <= other.end && other.begin <= cur.end;
        bool overlap = offset < other.offset + other.bytes &&
                       other.offset < offset + cur.bytes;
        if (liveTogether && overlap) {
          offset = other.offset + other.bytes;
          moved = true;
        }
      }
    }
    cur.offset = offset;
    total = std::max(total, offset + cur.bytes);
    placed.push_back(i);
  }
  Builder b(entry.getContext());
  for (Interval &interval : intervals)
    interval.alloc.setOffsetAttr(b.getI64IntegerAttr(interval.offset));
  entry.setWorkspaceAttr(b.getI64IntegerAttr(total));
}

struct PlanMemoryPass : public sgc::impl::PlanMemoryPassBase<PlanMemoryPass> {
  void runOnOperation() override {
    SmallVector<plan::AllocOp> zeroed;
    int64_t zeroedBase = 0;
    for (auto entry : getOperation().getOps<plan::EntryOp>()) {
      planEntry(entry, zeroed);
      zeroedBase = std::max(zeroedBase, alignUp(*entry.getWorkspace()));
    }
    if (zeroed.empty())
      return;
    // One offset for all: launches run one after another and leave it zero.
    Builder b(&getContext());
    int64_t bytes = 0;
    for (plan::AllocOp alloc : zeroed) {
      alloc.setOffsetAttr(b.getI64IntegerAttr(zeroedBase));
      bytes = std::max(bytes, alignUp(alloc.getType().getBytes(1)));
    }
    for (auto entry : getOperation().getOps<plan::EntryOp>())
      entry.setWorkspaceAttr(b.getI64IntegerAttr(zeroedBase + bytes));
  }
};

} // namespace
