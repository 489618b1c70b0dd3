//===- GgufMetadata.h - a GGUF's metadata as a model's hyper-parameters --===//
//
// Part of sgc. Typed, bounded reads of one file's `<arch>.*` keys, every
// error naming the file and the key; and what each architecture's reader
// makes of them: the HF config the file means (the schema-6 graph is built
// from it as from any config.json) and what llama.cpp's loader assumes
// where the file is silent (the completions `sgc explain` lists).
//
//===----------------------------------------------------------------------===//

#ifndef SGC_COMPILER_IMPORT_GGUF_GGUFMETADATA_H
#define SGC_COMPILER_IMPORT_GGUF_GGUFMETADATA_H

#include "compiler/Import/GraphSpec.h"
#include "lib/gguf/gguf.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mlir::sgc::gguf_import {

class Metadata {
public:
  Metadata(MLIRContext *ctx, StringRef path, const ::sgc::gguf::file &file)
      : ctx(ctx), path(path), file(file), h(file.hdr()) {}

  /// An error that starts with the file's name.
  InFlightDiagnostic error();

  /// An integer key in [lo, hi]; `fallback` when absent (else an error).
  FailureOr<int64_t> integer(const std::string &key, int64_t lo, int64_t hi,
                             std::optional<int64_t> fallback = {});
  /// A positive finite number; `fallback` when absent.
  FailureOr<double> number(const std::string &key,
                           std::optional<double> fallback = {});
  /// A string key, or nothing when absent or not a string.
  std::optional<std::string> string(const std::string &key);
  /// A per-layer integer: one value for every layer, or an array of
  /// `layers` values, each in [lo, hi]; `fallback` when absent.
  FailureOr<std::vector<int64_t>>
  perLayer(const std::string &key, int64_t layers, int64_t lo, int64_t hi,
           std::optional<int64_t> fallback = {});
  /// A per-layer integer that must be the same on every layer.
  FailureOr<int64_t> uniform(const std::string &key, int64_t layers,
                             int64_t lo, int64_t hi,
                             std::optional<int64_t> fallback = {});
  /// An array of `layers` booleans.
  FailureOr<std::vector<bool>> flags(const std::string &key, int64_t layers);

  MLIRContext *ctx;
  StringRef path;
  const ::sgc::gguf::file &file;
  const ::sgc::gguf::header &h;
};

/// What a file's metadata means.
struct ModelConfig {
  /// The HF text config (config.json's keys) the file's facts make.
  nlohmann::json config;
  /// What llama.cpp assumes where the file is silent.
  std::vector<import::Completion> completions;
  /// The converter stores every norm weight as 1 + w (Gemma 3).
  bool normsStoredPlusOne = false;
  /// "gemma-3" or "gemma-4": the artifact name's prefix.
  std::string artifactPrefix;
  /// Tensors of the file that are facts, not weights, checked already
  /// (Gemma 4's rope_freqs.weight).
  std::set<std::string> factTensors;
};

FailureOr<ModelConfig> gemma3Config(Metadata &m);
FailureOr<ModelConfig> gemma4Config(Metadata &m);

} // namespace mlir::sgc::gguf_import

#endif // SGC_COMPILER_IMPORT_GGUF_GGUFMETADATA_H
