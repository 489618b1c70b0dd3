//===- QuantizeHf.cpp - sgc quantize: an HF checkpoint -> a GGUF ----------===//
//
// Part of sgc. The graph of the folder (the `sgc compile HF_DIR` path), the
// --weights recipe of the type (which tensor gets which encoding, as
// llama-quantize decides), the converter's metadata and vocabulary, then
// the tensors: each read from the checkpoint's mapping a chunk of rows at a
// time, widened to f32, shifted where the converter shifts, quantized by
// ggml's reference quantizers on every core and streamed to the file.
//
//===----------------------------------------------------------------------===//

#include "compiler/Quantize/QuantizeHf.h"

#include "compiler/Import/Gguf/GgufNames.h"
#include "compiler/Import/HF/HfImport.h"
#include "compiler/Import/Importer.h"
#include "compiler/Quantize/GgufModel.h"
#include "compiler/Quantize/GgufVocabulary.h"
#include "compiler/Quantize/SourceRows.h"

#include "lib/gguf/quantize.h"
#include "lib/gguf/writer.h"
#include "lib/safetensors/safetensors.h"
#include "lib/support/half.h"
#include "lib/support/mapped_file.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <thread>

using namespace mlir;
using namespace mlir::sgc;
using ::sgc::gguf::ggml_type;

namespace {

/// llama.cpp's llama_ftype of each --type (general.file_type).
uint32_t fileTypeOf(StringRef type) {
  return llvm::StringSwitch<uint32_t>(type)
      .Case("q4_0", 2)
      .Case("q8_0", 7)
      .Case("q4_k_m", 15)
      .Case("q6_k", 18)
      .Default(0);
}

/// "1.5 MB", "7.29 GB".
std::string formatBytes(uint64_t bytes) {
  return bytes >= 1000000000
             ? llvm::formatv("{0:F2} GB", bytes / 1e9).str()
             : llvm::formatv("{0:F1} MB", bytes / 1e6).str();
}

/// A progress line on a terminal, redrawn; elsewhere a line per tenth.
class Progress {
public:
  Progress(llvm::raw_ostream &os, uint64_t total) : os(os), total(total) {}

  void advance(uint64_t bytes, StringRef tensor) {
    done += bytes;
    unsigned permille = total ? unsigned(done * 1000 / total) : 1000;
    if (os.is_displayed()) {
      if (permille != shown)
        os << llvm::format("\r[%5.1f%%] ", permille / 10.0)
           << formatBytes(done) << " / " << formatBytes(total) << "  "
           << tensor << "\x1b[K";
      os.flush();
    } else if (shown == ~0u || permille / 100 != shown / 100) {
      os << llvm::format("[%3u%%] ", permille / 10) << formatBytes(done)
         << " / " << formatBytes(total) << "\n";
    }
    shown = permille;
  }
  void finish() {
    if (os.is_displayed())
      os << "\n";
  }

private:
  llvm::raw_ostream &os;
  uint64_t total, done = 0;
  unsigned shown = ~0u;
};

/// --dummy-weights: row `row` of tensor `t`, seeded by its name and row
/// (the same values whatever the threads): a sum of two uniforms (a
/// triangle on [-s, s)) with s = 0.035 for matrices (std 0.014), 0.05 for
/// the embedding, bf16-rounded as a checkpoint's; 1-D tensors (norm
/// weights, layer scalars) that much around 1 with s = 0.2, whether the
/// family stores 1 + w (Gemma 3: w) or the weight itself (Gemma 4: near 1,
/// or every norm would shrink the stream).
void dummyRow(const GgufTensor &t, int64_t row, float *x) {
  uint64_t state = llvm::xxh3_64bits(t.name) ^ (uint64_t(row) * 0x9E3779B97F4A7C15ull);
  auto next = [&state] { // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  float s = !t.matrix ? 0.2f : t.name == "token_embd.weight" ? 0.05f : 0.035f;
  for (int64_t i = 0; i < t.columns; ++i) {
    uint64_t r = next();
    float u = float(r >> 40) * 0x1p-24f + float((r >> 16) & 0xFFFFFF) * 0x1p-24f;
    float centre = t.matrix ? 0.0f : 1.0f - t.add;
    x[i] = ::sgc::bf16_to_f32(::sgc::f32_to_bf16(centre + s * (u - 1.0f))) + t.add;
  }
}

/// Quantizes `rows` rows of `t` from `src` (null: --dummy-weights' rows
/// from `firstRow` on) into `out` on `threads` threads, each taking a
/// contiguous share of the rows.
void quantizeChunk(const GgufTensor &t, ::sgc::dtype srcType,
                   const uint8_t *src, int64_t firstRow, int64_t rows,
                   uint8_t *out, unsigned threads) {
  const uint64_t srcRow = uint64_t(t.columns) * ::sgc::dtype_size(srcType);
  const uint64_t outRow = ::sgc::gguf::row_bytes(t.type, uint64_t(t.columns));
  auto work = [&](int64_t begin, int64_t end) {
    std::vector<float> x(size_t(end - begin) * size_t(t.columns));
    if (!src)
      for (int64_t r = begin; r < end; ++r)
        dummyRow(t, firstRow + r, x.data() + (r - begin) * t.columns);
    else
      widenToF32(srcType, src + begin * srcRow, x.size(), t.add, x.data());
    ::sgc::gguf::quantize_rows(t.type, x.data(), end - begin, t.columns,
                               out + begin * outRow);
  };
  unsigned n = unsigned(std::min<int64_t>(threads, rows));
  if (n <= 1)
    return work(0, rows);
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < n; ++i)
    pool.emplace_back(work, rows * i / n, rows * (i + 1) / n);
  for (std::thread &th : pool)
    th.join();
}

/// Opens the checkpoint `tensorsPath` and declares each planned tensor in
/// `out`, checking its source's dtype and shape; notes the checkpoint's
/// tensors the file leaves out. `sourceBytes`: the bytes the pass reads.
LogicalResult openSources(MLIRContext *ctx, StringRef tensorsPath,
                          const std::vector<GgufTensor> &plan,
                          ::sgc::gguf::writer &out,
                          std::unique_ptr<::sgc::safetensors::checkpoint> &ckpt,
                          uint64_t &sourceBytes, llvm::raw_ostream &log) {
  Location loc = FileLineColLoc::get(ctx, tensorsPath, 0, 0);
  if (::sgc::status st =
          ::sgc::safetensors::checkpoint::open(tensorsPath.str(), &ckpt);
      !st.ok())
    return emitError(loc) << st.message();
  llvm::StringSet<> used;
  for (const GgufTensor &t : plan) {
    if (t.source.empty()) { // made by the converter (Gemma 4's rope_freqs)
      out.add_tensor(t.name, t.type, {uint64_t(t.columns)});
      continue;
    }
    const auto *entry = ckpt->find(t.source);
    if (!entry)
      return emitError(loc) << "tensor '" << t.source << "' is missing (GGUF '"
                            << t.name << "')";
    ::sgc::dtype type = entry->info->type;
    if (type != ::sgc::dtype::bf16 && type != ::sgc::dtype::f16 &&
        type != ::sgc::dtype::f32)
      return emitError(loc) << "tensor '" << t.source << "' is "
                            << ::sgc::dtype_name(type)
                            << ": sgc quantize reads bf16, f16 or f32 "
                               "checkpoints";
    const std::vector<int64_t> &shape = entry->info->shape;
    int64_t rows = shape.size() == 2 ? shape[0] : 1;
    if (shape.back() != t.columns || rows < t.rows)
      return emitError(loc) << "tensor '" << t.source << "' has " << rows
                            << " rows of " << shape.back()
                            << " where the GGUF's '" << t.name << "' needs "
                            << t.rows << " of " << t.columns;
    std::vector<uint64_t> dims{uint64_t(t.columns)};
    if (t.matrix)
      dims.push_back(uint64_t(t.rows));
    out.add_tensor(t.name, t.type, dims);
    used.insert(t.source);
    sourceBytes +=
        uint64_t(t.rows) * uint64_t(t.columns) * ::sgc::dtype_size(type);
  }
  size_t leftOut = 0;
  std::string example;
  for (const auto &e : ckpt->tensors())
    if (!used.contains(e.info->name) && leftOut++ == 0)
      example = e.info->name;
  if (leftOut)
    log << "note: " << leftOut << " checkpoint tensor"
        << (leftOut == 1 ? " is" : "s are") << " left out (e.g. '" << example
        << "'): a GGUF holds the text model; llama.cpp keeps an image "
           "tower in a separate mmproj file\n";
  return success();
}

} // namespace

FailureOr<SourceFolder> mlir::sgc::readSourceFolder(MLIRContext *ctx,
                                                    StringRef dir,
                                                    bool configOnly) {
  Location dirLoc = FileLineColLoc::get(ctx, dir, 0, 0);
  SourceFolder out;
  out.files = findHfFiles(dir);
  auto config = llvm::MemoryBuffer::getFile(out.files.config);
  if (!config)
    return emitError(dirLoc) << "not an HF checkpoint folder: no readable "
                                "config.json";
  out.config = std::move(*config);
  if (out.files.tensors.empty() && !configOnly)
    return emitError(dirLoc) << "no model.safetensors or "
                                "model.safetensors.index.json";
  HfImportOptions hfOptions;
  hfOptions.tensorsPath = out.files.tensors;
  HfStorage storage;
  FailureOr<std::string> graphText = importHfConfig(
      ctx, out.files.config, out.config->getBuffer(), hfOptions, &storage);
  if (failed(graphText))
    return failure();
  if (!storage.encodings.empty())
    return emitError(dirLoc) << "the checkpoint is quantized already "
                                "(compressed-tensors, "
                             << storage.summary
                             << "); sgc quantize reads BF16 and F16 folders";
  FailureOr<import::GraphSpec> graph =
      parseSystemGraph(ctx, out.files.config, *graphText, ImportOptions());
  if (failed(graph))
    return failure();
  out.graph = std::move(*graph);
  return out;
}

LogicalResult mlir::sgc::quantizeHfCheckpoint(MLIRContext *ctx, StringRef dir,
                                              StringRef outPath,
                                              const QuantizeOptions &options,
                                              llvm::raw_ostream &log) {
  Location dirLoc = FileLineColLoc::get(ctx, dir, 0, 0);
  if (!fileTypeOf(options.type))
    return emitError(dirLoc) << "--type=" << options.type
                             << ": expected q8_0, q4_0, q4_k_m or q6_k";
  FailureOr<SourceFolder> source =
      readSourceFolder(ctx, dir, /*configOnly=*/options.dummyWeights);
  if (failed(source))
    return failure();
  const HfDirectory &files = source->files;
  import::GraphSpec *graph = &source->graph;
  if (failed(applyWeightsRecipe(ctx, *graph, options.type)))
    return failure();

  nlohmann::json config = nlohmann::json::parse(
      source->config->getBuffer().str(), nullptr, /*allow_exceptions=*/false);
  ::sgc::gguf::writer out;
  std::string name = llvm::sys::path::filename(
                         llvm::sys::path::remove_leading_dotslash(dir))
                         .str();
  // The vocabulary decides the embedding's rows; the keys go first.
  ::sgc::gguf::writer vocabKeys;
  bool gemma4 = graph->text.family == import::Family::Gemma4;
  bool placeholder =
      options.dummyWeights &&
      !llvm::sys::fs::exists(dir + "/tokenizer.model") &&
      !llvm::sys::fs::exists(dir + "/tokenizer.json");
  FailureOr<int64_t> vocab =
      placeholder ? writePlaceholderVocabulary(graph->text.vocabSize, vocabKeys)
      : gemma4    ? writeGemma4Vocabulary(ctx, dir, config, vocabKeys)
                  : writeGemma3Vocabulary(ctx, dir, config, vocabKeys);
  if (placeholder)
    log << "note: no tokenizer in '" << dir << "': a placeholder vocabulary of "
        << graph->text.vocabSize << " pieces (token ids only)\n";
  if (failed(vocab))
    return failure();
  std::vector<GgufTensor> plan = planTensors(*graph, *vocab);
  uint64_t params = 0;
  for (const GgufTensor &t : plan)
    params += uint64_t(t.rows) * uint64_t(t.columns);
  if (failed(writeModelMetadata(ctx, *graph, config, name, params, out)))
    return failure();
  for (const ::sgc::gguf::metadata_entry &e : vocabKeys.metadata())
    out.set(e.key, e.val);
  out.set_u32("general.quantization_version", 2);
  out.set_u32("general.file_type", fileTypeOf(options.type));

  std::unique_ptr<::sgc::safetensors::checkpoint> ckpt;
  uint64_t sourceBytes = 0;
  if (options.dummyWeights) {
    log << "note: --dummy-weights: seeded random values, no checkpoint read\n";
    for (const GgufTensor &t : plan) {
      std::vector<uint64_t> dims{uint64_t(t.columns)};
      if (t.matrix)
        dims.push_back(uint64_t(t.rows));
      out.add_tensor(t.name, t.type, dims);
      sourceBytes += uint64_t(t.rows) * uint64_t(t.columns) * 2;
    }
  } else if (failed(openSources(ctx, files.tensors, plan, out, ckpt,
                                sourceBytes, log))) {
    return failure();
  }

  unsigned threads = options.threads ? options.threads
                                     : std::max(1u, std::thread::hardware_concurrency());
  Progress progress(log, sourceBytes);
  std::vector<uint8_t> buffer;
  ::sgc::status written = out.write(
      outPath.str(), [&](size_t index, const ::sgc::gguf::writer::emit_fn &emit) {
        const GgufTensor &t = plan[index];
        if (t.source.empty())
          return emit(t.values.data(), t.values.size() * sizeof(float));
        const auto *entry = ckpt ? ckpt->find(t.source) : nullptr;
        ::sgc::dtype type = entry ? entry->info->type : ::sgc::dtype::bf16;
        const uint8_t *src = entry ? entry->shard->data(*entry->info) : nullptr;
        const uint64_t srcRow = uint64_t(t.columns) * ::sgc::dtype_size(type);
        const uint64_t outRow = ::sgc::gguf::row_bytes(t.type, uint64_t(t.columns));
        // About 16 MB of f32 a chunk.
        const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 22) / t.columns);
        for (int64_t r = 0; r < t.rows; r += chunk) {
          int64_t n = std::min(chunk, t.rows - r);
          buffer.resize(size_t(n) * outRow);
          quantizeChunk(t, type, src ? src + r * srcRow : nullptr, r, n,
                        buffer.data(), threads);
          // The source rows are done: a checkpoint bigger than memory never
          // stays resident.
          if (src)
            ::sgc::drop_pages(src + r * srcRow, uint64_t(n) * srcRow);
          if (::sgc::status st = emit(buffer.data(), buffer.size()); !st.ok())
            return st;
          progress.advance(uint64_t(n) * srcRow, t.name);
        }
        return ::sgc::status();
      });
  progress.finish();
  if (!written.ok())
    return emitError(FileLineColLoc::get(ctx, outPath, 0, 0))
           << written.message();
  log << "wrote " << outPath << ": " << plan.size() << " tensors, "
      << formatBytes(out.file_bytes()) << " (" << options.type << ")\n";
  return success();
}
