//===- QuantizeFp8.cpp - sgc quantize --type fp8 --------------------------===//
//
// Part of sgc. The graph of the folder says which tensors are the decoder
// layers' Linear weights (the `sgc compile HF_DIR` path); the checkpoint's
// other tensors are written as they are. Each quantized row is read twice
// from the mapping: once for its scale, once for its values.
//
//===----------------------------------------------------------------------===//

#include "compiler/Quantize/QuantizeFp8.h"

#include "compiler/Import/HF/HfImport.h"
#include "compiler/Import/Importer.h"
#include "compiler/Quantize/SourceRows.h"

#include "lib/safetensors/safetensors.h"
#include "lib/support/half.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::sgc;

namespace {

/// One quantized weight: its source and the row scales (bf16 values).
struct Fp8Weight {
  const ::sgc::safetensors::checkpoint::entry *source;
  int64_t rows, columns;
  std::vector<float> scales;

  const uint8_t *row(int64_t r) const {
    return source->shard->data(*source->info) +
           uint64_t(r) * uint64_t(columns) *
               ::sgc::dtype_size(source->info->type);
  }
  void computeScales() {
    scales.resize(size_t(rows));
    std::vector<float> x(static_cast<size_t>(columns));
    for (int64_t r = 0; r < rows; ++r) {
      widenToF32(source->info->type, row(r), x.size(), 0.0f, x.data());
      float amax = 0;
      for (float v : x)
        amax = std::max(amax, std::fabs(v));
      // An all-zero row keeps a scale that divides (its values stay 0).
      float s = ::sgc::bf16_to_f32(::sgc::f32_to_bf16(amax / 448.0f));
      scales[size_t(r)] = s > 0 ? s : 1.0f;
    }
  }
  /// Bytes [offset, offset + n) of the e4m3 tensor.
  void values(uint64_t offset, uint8_t *dst, size_t n) const {
    std::vector<float> x(static_cast<size_t>(columns));
    for (uint64_t e = offset; e < offset + n;) {
      int64_t r = int64_t(e / uint64_t(columns));
      uint64_t c = e % uint64_t(columns);
      uint64_t take = std::min<uint64_t>(uint64_t(columns) - c, offset + n - e);
      widenToF32(source->info->type, row(r), x.size(), 0.0f, x.data());
      for (uint64_t i = 0; i < take; ++i)
        dst[e - offset + i] = ::sgc::f32_to_e4m3(x[c + i] / scales[size_t(r)]);
      e += take;
    }
  }
};

/// The config's quantization_config: compressed-tensors FP8, channel
/// scales, dynamic per-token activations (FP8_DYNAMIC).
nlohmann::json fp8Config(const std::vector<std::string> &ignore) {
  auto args = [](const char *strategy, bool dynamic) {
    return nlohmann::json{{"num_bits", 8},        {"type", "float"},
                          {"strategy", strategy}, {"symmetric", true},
                          {"dynamic", dynamic},   {"group_size", nullptr},
                          {"block_structure", nullptr},
                          {"actorder", nullptr},  {"observer", nullptr},
                          {"observer_kwargs", nlohmann::json::object()}};
  };
  nlohmann::json group = {{"targets", {"Linear"}},
                          {"weights", args("channel", false)},
                          {"input_activations", args("token", true)},
                          {"output_activations", nullptr},
                          {"format", "float-quantized"}};
  return {{"quant_method", "compressed-tensors"},
          {"format", "float-quantized"},
          {"config_groups", {{"group_0", group}}},
          {"ignore", ignore},
          {"kv_cache_scheme", nullptr},
          {"quantization_status", "compressed"},
          {"sparsity_config", nlohmann::json::object()},
          {"global_compression_ratio", nullptr}};
}

/// Copies the folder's files other than the config and the weights.
LogicalResult copyOtherFiles(MLIRContext *ctx, StringRef dir, StringRef to) {
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    if (it->type() != llvm::sys::fs::file_type::regular_file ||
        name == "config.json" || name.ends_with(".safetensors") ||
        name.ends_with(".safetensors.index.json"))
      continue;
    llvm::SmallString<256> target(to);
    llvm::sys::path::append(target, name);
    if (std::error_code copied = llvm::sys::fs::copy_file(it->path(), target))
      return emitError(UnknownLoc::get(ctx))
             << "cannot copy '" << it->path() << "': " << copied.message();
  }
  if (ec)
    return emitError(UnknownLoc::get(ctx))
           << "cannot list '" << dir << "': " << ec.message();
  return success();
}

} // namespace

LogicalResult mlir::sgc::quantizeHfToFp8(MLIRContext *ctx, StringRef dir,
                                         StringRef outDir,
                                         const QuantizeOptions &options,
                                         llvm::raw_ostream &log) {
  Location dirLoc = FileLineColLoc::get(ctx, dir, 0, 0);
  if (options.dummyWeights)
    return emitError(dirLoc) << "--dummy-weights writes GGUF files; for an "
                                "FP8 model without weights, sgc-run "
                                "--load-format=dummy";
  if (llvm::sys::fs::exists(outDir))
    return emitError(FileLineColLoc::get(ctx, outDir, 0, 0))
           << "'" << outDir << "' exists; --type fp8 writes a new folder";
  FailureOr<SourceFolder> source =
      readSourceFolder(ctx, dir, /*configOnly=*/false);
  if (failed(source))
    return failure();
  const HfDirectory &files = source->files;
  const import::GraphSpec *graph = &source->graph;

  std::unique_ptr<::sgc::safetensors::checkpoint> ckpt;
  Location tensorsLoc = FileLineColLoc::get(ctx, files.tensors, 0, 0);
  if (::sgc::status st =
          ::sgc::safetensors::checkpoint::open(files.tensors, &ckpt);
      !st.ok())
    return emitError(tensorsLoc) << st.message();
  // The decoder layers' Linear weights.
  std::map<std::string, Fp8Weight> weights;
  for (const import::TensorSpec &t : import::textTensors(graph->text)) {
    if (t.shape.size() != 2 ||
        !StringRef(t.name).starts_with(graph->text.layersPrefix + "."))
      continue;
    const auto *entry = ckpt->find(t.name);
    if (!entry)
      return emitError(tensorsLoc) << "tensor '" << t.name << "' is missing";
    ::sgc::dtype type = entry->info->type;
    if (type != ::sgc::dtype::bf16 && type != ::sgc::dtype::f16 &&
        type != ::sgc::dtype::f32)
      return emitError(tensorsLoc)
             << "tensor '" << t.name << "' is " << ::sgc::dtype_name(type)
             << ": sgc quantize reads bf16, f16 or f32 checkpoints";
    if (t.shape[1] % 32 != 0)
      return emitError(tensorsLoc)
             << "tensor '" << t.name << "' has rows of " << t.shape[1]
             << ", not a multiple of 32 (sgc reads FP8 rows in blocks of 32)";
    weights[t.name] = Fp8Weight{entry, t.shape[0], t.shape[1], {}};
  }
  // Every other matrix (the vision tower's, the embedding) is named in
  // `ignore`, so that a reader targeting every Linear leaves it alone; the
  // norms (no Linear modules) by one pattern, as the readers expect.
  std::vector<std::string> ignore = {"lm_head", "re:.*norm[0-9]*$"};
  std::vector<::sgc::safetensors::tensor_source> sources;
  for (const auto &e : ckpt->tensors()) {
    const std::string &name = e.info->name;
    auto w = weights.find(name);
    if (w == weights.end()) {
      if (e.info->shape.size() == 2 && StringRef(name).ends_with(".weight"))
        ignore.push_back(name.substr(0, name.size() - strlen(".weight")));
      sources.push_back({name, e.info->type, e.info->shape,
                         e.shard->data(*e.info), nullptr});
      continue;
    }
    Fp8Weight *fp8 = &w->second;
    sources.push_back({name, ::sgc::dtype::f8_e4m3, e.info->shape, nullptr,
                       [fp8](uint64_t offset, void *dst, size_t n) {
                         if (fp8->scales.empty())
                           fp8->computeScales();
                         fp8->values(offset, static_cast<uint8_t *>(dst), n);
                         return ::sgc::status();
                       }});
    std::string scaleName =
        name.substr(0, name.size() - strlen(".weight")) + ".weight_scale";
    sources.push_back({scaleName, ::sgc::dtype::bf16, {fp8->rows, 1}, nullptr,
                       [fp8](uint64_t offset, void *dst, size_t n) {
                         if (fp8->scales.empty())
                           fp8->computeScales();
                         auto *out = static_cast<uint8_t *>(dst);
                         for (size_t i = 0; i < n / 2; ++i) {
                           uint16_t h = ::sgc::f32_to_bf16(
                               fp8->scales[offset / 2 + i]);
                           std::memcpy(out + 2 * i, &h, 2);
                         }
                         return ::sgc::status();
                       }});
  }

  nlohmann::json config = nlohmann::json::parse(
      source->config->getBuffer().str(), nullptr, /*allow_exceptions=*/false);
  config["quantization_config"] = fp8Config(ignore);
  llvm::SmallString<256> tmp;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
          outDir + ".partial", tmp))
    return emitError(FileLineColLoc::get(ctx, outDir, 0, 0))
           << "cannot create a folder next to '" << outDir
           << "': " << ec.message();
  auto abandon = [&]() {
    llvm::sys::fs::remove_directories(tmp);
    return failure();
  };
  llvm::SmallString<256> modelPath(tmp), configPath(tmp);
  llvm::sys::path::append(modelPath, "model.safetensors");
  llvm::sys::path::append(configPath, "config.json");
  log << "quantizing " << weights.size() << " matrices to FP8 (e4m3, "
      << "channel scales)\n";
  if (::sgc::status st = ::sgc::safetensors::write(
          modelPath.str().str(), sources, {{"format", "pt"}});
      !st.ok()) {
    emitError(tensorsLoc) << st.message();
    return abandon();
  }
  std::error_code ec;
  llvm::raw_fd_ostream configOut(configPath, ec);
  if (!ec) {
    configOut << config.dump(2) << "\n";
    configOut.close();
    ec = configOut.error();
  }
  if (ec) {
    emitError(FileLineColLoc::get(ctx, configPath, 0, 0)) << ec.message();
    return abandon();
  }
  if (failed(copyOtherFiles(ctx, dir, tmp)))
    return abandon();
  if (std::error_code renamed = llvm::sys::fs::rename(tmp, outDir)) {
    emitError(FileLineColLoc::get(ctx, outDir, 0, 0))
        << "cannot rename '" << tmp << "': " << renamed.message();
    return abandon();
  }
  log << "wrote " << outDir << ": " << sources.size() << " tensors, "
      << weights.size() << " of them FP8 with their scales\n";
  return success();
}
