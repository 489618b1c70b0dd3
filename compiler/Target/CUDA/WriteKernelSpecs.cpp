//===- WriteKernelSpecs.cpp - the kernels' specs as JSON ------------------===//
//
// Part of sgc. Declared in compiler/Target/Passes.td, which says why.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

namespace mlir::sgc {
#define GEN_PASS_DEF_WRITEKERNELSPECSPASS
#include "compiler/Target/Passes.h.inc"
} // namespace mlir::sgc

using namespace mlir;

namespace {

/// `attr` as JSON; what has no JSON form (a type, a location) as its text.
nlohmann::json toJson(Attribute attr) {
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    nlohmann::json out = nlohmann::json::object();
    for (NamedAttribute entry : dict)
      out[entry.getName().str()] = toJson(entry.getValue());
    return out;
  }
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    nlohmann::json out = nlohmann::json::array();
    for (Attribute element : array)
      out.push_back(toJson(element));
    return out;
  }
  if (auto ints = dyn_cast<DenseI64ArrayAttr>(attr))
    return nlohmann::json(ints.asArrayRef().vec());
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getType().isUnsignedInteger() ? nlohmann::json(i.getUInt())
                                           : nlohmann::json(i.getInt());
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.str();
  if (isa<UnitAttr>(attr))
    return true;
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

struct WriteKernelSpecsPass
    : public sgc::impl::WriteKernelSpecsPassBase<WriteKernelSpecsPass> {
  using WriteKernelSpecsPassBase::WriteKernelSpecsPassBase;

  void runOnOperation() override {
    nlohmann::json kernels = nlohmann::json::array();
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (Attribute spec = func->getAttr("sg.kernel_spec"))
        kernels.push_back(
            {{"name", func.getName().str()}, {"spec", toJson(spec)}});
    });
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      // No op attached: the module would be printed with the error.
      mlir::emitError(UnknownLoc::get(&getContext()))
          << "cannot write the kernel specs to '" << file
          << "': " << ec.message();
      return signalPassFailure();
    }
    os << nlohmann::json{{"kernels", kernels}}.dump(1) << "\n";
    markAllAnalysesPreserved();
  }
};

} // namespace
