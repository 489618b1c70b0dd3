/*
 * post_processor.h - what encode adds with add_special_tokens: the ids
 * before and after the sequence. From tokenizer.json's TemplateProcessing
 * ("single": special tokens around one $A), or built from
 * tokenizer_config.json's add_bos_token / add_eos_token, which take
 * precedence as in transformers. Other processor types are refused.
 */
#ifndef SGC_RUNTIME_TOKENIZER_POST_PROCESSOR_H
#define SGC_RUNTIME_TOKENIZER_POST_PROCESSOR_H

#include "runtime/src/tokenizer/json_cursor.h"

#include <cstdint>
#include <vector>

namespace sgc::runtime {

struct post_processor {
  std::vector<int32_t> prefix, suffix;

  /// Reads $.post_processor (null: nothing added).
  static status parse(const json_cursor &c, post_processor *out);
};

} // namespace sgc::runtime

#endif // SGC_RUNTIME_TOKENIZER_POST_PROCESSOR_H
