/*
 * image_handle.h - the C API's sgc_image_t (sgc/runtime.h): a preprocessed
 * image's tensors, made by sgc_image_load (image_api.cc) or read back by
 * sgc_image_load_tensors (pixel_file.cc).
 */
#ifndef SGC_RUNTIME_IMAGE_IMAGE_HANDLE_H
#define SGC_RUNTIME_IMAGE_IMAGE_HANDLE_H

#include <sgc/runtime.h>

#include <cstdint>
#include <vector>

struct sgc_image_t {
  sgc_image_family_t family = SGC_IMAGE_FAMILY_GEMMA3;
  int32_t source_width = 0, source_height = 0, width = 0, height = 0;
  int64_t soft_tokens = 0;
  std::vector<float> pixels;
  std::vector<int64_t> positions;
  int64_t soft_tokens_tensor[1] = {0};
  struct tensor {
    const char *name;
    sgc_dtype_t dtype;
    std::vector<int64_t> shape;
    const void *data;
  };
  std::vector<tensor> tensors;
};

#endif // SGC_RUNTIME_IMAGE_IMAGE_HANDLE_H
