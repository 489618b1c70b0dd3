// llama_logits.cc - reference (b) of design/QUANT.md §5: llama.cpp's own
// logits on a GGUF file, for the GGUF goldens (gen_gguf.py builds and runs
// it against the llama.cpp tree of bench/llamacpp/setup.sh).
//
//   llama_logits MODEL.gguf PROMPT_IDS FED_IDS OUT.f32
//
// PROMPT_IDS and FED_IDS are comma-separated token ids. The prompt is one
// llama_decode call with logits for every position; then each fed id is one
// single-token llama_decode (as a decode step, which is where llama.cpp
// uses its vector kernels), its logits kept. OUT.f32 is every row in order,
// little-endian f32, (prompt + fed) x vocabulary. llama.cpp's defaults
// otherwise (its f16 KV cache among them): the logits a llama.cpp user gets.
#include "llama.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<llama_token> parse_ids(const char *text) {
  std::vector<llama_token> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty())
      ids.push_back(static_cast<llama_token>(std::stol(item)));
  return ids;
}

int fail(const char *what) {
  std::fprintf(stderr, "llama_logits: %s\n", what);
  return 1;
}

// Decodes |tokens| from position |pos| on, every position an output.
bool decode(llama_context *ctx, const std::vector<llama_token> &tokens,
            int pos) {
  llama_batch batch = llama_batch_init(static_cast<int32_t>(tokens.size()), 0, 1);
  for (size_t i = 0; i < tokens.size(); ++i) {
    batch.token[i] = tokens[i];
    batch.pos[i] = pos + static_cast<int>(i);
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = 1;
  }
  batch.n_tokens = static_cast<int32_t>(tokens.size());
  const bool ok = llama_decode(ctx, batch) == 0;
  llama_batch_free(batch);
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 5)
    return fail("usage: llama_logits MODEL.gguf PROMPT_IDS FED_IDS OUT.f32");
  const std::vector<llama_token> prompt = parse_ids(argv[2]);
  const std::vector<llama_token> fed = parse_ids(argv[3]);
  if (prompt.empty())
    return fail("no prompt ids");

  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  llama_model *model = llama_model_load_from_file(argv[1], mp);
  if (!model)
    return fail("cannot load the model");
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = static_cast<uint32_t>(prompt.size() + fed.size() + 16);
  cp.n_batch = cp.n_ubatch = static_cast<uint32_t>(prompt.size());
  cp.n_threads = cp.n_threads_batch = 2;
  llama_context *ctx = llama_init_from_model(model, cp);
  if (!ctx)
    return fail("cannot make a context");
  const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

  std::vector<float> rows;
  auto keep = [&](int count) {
    for (int i = 0; i < count; ++i) {
      const float *l = llama_get_logits_ith(ctx, i);
      rows.insert(rows.end(), l, l + vocab);
    }
  };
  if (!decode(ctx, prompt, 0))
    return fail("llama_decode failed on the prompt");
  keep(static_cast<int>(prompt.size()));
  for (size_t i = 0; i < fed.size(); ++i) {
    if (!decode(ctx, {fed[i]}, static_cast<int>(prompt.size() + i)))
      return fail("llama_decode failed on a fed id");
    keep(1);
  }

  FILE *out = std::fopen(argv[4], "wb");
  if (!out || std::fwrite(rows.data(), sizeof(float), rows.size(), out) != rows.size() ||
      std::fclose(out) != 0)
    return fail("cannot write the logits");
  std::printf("%zu rows of %d\n", rows.size() / vocab, vocab);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
