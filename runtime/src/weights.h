/*
 * weights.h - binding a checkpoint (or dummy values) to a model's manifest.
 */
#ifndef SGC_RUNTIME_SRC_WEIGHTS_H
#define SGC_RUNTIME_SRC_WEIGHTS_H

#include "runtime/src/memory.h"
#include "runtime/src/model.h"
#include "runtime/src/weight_source.h"

#include <sgc/runtime.h>

#include <memory>
#include <string>
#include <vector>

namespace sgc {
namespace runtime {

class bound_weights {
public:
  /// See sgc_weights_bind.
  static status bind(std::shared_ptr<model_library> model, const char *path,
                     const sgc_weights_options_t &options,
                     std::shared_ptr<bound_weights> *out);

  const std::shared_ptr<model_library> &model() const { return model_; }
  /// One pointer per manifest tensor, manifest order.
  const std::vector<const void *> &pointers() const { return pointers_; }
  /// The checkpoint name each manifest tensor was found under.
  const std::vector<std::string> &source_names() const { return sources_; }
  sgc_load_format_t format() const { return format_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t copied_bytes() const { return copied_; }
  /// Never AUTO.
  sgc_weights_placement_t placement() const { return placement_; }

private:
  /// What |requested| means for this model and checkpoint (bytes_ set).
  status choose_placement(int requested,
                          sgc_weights_placement_t *out) const;
  status bind_checkpoint(const std::string &path,
                         const sgc_weights_options_t &options);
  status bind_dummy(const sgc_weights_options_t &options);

  std::shared_ptr<model_library> model_;
  std::unique_ptr<weight_source> source_;
  anon_memory owned_;
  std::vector<const void *> pointers_;
  std::vector<std::string> sources_;
  sgc_load_format_t format_ = SGC_LOAD_FORMAT_SAFETENSORS;
  uint64_t bytes_ = 0;
  uint64_t copied_ = 0;
  sgc_weights_placement_t placement_ = SGC_WEIGHTS_MAP;
};

/// See sgc_model_write_dummy_weights.
status write_dummy_weights(const model_library &model, const std::string &path,
                           const sgc_weights_options_t &options);

} // namespace runtime
} // namespace sgc

#endif // SGC_RUNTIME_SRC_WEIGHTS_H
