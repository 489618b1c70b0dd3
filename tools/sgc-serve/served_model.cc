// served_model.cc - loading the model and reading the checkpoint's files.
#include "tools/sgc-serve/served_model.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace sgc::serve {

std::string describe(sgc_status_t *st, int *code) {
  std::string text = sgc_status_message(st);
  for (size_t i = 0; i < sgc_status_note_count(st); ++i)
    text += std::string("; ") + sgc_status_note(st, i);
  if (code)
    *code = static_cast<int>(sgc_status_code(st));
  sgc_status_free(st);
  return text;
}

served_model::~served_model() {
  sgc_session_release(session_);
  sgc_weights_release(weights_);
  sgc_model_release(model_);
  sgc_tokenizer_release(tokenizer_);
}

bool served_model::is_stop(int32_t token) const {
  return std::find(all_stops_.begin(), all_stops_.end(), token) !=
         all_stops_.end();
}

namespace {

std::string file_stem(const std::string &path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0)
    name.resize(name.size() - 3);
  return name;
}

void add_unique(std::vector<int32_t> &ids, int32_t id) {
  if (id >= 0 && std::find(ids.begin(), ids.end(), id) == ids.end())
    ids.push_back(id);
}

} // namespace

int served_model::load(const options &o, std::string *error) {
  int code = SGC_STATUS_BAD_INPUT;
  const auto fail = [&](sgc_status_t *st, const std::string &what) {
    *error = what + ": " + describe(st, &code);
    return code;
  };
  if (sgc_status_t *st = sgc_model_open(o.model_path.c_str(), &model_))
    return fail(st, o.model_path);
  sgc_model_info_t info;
  sgc_model_get_info(model_, &info);
  id_ = o.alias.empty() ? file_stem(o.model_path) : o.alias;
  has_vision_ = sgc_model_image_info(model_, &vision_) != 0;
  max_image_pixels_ = o.max_image_pixels;

  sgc_weights_options_t wo;
  sgc_weights_options_default(&wo);
  wo.populate = 1;
  if (sgc_status_t *st =
          sgc_weights_bind(model_, o.weights_path.c_str(), &wo, &weights_))
    return fail(st, o.weights_path);

  sgc_session_options_t so;
  sgc_session_options_default(&so);
  so.num_threads = o.threads;
  so.max_context = o.max_context;
  so.num_sequences = o.parallel;
  if (sgc_status_t *st = sgc_session_create(model_, weights_, &so, &session_))
    return fail(st, o.model_path);
  context_ = sgc_session_context(session_);
  slots_ = sgc_session_num_sequences(session_);

  // The checkpoint's files: tokenizer, chat template, generation config;
  // a GGUF file holds the first two itself and has no third.
  const bool gguf = sgc_weights_is_gguf(o.weights_path.c_str());
  std::unique_ptr<char, decltype(&std::free)> dir(
      gguf ? nullptr : sgc_weights_directory(o.weights_path.c_str()),
      &std::free);
  const std::string tokenizer_path = !o.tokenizer_path.empty() ? o.tokenizer_path
                                     : gguf ? o.weights_path
                                     : dir  ? dir.get()
                                            : "";
  if (o.tokenizer_path.empty() && !gguf &&
      (!dir || !sgc_dir_has_tokenizer(dir.get()))) {
    *error = o.weights_path + ": no tokenizer.json or tokenizer.model next to "
                              "the weights (give --tokenizer PATH)";
    return SGC_STATUS_USAGE;
  }
  if (sgc_status_t *st =
          sgc_tokenizer_open(tokenizer_path.c_str(), &tokenizer_))
    return fail(st, tokenizer_path);

  char message[512] = {0};
  char *template_text = nullptr;
  const char *source = nullptr;
  if (gguf ? sgc_read_gguf_chat_template(o.weights_path.c_str(),
                                         &template_text, message,
                                         sizeof message)
           : dir && sgc_read_chat_template(dir.get(), &template_text, &source,
                                           message, sizeof message)) {
    *error = message;
    return SGC_STATUS_BAD_INPUT;
  }
  format_ = template_text ? sgc_chat_format_of_template(template_text)
                          : sgc_chat_format_for_family(info.family);
  std::free(template_text);
  if (format_ != SGC_CHAT_NONE) {
    const int32_t bos = sgc_tokenizer_bos_id(tokenizer_);
    const char *piece = bos >= 0 ? sgc_tokenizer_piece(tokenizer_, bos) : "";
    bos_text_ = piece ? piece : "";
  }

  sgc_generation_config_t gc;
  std::memset(&gc, 0, sizeof gc);
  if (dir && sgc_read_generation_config(dir.get(), &gc, message,
                                        sizeof message)) {
    *error = message;
    return SGC_STATUS_BAD_INPUT;
  }
  // The checkpoint's sampling when it asks to sample; OpenAI's otherwise
  // (temperature 1), with its repetition penalty either way.
  sgc_config_sampling_t c;
  sgc_generation_config_sampling(&gc, &c);
  if (c.sample) {
    defaults_.temperature = c.temperature;
    defaults_.top_k = c.top_k;
    defaults_.top_p = c.top_p;
    defaults_.min_p = c.min_p;
  }
  defaults_.repetition_penalty = c.repetition_penalty;

  // What ends a turn: the model's eos and stop tokens (the runtime stops at
  // them itself), generation_config.json's eos ids and the chat format's
  // end of turn (passed as stop_tokens).
  for (size_t i = 0; i < gc.num_eos; ++i)
    add_unique(extra_stops_, gc.eos_ids[i]);
  if (format_ != SGC_CHAT_NONE)
    add_unique(extra_stops_, sgc_tokenizer_token_id(
                                 tokenizer_, sgc_chat_end_of_turn(format_)));
  sgc_generation_config_free(&gc);
  all_stops_ = extra_stops_;
  add_unique(all_stops_, info.eos_token_id);
  for (size_t i = 0; i < info.num_stop_tokens; ++i)
    add_unique(all_stops_, info.stop_tokens[i]);
  return 0;
}

} // namespace sgc::serve
