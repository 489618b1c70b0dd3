/*
 * runtime_test.cc - the runtime through its C API, with the hand-written
 * model of fake_model.c: opening models, binding checkpoints (every error
 * class), KV-cache sizing, exact logits against fake_model_reference.h,
 * dummy weights, devices; plus the thread pool and sampler internals.
 */
#include <sgc/abi.h>
#include <sgc/runtime.h>

#include "fake_model_reference.h"
#include "lib/safetensors/safetensors.h"
#include "runtime/src/cpu/heap_settings.h"
#include "runtime/src/cuda/cuda_driver.h"
#include "runtime/src/dummy.h"
#include "runtime/src/sampler.h"
#include "runtime/src/thread_pool.h"
#include "runtime/src/weights.h"
#include "test_util.h"

#include <gtest/gtest.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using sgc_test::temp_dir;
namespace st = sgc::safetensors;

namespace {

/// Owns a status for the duration of a check.
struct status_holder {
  sgc_status_t *s;
  explicit status_holder(sgc_status_t *status) : s(status) {}
  ~status_holder() { sgc_status_free(s); }
  sgc_status_code_t code() const { return sgc_status_code(s); }
  std::string message() const { return sgc_status_message(s); }
  std::string all() const {
    std::string out = message();
    for (size_t i = 0; i < sgc_status_note_count(s); ++i)
      out += std::string("\nnote: ") + sgc_status_note(s, i);
    return out;
  }
};

#define ASSERT_SGC_OK(expr)                                                    \
  do {                                                                         \
    status_holder h_(expr);                                                    \
    ASSERT_EQ(h_.code(), SGC_STATUS_OK) << h_.all();                           \
  } while (0)

struct model_deleter {
  void operator()(sgc_model_t *m) const { sgc_model_release(m); }
};
struct weights_deleter {
  void operator()(sgc_weights_t *w) const { sgc_weights_release(w); }
};
struct session_deleter {
  void operator()(sgc_session_t *s) const { sgc_session_release(s); }
};
using model_ptr = std::unique_ptr<sgc_model_t, model_deleter>;
using weights_ptr = std::unique_ptr<sgc_weights_t, weights_deleter>;
using session_ptr = std::unique_ptr<sgc_session_t, session_deleter>;

model_ptr open_fake_model() {
  sgc_model_t *m = nullptr;
  status_holder h(sgc_model_open(SGC_TEST_FAKE_MODEL, &m));
  EXPECT_EQ(h.code(), SGC_STATUS_OK) << h.all();
  return model_ptr(m);
}

/// Writes the fake model's checkpoint. Names and shapes can be changed to
/// build mismatching checkpoints; an empty name leaves the tensor out.
void write_checkpoint(const std::string &path, const fake_model::weights &w,
                      std::string embed = fake_model::embed_name,
                      std::string norm = fake_model::norm_name,
                      std::vector<int64_t> embed_shape = {16, 8}) {
  std::vector<st::tensor_source> src;
  if (!embed.empty()) {
    st::tensor_source e;
    e.name = embed;
    e.type = sgc::dtype::bf16;
    e.shape = embed_shape;
    uint64_t n = 1;
    for (int64_t d : embed_shape)
      n *= static_cast<uint64_t>(d);
    ASSERT_LE(n, w.embed.size());
    e.data = w.embed.data();
    src.push_back(e);
  }
  if (!norm.empty()) {
    st::tensor_source n;
    n.name = norm;
    n.type = sgc::dtype::f32;
    n.shape = {8};
    n.data = w.norm.data();
    src.push_back(n);
  }
  sgc::status s = st::write(path, src);
  ASSERT_TRUE(s.ok()) << s.to_string();
}

weights_ptr bind_weights(sgc_model_t *m, const std::string &path,
                         sgc_load_format_t format = SGC_LOAD_FORMAT_AUTO,
                         sgc_weights_placement_t placement = SGC_WEIGHTS_AUTO) {
  sgc_weights_options_t o;
  sgc_weights_options_default(&o);
  o.format = format;
  o.placement = placement;
  sgc_weights_t *w = nullptr;
  status_holder h(
      sgc_weights_bind(m, path.empty() ? nullptr : path.c_str(), &o, &w));
  EXPECT_EQ(h.code(), SGC_STATUS_OK) << h.all();
  return weights_ptr(w);
}

session_ptr make_session(sgc_model_t *m, sgc_weights_t *w, int threads = 2,
                         const char *variant = nullptr) {
  sgc_session_options_t o;
  sgc_session_options_default(&o);
  o.num_threads = threads;
  o.variant = variant;
  sgc_session_t *s = nullptr;
  status_holder h(sgc_session_create(m, w, &o, &s));
  EXPECT_EQ(h.code(), SGC_STATUS_OK) << h.all();
  return session_ptr(s);
}

/// What a generate call reported.
struct run_record {
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> prefill_rows;
  std::vector<int64_t> prefill_index;
  std::vector<std::vector<float>> decode_rows;
  int stop_after = -1; ///< on_token returns nonzero after this many tokens
};

int record_token(void *user, int32_t token) {
  auto *r = static_cast<run_record *>(user);
  r->tokens.push_back(token);
  return r->stop_after >= 0 &&
         static_cast<int>(r->tokens.size()) >= r->stop_after;
}

void record_logits(void *user, sgc_logits_kind_t kind, int64_t index,
                   const float *row, int64_t vocab) {
  auto *r = static_cast<run_record *>(user);
  std::vector<float> v(row, row + vocab);
  if (kind == SGC_LOGITS_PREFILL) {
    r->prefill_rows.push_back(v);
    r->prefill_index.push_back(index);
  } else {
    EXPECT_EQ(index, static_cast<int64_t>(r->decode_rows.size()));
    r->decode_rows.push_back(v);
  }
}

sgc_generate_options_t generate_options(run_record *r, int64_t max_new,
                                        int64_t chunk = 0, bool all = true) {
  sgc_generate_options_t o;
  sgc_generate_options_default(&o);
  o.max_new_tokens = max_new;
  o.prefill_chunk = chunk;
  o.prefill_all_logits = all ? 1 : 0;
  o.on_token = record_token;
  o.on_logits = record_logits;
  o.user = r;
  return o;
}

void expect_rows_equal(const std::vector<float> &got, const float *want) {
  ASSERT_EQ(got.size(), static_cast<size_t>(fake_model::vocab));
  for (int64_t v = 0; v < fake_model::vocab; ++v)
    ASSERT_EQ(got[v], want[v]) << "vocab entry " << v;
}

const std::vector<int32_t> prompt = {2, 5, 7, 9, 11, 3, 14, 6, 4, 13, 8};

} // namespace

//===----------------------------------------------------------------------===//
// Opening models
//===----------------------------------------------------------------------===//

TEST(ModelOpen, GoodModelInfo) {
  model_ptr m = open_fake_model();
  ASSERT_TRUE(m);
  sgc_model_info_t info;
  sgc_model_get_info(m.get(), &info);
  EXPECT_STREQ(info.model_id, "fake-gemma3-toy");
  EXPECT_STREQ(info.family, "gemma3");
  EXPECT_STREQ(info.target, "cpu");
  EXPECT_EQ(info.abi_major, 2u);
  EXPECT_EQ(info.vocab_size, 16);
  EXPECT_EQ(info.context_length, 64);
  EXPECT_EQ(info.max_prefill_chunk, 8);
  EXPECT_EQ(info.bos_token_id, 2);
  EXPECT_EQ(info.eos_token_id, 1);
  EXPECT_EQ(info.num_tensors, 2u);
  EXPECT_EQ(info.weight_bytes, 16u * 8 * 2 + 8 * 4);
  EXPECT_EQ(info.num_layers, 2u);
  EXPECT_EQ(info.kv_cache_bytes, fake_model::kv_bytes);
  EXPECT_EQ(info.num_variants, 2u);

  sgc_tensor_info_t t;
  ASSERT_TRUE(sgc_model_tensor(m.get(), 0, &t));
  EXPECT_STREQ(t.name, fake_model::embed_name);
  EXPECT_EQ(t.dtype, SGC_DTYPE_BF16);
  ASSERT_EQ(t.rank, 2u);
  EXPECT_EQ(t.shape[0], 16);
  EXPECT_STREQ(t.location, "target.embedding");
  ASSERT_TRUE(sgc_model_tensor(m.get(), 1, &t));
  EXPECT_EQ(t.fill, 2u); // zeros
  EXPECT_FALSE(sgc_model_tensor(m.get(), 2, &t));

  sgc_kv_layer_info_t l;
  ASSERT_TRUE(sgc_model_kv_layer(m.get(), 1, &l));
  EXPECT_EQ(l.kind, SGC_KV_RING);
  EXPECT_EQ(l.slots, 4);
  EXPECT_EQ(l.bytes, 4u * 8 * 4 * 2);
  ASSERT_TRUE(sgc_model_kv_layer(m.get(), 0, &l));
  EXPECT_EQ(l.kind, SGC_KV_FULL);
  EXPECT_EQ(l.slots, 64);

  sgc_variant_info_t v;
  ASSERT_TRUE(sgc_model_variant(m.get(), 1, &v));
  EXPECT_STREQ(v.name, "fake-generic");
  EXPECT_EQ(v.device, SGC_DEVICE_CPU);
  EXPECT_TRUE(v.supported);
  EXPECT_FALSE(sgc_model_variant(m.get(), 2, &v));
}

// A table as ABI 2.2 wrote it ends before the 2.3 image field: it opens, has
// no vision tower, and a session on it still encodes nothing.
TEST(ModelOpen, Abi22TableHasNoTower) {
  sgc_model_t *raw = nullptr;
  status_holder h(sgc_model_open(SGC_TEST_FAKE_MODEL_V22, &raw));
  ASSERT_EQ(h.s, nullptr) << h.all();
  model_ptr m(raw);
  sgc_model_image_info_t info;
  EXPECT_EQ(sgc_model_image_info(m.get(), &info), 0);
  model_ptr current = open_fake_model();
  ASSERT_TRUE(current);
  EXPECT_EQ(sgc_model_image_info(current.get(), &info), 0);
}

TEST(ModelOpen, Errors) {
  temp_dir dir;
  sgc_test::write_file(dir.file("text.so"), "this is not an ELF file\n");
  struct error_case {
    std::string path;
    sgc_status_code_t code;
    std::vector<std::string> parts;
  };
  const std::vector<error_case> cases = {
      {dir.file("absent.so"), SGC_STATUS_BAD_INPUT, {"no such file"}},
      {dir.path(), SGC_STATUS_BAD_INPUT, {"not a regular file"}},
      {dir.file("text.so"), SGC_STATUS_BAD_INPUT, {"not an sgc model"}},
      {SGC_TEST_NOT_A_MODEL,
       SGC_STATUS_BAD_INPUT,
       {"not an sgc model", "sgc_model_query"}},
      {SGC_TEST_FAKE_MODEL_BAD_MAGIC,
       SGC_STATUS_BAD_INPUT,
       {"not an sgc model", "magic 0xDEADBEEF"}},
      {SGC_TEST_FAKE_MODEL_ABI3,
       SGC_STATUS_MISMATCH,
       {"model ABI version 3.9", "runtime (ABI 2.9)", "newer sgc"}},
      {SGC_TEST_FAKE_MODEL_ABI1,
       SGC_STATUS_MISMATCH,
       {"model ABI version 1.9", "runtime (ABI 2.9)", "older sgc",
        "recompile"}},
      {SGC_TEST_FAKE_MODEL_NO_TABLE,
       SGC_STATUS_MISMATCH,
       {"no table for this runtime's ABI 2.9"}},
      {SGC_TEST_FAKE_MODEL_BAD_PLAN,
       SGC_STATUS_BAD_INPUT,
       {"invalid model table", "step 0: operand 9",
        "outside the workspace of 576 bytes"}},
      {SGC_TEST_FAKE_MODEL_BAD_TABLE,
       SGC_STATUS_BAD_INPUT,
       {"invalid model table", "embed_tokens", "bytes is 258"}},
      {SGC_TEST_FAKE_MODEL_IMAGE_NO_PHASE,
       SGC_STATUS_BAD_INPUT,
       {"invalid model table",
        "an image record but no encode_image phase"}},
      {SGC_TEST_FAKE_MODEL_ARGMAX_F32,
       SGC_STATUS_BAD_INPUT,
       {"invalid model table", "phase 0: the argmax must be a [1] I32 "
                               "workspace buffer"}},
      {SGC_TEST_FAKE_MODEL_ARGMAX_OUTSIDE,
       SGC_STATUS_BAD_INPUT,
       {"invalid model table", "phase 0: argmax: ",
        "outside the workspace of 576 bytes"}},
  };
  for (const error_case &c : cases) {
    SCOPED_TRACE(c.path);
    sgc_model_t *m = nullptr;
    status_holder h(sgc_model_open(c.path.c_str(), &m));
    EXPECT_EQ(m, nullptr);
    EXPECT_EQ(h.code(), c.code) << h.all();
    EXPECT_NE(h.message().find(c.path), std::string::npos) << h.all();
    for (const std::string &p : c.parts)
      EXPECT_NE(h.all().find(p), std::string::npos)
          << "no '" << p << "' in " << h.all();
  }
}

//===----------------------------------------------------------------------===//
// Binding and running
//===----------------------------------------------------------------------===//

TEST(Run, ExactLogitsForEveryChunkSize) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights();
  write_checkpoint(dir.file("model.safetensors"), w);
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.path());
  ASSERT_TRUE(wt);
  EXPECT_EQ(sgc_weights_format(wt.get()), SGC_LOAD_FORMAT_SAFETENSORS);
  EXPECT_EQ(sgc_weights_copied_bytes(wt.get()), 0u); // zero copy
  session_ptr s = make_session(m.get(), wt.get());
  ASSERT_TRUE(s);
  EXPECT_EQ(sgc_session_kv_cache_bytes(s.get()), fake_model::kv_bytes);
  EXPECT_EQ(sgc_session_workspace_bytes(s.get()), 64u + 8 * 16 * 4);

  const int64_t max_new = 6;
  const std::vector<int32_t> expected =
      fake_model::greedy(w, prompt, max_new, /*ignore_eos=*/true);
  std::vector<int32_t> all_tokens = prompt;
  all_tokens.insert(all_tokens.end(), expected.begin(), expected.end() - 1);
  const std::vector<float> ref = fake_model::logits(w, all_tokens);

  for (int64_t chunk : {1, 2, 3, 5, 8}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    run_record r;
    sgc_generate_options_t o = generate_options(&r, max_new, chunk);
    o.ignore_eos = 1;
    int64_t generated = 0;
    ASSERT_SGC_OK(sgc_session_generate(s.get(), prompt.data(),
                                       static_cast<int64_t>(prompt.size()), &o,
                                       &generated));
    EXPECT_EQ(generated, max_new);
    EXPECT_EQ(r.tokens, expected);
    ASSERT_EQ(r.prefill_rows.size(), prompt.size());
    for (size_t p = 0; p < prompt.size(); ++p) {
      EXPECT_EQ(r.prefill_index[p], static_cast<int64_t>(p));
      expect_rows_equal(r.prefill_rows[p], ref.data() + p * 16);
    }
    ASSERT_EQ(r.decode_rows.size(), static_cast<size_t>(max_new - 1));
    for (size_t i = 0; i < r.decode_rows.size(); ++i)
      expect_rows_equal(r.decode_rows[i],
                        ref.data() + (prompt.size() + i) * 16);
  }

  // Only the last prompt row when all positions are not requested.
  run_record last;
  sgc_generate_options_t o = generate_options(&last, 1, 3, /*all=*/false);
  o.ignore_eos = 1;
  ASSERT_SGC_OK(sgc_session_generate(s.get(), prompt.data(),
                                     static_cast<int64_t>(prompt.size()), &o,
                                     nullptr));
  ASSERT_EQ(last.prefill_rows.size(), 1u);
  EXPECT_EQ(last.prefill_index[0], static_cast<int64_t>(prompt.size() - 1));
  expect_rows_equal(last.prefill_rows[0],
                    ref.data() + (prompt.size() - 1) * 16);
}

TEST(Run, LowLevelPrefillAndDecode) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights(3);
  write_checkpoint(dir.file("m.safetensors"), w);
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  session_ptr s = make_session(m.get(), wt.get(), 1);
  const std::vector<float> ref = fake_model::logits(w, {4, 9, 12});
  float logits[16 * 2];
  const int32_t two[2] = {4, 9};
  ASSERT_SGC_OK(sgc_session_prefill(s.get(), two, 2, 0, logits, 1));
  for (int v = 0; v < 32; ++v)
    ASSERT_EQ(logits[v], ref[v]);
  ASSERT_SGC_OK(sgc_session_decode(s.get(), 12, 2, logits));
  for (int v = 0; v < 16; ++v)
    ASSERT_EQ(logits[v], ref[32 + v]);

  status_holder bad_token(sgc_session_decode(s.get(), 16, 3, logits));
  EXPECT_EQ(bad_token.code(), SGC_STATUS_USAGE);
  status_holder bad_pos(sgc_session_decode(s.get(), 1, 64, logits));
  EXPECT_EQ(bad_pos.code(), SGC_STATUS_USAGE);
  int32_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  status_holder too_long(sgc_session_prefill(s.get(), nine, 9, 0, logits, 0));
  EXPECT_EQ(too_long.code(), SGC_STATUS_USAGE);
  status_holder past_end(sgc_session_prefill(s.get(), nine, 2, 63, logits, 0));
  EXPECT_EQ(past_end.code(), SGC_STATUS_USAGE);
}

// A CPU session makes glibc keep blocks up to heap_block_limit in its heap:
// a compiled body's per-call temporaries then cost no new mmap and page
// faults per call.
TEST(Run, CpuSessionKeepsBlocksInTheHeap) {
#if !defined(__GLIBC__) || defined(__SANITIZE_ADDRESS__) ||                     \
    defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "glibc's own malloc only";
#else
  const size_t size = 8 << 20; // over glibc's default mmap threshold
  static_assert(size <= sgc::runtime::heap_block_limit);
  // Written through volatile: an unused malloc/free pair may be elided.
  auto touch = [](void *p) { static_cast<volatile char *>(p)[0] = 1; };
  // Not freed until the end: freeing an mmapped block raises glibc's
  // dynamic threshold by itself.
  void *first = malloc(size);
  touch(first);
  const size_t mapped = mallinfo2().hblks;
  if (mapped == 0) {
    free(first);
    GTEST_SKIP() << "8 MiB blocks come from the heap already (a session "
                    "earlier in this process; ctest runs this test alone)";
  }

  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights(3);
  write_checkpoint(dir.file("m.safetensors"), w);
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  session_ptr s = make_session(m.get(), wt.get(), 1);
  void *second = malloc(size);
  touch(second);
  EXPECT_EQ(mallinfo2().hblks, mapped) << "the block after the session was mmapped";
  free(second);
  free(first);
#endif
}

TEST(Run, ThreadCountsAgree) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights(7);
  write_checkpoint(dir.file("m.safetensors"), w);
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  std::vector<std::vector<float>> firsts;
  for (int threads : {1, 2, 3, 5}) {
    session_ptr s = make_session(m.get(), wt.get(), threads);
    EXPECT_EQ(sgc_session_num_threads(s.get()), threads);
    run_record r;
    sgc_generate_options_t o = generate_options(&r, 4);
    o.ignore_eos = 1;
    ASSERT_SGC_OK(sgc_session_generate(s.get(), prompt.data(), 5, &o, nullptr));
    firsts.push_back(r.prefill_rows[4]);
  }
  for (const auto &f : firsts)
    EXPECT_EQ(f, firsts[0]);
}

TEST(Run, StopsAndFeeds) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights();
  write_checkpoint(dir.file("m.safetensors"), w);
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  session_ptr s = make_session(m.get(), wt.get());
  const std::vector<int32_t> free_run = fake_model::greedy(w, prompt, 5, true);

  // A user stop token ends generation after it is emitted.
  run_record r1;
  sgc_generate_options_t o = generate_options(&r1, 5);
  o.ignore_eos = 1;
  o.stop_tokens = &free_run[1];
  o.num_stop_tokens = 1;
  ASSERT_SGC_OK(sgc_session_generate(s.get(), prompt.data(),
                                     static_cast<int64_t>(prompt.size()), &o,
                                     nullptr));
  ASSERT_GE(r1.tokens.size(), 1u);
  EXPECT_EQ(r1.tokens.back(), free_run[1]);
  EXPECT_LE(r1.tokens.size(), 2u);

  // The callback can stop it too.
  run_record r2;
  r2.stop_after = 2;
  o = generate_options(&r2, 5);
  o.ignore_eos = 1;
  ASSERT_SGC_OK(sgc_session_generate(s.get(), prompt.data(),
                                     static_cast<int64_t>(prompt.size()), &o,
                                     nullptr));
  EXPECT_EQ(r2.tokens.size(), 2u);

  // Teacher forcing: decode steps see the fed tokens.
  const std::vector<int32_t> feed = {3, 3, 10};
  run_record r3;
  o = generate_options(&r3, 4);
  o.ignore_eos = 1;
  o.feed_tokens = feed.data();
  o.num_feed_tokens = feed.size();
  ASSERT_SGC_OK(sgc_session_generate(s.get(), prompt.data(),
                                     static_cast<int64_t>(prompt.size()), &o,
                                     nullptr));
  std::vector<int32_t> forced = prompt;
  forced.insert(forced.end(), feed.begin(), feed.end());
  const std::vector<float> ref = fake_model::logits(w, forced);
  ASSERT_EQ(r3.decode_rows.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    expect_rows_equal(r3.decode_rows[i], ref.data() + (prompt.size() + i) * 16);
    EXPECT_EQ(r3.tokens[i + 1],
              fake_model::argmax(ref.data() + (prompt.size() + i) * 16));
  }
}

namespace {

/// Weights whose greedy run from the prompt {2, 3} is exactly {4, stop_id}
/// on every machine: a hand-built embedding with margins of 0.5 and more,
/// in place of searching seeds (a search can come up empty and skip).
/// Row 2 is e0, row 3 is 0.5*e1, row 4 is e0 + e1 + e2, row stop_id is
/// 8*e2, the rest zero. After the prompt only e0/e1 are lit, so token 4
/// scores 1.38 against 0.88 (token 2) and stop_id's 0.01; once 4 is fed,
/// e2 lights up and stop_id scores 9.0 against 4.4 (token 4).
fake_model::weights stops_after_two(int32_t stop_id) {
  const auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return static_cast<uint16_t>(u >> 16); // these values are exact in bf16
  };
  fake_model::weights w = fake_model::make_weights();
  std::fill(w.embed.begin(), w.embed.end(), bits(0.0f));
  const auto set = [&](int32_t token, int64_t d, float v) {
    w.embed[static_cast<size_t>(token * fake_model::hidden + d)] = bits(v);
  };
  set(2, 0, 1.0f);
  set(3, 1, 0.5f);
  set(4, 0, 1.0f);
  set(4, 1, 1.0f);
  set(4, 2, 1.0f);
  set(stop_id, 2, 8.0f);
  return w;
}

} // namespace

TEST(Run, ModelEosStops) {
  // The model's eos (1) and its stop token (15) each end generation right
  // after they are emitted, by a decode step, well within the budget.
  temp_dir dir;
  for (int32_t stop_id : {fake_model::eos, fake_model::stop}) {
    SCOPED_TRACE("stop token " + std::to_string(stop_id));
    const fake_model::weights w = stops_after_two(stop_id);
    const std::vector<int32_t> expected = {4, stop_id};
    ASSERT_EQ(fake_model::greedy(w, {2, 3}, 20), expected); // the fixture
    ASSERT_EQ(fake_model::greedy(w, {2, 3}, 20, true).size(), 20u);
    write_checkpoint(dir.file("m.safetensors"), w);
    model_ptr m = open_fake_model();
    weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
    session_ptr s = make_session(m.get(), wt.get());
    run_record r;
    sgc_generate_options_t o = generate_options(&r, 20);
    const int32_t p[2] = {2, 3};
    int64_t generated = 0;
    ASSERT_SGC_OK(sgc_session_generate(s.get(), p, 2, &o, &generated));
    EXPECT_EQ(r.tokens, expected);
    EXPECT_EQ(generated, 2);
    EXPECT_EQ(r.decode_rows.size(), 1u);
  }
}

TEST(Run, Sampling) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights();
  write_checkpoint(dir.file("m.safetensors"), w);
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  session_ptr s = make_session(m.get(), wt.get());
  auto run = [&](float temperature, int32_t top_k, float top_p, uint64_t seed) {
    run_record r;
    sgc_generate_options_t o = generate_options(&r, 8);
    o.ignore_eos = 1;
    o.temperature = temperature;
    o.top_k = top_k;
    o.top_p = top_p;
    o.seed = seed;
    status_holder h(
        sgc_session_generate(s.get(), prompt.data(), 4, &o, nullptr));
    EXPECT_EQ(h.code(), SGC_STATUS_OK) << h.all();
    return r.tokens;
  };
  const auto greedy = run(0.0f, 0, 1.0f, 0);
  EXPECT_EQ(run(1.0f, 1, 1.0f, 123), greedy); // top-k 1 is greedy
  EXPECT_EQ(run(1.0f, 0, 1e-6f, 5), greedy);  // tiny top-p is greedy
  EXPECT_EQ(run(2.0f, 0, 1.0f, 42), run(2.0f, 0, 1.0f, 42)); // reproducible
  bool differs = false;
  for (uint64_t seed = 0; seed < 20 && !differs; ++seed)
    differs = run(50.0f, 0, 1.0f, seed) != greedy;
  EXPECT_TRUE(differs) << "hot sampling never left the greedy path";
}

TEST(Run, UsageErrors) {
  temp_dir dir;
  write_checkpoint(dir.file("m.safetensors"), fake_model::make_weights());
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  session_ptr s = make_session(m.get(), wt.get());
  run_record r;
  sgc_generate_options_t o = generate_options(&r, 4);
  const int32_t bad[2] = {3, 16};
  status_holder h1(sgc_session_generate(s.get(), bad, 2, &o, nullptr));
  EXPECT_EQ(h1.code(), SGC_STATUS_USAGE);
  EXPECT_NE(h1.message().find("token id 16"), std::string::npos);
  o.max_new_tokens = 60;
  status_holder h2(
      sgc_session_generate(s.get(), prompt.data(), 5, &o, nullptr));
  EXPECT_EQ(h2.code(), SGC_STATUS_USAGE);
  EXPECT_NE(h2.message().find("context length 64"), std::string::npos);
  o.max_new_tokens = 2;
  o.prefill_chunk = 9;
  status_holder h3(
      sgc_session_generate(s.get(), prompt.data(), 5, &o, nullptr));
  EXPECT_EQ(h3.code(), SGC_STATUS_USAGE);
  EXPECT_NE(h3.message().find("maximum of 8"), std::string::npos);
  o.prefill_chunk = 0;
  status_holder h4(
      sgc_session_generate(s.get(), prompt.data(), 0, &o, nullptr));
  EXPECT_EQ(h4.code(), SGC_STATUS_USAGE);
  EXPECT_TRUE(r.tokens.empty());
}

TEST(Run, HandlesOutliveEachOther) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights();
  write_checkpoint(dir.file("m.safetensors"), w);
  sgc_model_t *m = nullptr;
  ASSERT_SGC_OK(sgc_model_open(SGC_TEST_FAKE_MODEL, &m));
  sgc_weights_t *wt = nullptr;
  ASSERT_SGC_OK(
      sgc_weights_bind(m, dir.file("m.safetensors").c_str(), nullptr, &wt));
  sgc_session_t *s = nullptr;
  ASSERT_SGC_OK(sgc_session_create(m, wt, nullptr, &s));
  sgc_model_release(m);
  sgc_weights_release(wt);
  run_record r;
  sgc_generate_options_t o = generate_options(&r, 3);
  o.ignore_eos = 1;
  ASSERT_SGC_OK(sgc_session_generate(s, prompt.data(), 4, &o, nullptr));
  EXPECT_EQ(r.tokens, fake_model::greedy(w, {2, 5, 7, 9}, 3, true));
  sgc_session_release(s);
}

//===----------------------------------------------------------------------===//
// Binding errors and checkpoint variants
//===----------------------------------------------------------------------===//

TEST(Bind, OtherPrefixSpelling) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights();
  write_checkpoint(dir.file("m.safetensors"), w,
                   "model.language_model.embed_tokens.weight",
                   "model.language_model.norm.weight");
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  ASSERT_TRUE(wt);
  EXPECT_STREQ(sgc_weights_source_name(wt.get(), 0),
               "model.language_model.embed_tokens.weight");
  session_ptr s = make_session(m.get(), wt.get());
  run_record r;
  sgc_generate_options_t o = generate_options(&r, 3);
  o.ignore_eos = 1;
  ASSERT_SGC_OK(sgc_session_generate(s.get(), prompt.data(), 6, &o, nullptr));
  EXPECT_EQ(r.tokens,
            fake_model::greedy(
                w, std::vector<int32_t>(prompt.begin(), prompt.begin() + 6), 3,
                true));
}

TEST(Bind, ListsEveryMissingAndMismatchedTensor) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights();
  // Embedding misshapen ([8, 8] instead of [16, 8]), norm missing.
  write_checkpoint(dir.file("m.safetensors"), w, fake_model::embed_name, "",
                   {8, 8});
  model_ptr m = open_fake_model();
  sgc_weights_t *wt = nullptr;
  status_holder h(sgc_weights_bind(m.get(), dir.file("m.safetensors").c_str(),
                                   nullptr, &wt));
  EXPECT_EQ(wt, nullptr);
  ASSERT_EQ(h.code(), SGC_STATUS_MISMATCH) << h.all();
  EXPECT_NE(h.message().find(dir.file("m.safetensors")), std::string::npos);
  EXPECT_NE(h.message().find("1 missing and 1 mismatched of 2 tensors"),
            std::string::npos)
      << h.message();
  ASSERT_EQ(sgc_status_note_count(h.s), 2u);
  const std::string missing = sgc_status_note(h.s, 0);
  EXPECT_NE(missing.find("missing tensor 'language_model.model.norm.weight' "
                         "(F32 [8])"),
            std::string::npos)
      << missing;
  EXPECT_NE(missing.find("'model.language_model.norm.weight'"),
            std::string::npos);
  const std::string shape = sgc_status_note(h.s, 1);
  EXPECT_NE(shape.find("'language_model.model.embed_tokens.weight'"),
            std::string::npos);
  EXPECT_NE(shape.find("BF16 [8, 8]"), std::string::npos) << shape;
  EXPECT_NE(shape.find("expects BF16 [16, 8]"), std::string::npos) << shape;
}

TEST(Bind, DtypeMismatch) {
  temp_dir dir;
  st::tensor_source e, n;
  std::vector<float> zeros(16 * 8, 0.0f);
  e.name = fake_model::embed_name;
  e.type = sgc::dtype::f32; // model wants BF16
  e.shape = {16, 8};
  e.data = zeros.data();
  n.name = fake_model::norm_name;
  n.type = sgc::dtype::f32;
  n.shape = {8};
  n.data = zeros.data();
  ASSERT_TRUE(st::write(dir.file("m.safetensors"), {e, n}).ok());
  model_ptr m = open_fake_model();
  sgc_weights_t *wt = nullptr;
  status_holder h(sgc_weights_bind(m.get(), dir.file("m.safetensors").c_str(),
                                   nullptr, &wt));
  ASSERT_EQ(h.code(), SGC_STATUS_MISMATCH);
  EXPECT_NE(h.all().find("has F32 [16, 8], the model expects BF16 [16, 8]"),
            std::string::npos)
      << h.all();
}

TEST(Bind, BadCheckpointIsBadInput) {
  model_ptr m = open_fake_model();
  for (const char *f : {"bad_overlap.safetensors", "bad_empty.safetensors",
                        "sharded_missing_shard"}) {
    const std::string path = sgc_test::fixtures_dir() + "/" + f;
    sgc_weights_t *wt = nullptr;
    status_holder h(sgc_weights_bind(m.get(), path.c_str(), nullptr, &wt));
    EXPECT_EQ(h.code(), SGC_STATUS_BAD_INPUT) << f << ": " << h.all();
  }
  sgc_weights_options_t o;
  sgc_weights_options_default(&o);
  sgc_weights_t *wt = nullptr;
  status_holder none(sgc_weights_bind(m.get(), nullptr, &o, &wt));
  EXPECT_EQ(none.code(), SGC_STATUS_USAGE);
}

TEST(Bind, ShardedCheckpoint) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights(5);
  write_checkpoint(dir.file("a.safetensors"), w, fake_model::embed_name, "");
  write_checkpoint(dir.file("b.safetensors"), w, "", fake_model::norm_name);
  sgc_test::write_file(dir.file("model.safetensors.index.json"),
                       std::string("{\"weight_map\":{\"") +
                           fake_model::embed_name + "\":\"a.safetensors\",\"" +
                           fake_model::norm_name + "\":\"b.safetensors\"}}");
  model_ptr m = open_fake_model();
  sgc_weights_options_t o;
  sgc_weights_options_default(&o);
  o.populate = 1;
  struct progress_log {
    uint64_t last = 0, total = 0;
    int calls = 0;
  } log;
  o.progress = [](void *user, uint64_t done, uint64_t total) {
    auto *l = static_cast<progress_log *>(user);
    EXPECT_GE(done, l->last);
    l->last = done;
    l->total = total;
    ++l->calls;
  };
  o.progress_user = &log;
  sgc_weights_t *raw = nullptr;
  ASSERT_SGC_OK(sgc_weights_bind(m.get(), dir.path().c_str(), &o, &raw));
  weights_ptr wt(raw);
  EXPECT_EQ(log.total, 288u);
  EXPECT_EQ(log.last, 288u);
  EXPECT_GE(log.calls, 2);
  session_ptr s = make_session(m.get(), wt.get());
  run_record r;
  sgc_generate_options_t g = generate_options(&r, 2);
  g.ignore_eos = 1;
  ASSERT_SGC_OK(sgc_session_generate(s.get(), prompt.data(), 3, &g, nullptr));
  EXPECT_EQ(r.tokens, fake_model::greedy(w, {2, 5, 7}, 2, true));
}

TEST(Bind, MisalignedTensorsAreCopied) {
  // A 1-byte tensor first pushes the BF16 and F32 tensors to odd offsets.
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights(9);
  std::string data(1, '\x07');
  data.append(reinterpret_cast<const char *>(w.norm.data()), 32);
  data.append(reinterpret_cast<const char *>(w.embed.data()), 256);
  std::string header =
      std::string("{\"pad\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":"
                  "[0,1]},\"") +
      fake_model::norm_name +
      "\":{\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[1,33]},\"" +
      fake_model::embed_name +
      "\":{\"dtype\":\"BF16\",\"shape\":[16,8],\"data_offsets\":[33,289]}}";
  header.append((8 - header.size() % 8) % 8, ' ');
  sgc_test::write_file(dir.file("m.safetensors"),
                       sgc_test::safetensors_image(header, data));
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  ASSERT_TRUE(wt);
  EXPECT_GT(sgc_weights_copied_bytes(wt.get()), 0u);
  session_ptr s = make_session(m.get(), wt.get());
  run_record r;
  sgc_generate_options_t o = generate_options(&r, 3);
  o.ignore_eos = 1;
  ASSERT_SGC_OK(sgc_session_generate(s.get(), prompt.data(), 7, &o, nullptr));
  EXPECT_EQ(r.tokens,
            fake_model::greedy(
                w, std::vector<int32_t>(prompt.begin(), prompt.begin() + 7), 3,
                true));
}

TEST(Bind, PlacementMapsOrCopies) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights(5);
  write_checkpoint(dir.file("model.safetensors"), w);
  model_ptr m = open_fake_model();
  const std::vector<int32_t> expected = fake_model::greedy(w, prompt, 4, true);
  std::vector<int32_t> all_tokens = prompt;
  all_tokens.insert(all_tokens.end(), expected.begin(), expected.end() - 1);
  const std::vector<float> ref = fake_model::logits(w, all_tokens);
  struct placement_case {
    sgc_weights_placement_t requested, used;
    bool copied;
  };
  // AUTO maps a checkpoint this small (under 64 MiB).
  for (placement_case c : {placement_case{SGC_WEIGHTS_MAP, SGC_WEIGHTS_MAP, false},
                           placement_case{SGC_WEIGHTS_COPY, SGC_WEIGHTS_COPY, true},
                           placement_case{SGC_WEIGHTS_AUTO, SGC_WEIGHTS_MAP, false}}) {
    SCOPED_TRACE("placement " + std::to_string(c.requested));
    weights_ptr wt = bind_weights(m.get(), dir.path(), SGC_LOAD_FORMAT_AUTO,
                                  c.requested);
    ASSERT_TRUE(wt);
    EXPECT_EQ(sgc_weights_placement(wt.get()), c.used);
    if (c.copied)
      EXPECT_GE(sgc_weights_copied_bytes(wt.get()), sgc_weights_bytes(wt.get()));
    else
      EXPECT_EQ(sgc_weights_copied_bytes(wt.get()), 0u);
    session_ptr s = make_session(m.get(), wt.get());
    ASSERT_TRUE(s);
    run_record r;
    sgc_generate_options_t o = generate_options(&r, 4, 3);
    o.ignore_eos = 1;
    ASSERT_SGC_OK(sgc_session_generate(s.get(), prompt.data(),
                                       static_cast<int64_t>(prompt.size()), &o,
                                       nullptr));
    EXPECT_EQ(r.tokens, expected);
    ASSERT_EQ(r.prefill_rows.size(), prompt.size());
    for (size_t p = 0; p < prompt.size(); ++p)
      expect_rows_equal(r.prefill_rows[p], ref.data() + p * 16);
  }
  sgc_weights_options_t o;
  sgc_weights_options_default(&o);
  EXPECT_EQ(o.placement, SGC_WEIGHTS_AUTO);
  o.placement = static_cast<sgc_weights_placement_t>(7);
  sgc_weights_t *wt = nullptr;
  status_holder h(sgc_weights_bind(m.get(), dir.path().c_str(), &o, &wt));
  EXPECT_EQ(h.code(), SGC_STATUS_USAGE) << h.all();
  EXPECT_NE(h.message().find("unknown weights placement 7"), std::string::npos)
      << h.all();
  EXPECT_EQ(wt, nullptr);
}

//===----------------------------------------------------------------------===//
// Dummy weights
//===----------------------------------------------------------------------===//

namespace {

/// The documented dummy value, computed here from the formula.
float documented_dummy(const std::string &name, uint64_t i) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  uint64_t z = h + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(static_cast<int64_t>(z >> 40) - 8388608) *
         (0.02f / 8388608.0f);
}

uint16_t round_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

} // namespace

TEST(Dummy, WrittenFileMatchesTheFormulaAndBinding) {
  temp_dir dir;
  model_ptr m = open_fake_model();
  const std::string path = dir.file("dummy.safetensors");
  ASSERT_SGC_OK(sgc_model_write_dummy_weights(m.get(), path.c_str(), nullptr));

  std::unique_ptr<st::file> f;
  ASSERT_TRUE(st::file::open(path, &f).ok());
  EXPECT_EQ(f->hdr().metadata.at("format"), "pt");
  const st::tensor_info *e = f->find(fake_model::embed_name);
  const st::tensor_info *n = f->find(fake_model::norm_name);
  ASSERT_TRUE(e && n);
  const auto *ev = reinterpret_cast<const uint16_t *>(f->data(*e));
  fake_model::weights from_file;
  for (uint64_t i = 0; i < 128; ++i) {
    const float v = documented_dummy(fake_model::embed_name, i);
    EXPECT_GE(v, -0.02f);
    EXPECT_LT(v, 0.02f);
    ASSERT_EQ(ev[i], round_to_bf16(v)) << i;
    from_file.embed.push_back(ev[i]);
  }
  const auto *nv = reinterpret_cast<const float *>(f->data(*n));
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(nv[i], 0.0f); // fill hint: zeros
    from_file.norm.push_back(nv[i]);
  }

  // Dummy binding and the written file give identical runs, and both match
  // the reference on the file's values.
  weights_ptr dummy = bind_weights(m.get(), "", SGC_LOAD_FORMAT_DUMMY);
  ASSERT_TRUE(dummy);
  EXPECT_EQ(sgc_weights_format(dummy.get()), SGC_LOAD_FORMAT_DUMMY);
  weights_ptr file = bind_weights(m.get(), path);
  const std::vector<int32_t> p(prompt.begin(), prompt.begin() + 9);
  const std::vector<int32_t> expected =
      fake_model::greedy(from_file, p, 5, true);
  for (sgc_weights_t *wt : {dummy.get(), file.get()}) {
    session_ptr s = make_session(m.get(), wt);
    run_record r;
    sgc_generate_options_t o = generate_options(&r, 5);
    o.ignore_eos = 1;
    ASSERT_SGC_OK(sgc_session_generate(s.get(), p.data(), 9, &o, nullptr));
    EXPECT_EQ(r.tokens, expected);
    const std::vector<float> ref = fake_model::logits(from_file, p);
    expect_rows_equal(r.prefill_rows[8], ref.data() + 8 * 16);
  }
}

TEST(Dummy, FillKindsAndDtypes) {
  using sgc::runtime::fill_dummy;
  float f[4];
  fill_dummy(1, SGC_ABI_DTYPE_F32, SGC_ABI_FILL_ONES, 0, 4, f);
  EXPECT_EQ(f[3], 1.0f);
  uint16_t b[3];
  fill_dummy(1, SGC_ABI_DTYPE_BF16, SGC_ABI_FILL_ONES, 0, 3, b);
  EXPECT_EQ(b[0], 0x3F80);
  fill_dummy(1, SGC_ABI_DTYPE_F16, SGC_ABI_FILL_ONES, 0, 3, b);
  EXPECT_EQ(b[2], 0x3C00);
  double d[2];
  fill_dummy(1, SGC_ABI_DTYPE_F64, SGC_ABI_FILL_ZEROS, 0, 2, d);
  EXPECT_EQ(d[1], 0.0);
  // Slices agree with whole-tensor fills (random access).
  float whole[64], part[16];
  fill_dummy(99, SGC_ABI_DTYPE_F32, SGC_ABI_FILL_RANDOM, 0, 64, whole);
  fill_dummy(99, SGC_ABI_DTYPE_F32, SGC_ABI_FILL_RANDOM, 40, 16, part);
  EXPECT_EQ(std::memcmp(whole + 40, part, sizeof part), 0);
  int8_t i8[256];
  fill_dummy(5, SGC_ABI_DTYPE_I8, SGC_ABI_FILL_RANDOM, 0, 256, i8);
  for (int8_t v : i8) {
    EXPECT_GE(v, -2);
    EXPECT_LE(v, 2);
  }
}

//===----------------------------------------------------------------------===//
// Devices and CPU variants
//===----------------------------------------------------------------------===//

TEST(Device, CudaMissingDriver) {
  const sgc::status s =
      sgc::runtime::probe_cuda("libsgc-test-no-such-driver.so.1", 0, nullptr);
  EXPECT_EQ(s.code(), sgc::status_code::device_unavailable);
  EXPECT_EQ(s.message(), "no CUDA driver found");
}

TEST(Device, CudaNoDevice) {
  sgc::status s =
      sgc::runtime::probe_cuda(SGC_TEST_FAKE_CUDA_INIT_FAILS, 0, nullptr);
  EXPECT_EQ(s.code(), sgc::status_code::device_unavailable);
  EXPECT_EQ(s.message(), "no CUDA device");
  EXPECT_NE(s.to_string().find("CUDA_ERROR_NO_DEVICE (100)"), std::string::npos)
      << s.to_string();
  EXPECT_NE(s.to_string().find("cuda_driver.cc:"), std::string::npos);
  s = sgc::runtime::probe_cuda(SGC_TEST_FAKE_CUDA_ZERO_DEVICES, 0, nullptr);
  EXPECT_EQ(s.code(), sgc::status_code::device_unavailable);
  EXPECT_EQ(s.message(), "no CUDA device");
  int count = 0;
  s = sgc::runtime::probe_cuda(SGC_TEST_FAKE_CUDA_ONE_DEVICE, 0, &count);
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(count, 1);
  s = sgc::runtime::probe_cuda(SGC_TEST_FAKE_CUDA_ONE_DEVICE, 3, nullptr);
  EXPECT_EQ(s.message(), "no CUDA device 3");
}

TEST(Device, CudaSessionFailsCleanly) {
  temp_dir dir;
  write_checkpoint(dir.file("m.safetensors"), fake_model::make_weights());
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  sgc_session_options_t o;
  sgc_session_options_default(&o);
  o.device = SGC_DEVICE_CUDA;
  sgc_session_t *s = nullptr;
  status_holder h(sgc_session_create(m.get(), wt.get(), &o, &s));
  EXPECT_EQ(s, nullptr);
  status_holder probe(sgc_device_probe(SGC_DEVICE_CUDA, 0));
  if (probe.code() == SGC_STATUS_OK) {
    // A machine with a GPU: the CPU model is the problem.
    EXPECT_EQ(h.code(), SGC_STATUS_MISMATCH) << h.all();
  } else {
    EXPECT_EQ(h.code(), SGC_STATUS_DEVICE_UNAVAILABLE) << h.all();
    EXPECT_TRUE(h.message() == "no CUDA driver found" ||
                h.message() == "no CUDA device")
        << h.message();
  }
}

TEST(Device, CpuVariants) {
  temp_dir dir;
  write_checkpoint(dir.file("m.safetensors"), fake_model::make_weights());
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  const bool avx512 = (sgc_cpu_features() & SGC_ABI_CPU_AVX512F) &&
                      (sgc_cpu_features() & SGC_ABI_CPU_AVX512BW) &&
                      (sgc_cpu_features() & SGC_ABI_CPU_AVX512VL);
  {
    session_ptr s = make_session(m.get(), wt.get(), 1);
    EXPECT_STREQ(sgc_session_variant(s.get()),
                 avx512 ? "fake-avx512" : "fake-generic");
  }
  auto create = [&](const char *variant, sgc_session_t **out) {
    sgc_session_options_t o;
    sgc_session_options_default(&o);
    o.variant = variant;
    return sgc_session_create(m.get(), wt.get(), &o, out);
  };
  sgc_session_t *s = nullptr;
  {
    status_holder h(create("no-such-variant", &s));
    EXPECT_EQ(h.code(), SGC_STATUS_USAGE);
    EXPECT_NE(h.all().find("'fake-generic'"), std::string::npos);
  }
  {
    status_holder h(create("fake-avx512", &s));
    EXPECT_EQ(h.code(), avx512 ? SGC_STATUS_OK : SGC_STATUS_DEVICE_UNAVAILABLE)
        << h.all();
    sgc_session_release(s);
    s = nullptr;
  }
  char names[256];
  EXPECT_GT(sgc_cpu_features_string(SGC_ABI_CPU_AVX2 | SGC_ABI_CPU_FMA, names,
                                    sizeof names),
            0u);
  EXPECT_STREQ(names, "avx2 fma");
  EXPECT_GE(sgc_default_thread_count(), 1);
}

//===----------------------------------------------------------------------===//
// Internals: thread pool and sampler
//===----------------------------------------------------------------------===//

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 4}) {
    sgc::runtime::thread_pool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {0, 1, 2, 7, 1000, 100003}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      for (auto &h : hits)
        h = 0;
      pool.run(n, [&](int64_t b, int64_t e) {
        ASSERT_LE(0, b);
        ASSERT_LT(b, e);
        ASSERT_LE(e, n);
        for (int64_t i = b; i < e; ++i)
          hits[i].fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(hits[i].load(), 1) << "n " << n << " index " << i;
    }
  }
}

// Guided ranges: the first a quarter of 2 threads' work, then shrinking to
// 1/128 of it, each begin on a 16-row block, so neither thread waits long on
// the other's last range.
TEST(ThreadPool, RangesShrinkTowardTheEnd) {
  sgc::runtime::thread_pool pool(2);
  const int64_t n = 262144;
  std::mutex m;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  pool.run(n, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(m);
    ranges.emplace_back(b, e);
  });
  std::sort(ranges.begin(), ranges.end());
  ASSERT_GE(ranges.size(), 12u);
  EXPECT_EQ(ranges.front(), std::make_pair(int64_t{0}, n / 4));
  int64_t covered = 0;
  for (auto [b, e] : ranges) {
    EXPECT_EQ(b, covered);
    EXPECT_EQ(b % 16, 0) << b;
    EXPECT_LE(e - b, n / 4);
    covered = e;
  }
  EXPECT_EQ(covered, n);
  EXPECT_LE(ranges.back().second - ranges.back().first, n / 128);
  // Few rows: one at a time once the shares round down to nothing.
  ranges.clear();
  pool.run(4, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(m);
    ranges.emplace_back(b, e);
  });
  EXPECT_EQ(ranges.size(), 4u);
}

TEST(ThreadPool, NestedAndConcurrentCalls) {
  sgc::runtime::thread_pool pool(3);
  std::atomic<int64_t> total{0};
  pool.run(8, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.run(10, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
  });
  EXPECT_EQ(total.load(), 80);

  std::atomic<int64_t> sum{0};
  auto worker = [&] {
    for (int k = 0; k < 200; ++k)
      pool.run(64, [&](int64_t b, int64_t e) { sum += e - b; });
  };
  std::thread a(worker), b(worker);
  a.join();
  b.join();
  EXPECT_EQ(sum.load(), 2 * 200 * 64);
}

// argmax over vocabularies longer than its blocks of 16, against the plain
// one-pass definition: the first index of the largest value that is not NaN
// (0 when every value is NaN).
TEST(Sampler, ArgmaxBlocksMatchTheDefinition) {
  using sgc::runtime::sampler;
  auto reference = [](const std::vector<float> &v) {
    int32_t best = -1;
    for (size_t i = 0; i < v.size(); ++i)
      if (!std::isnan(v[i]) && (best < 0 || v[i] > v[best]))
        best = static_cast<int32_t>(i);
    return best < 0 ? 0 : best;
  };
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  std::vector<std::vector<float>> cases;
  std::vector<float> v(262144);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>((i * 2654435761u) % 100003) * 1e-3f;
  cases.push_back(v);
  v[262143] = 500.0f; // the last element, in the full last block
  cases.push_back(v);
  v[40] = 500.0f; // a tie in an earlier block: the first wins
  v[41] = nan;
  cases.push_back(v);
  std::vector<float> tail(37, -1.0f);
  tail[36] = 3.0f; // in the tail past whole blocks
  tail[3] = nan;
  cases.push_back(tail);
  cases.push_back(std::vector<float>(40, nan));
  std::vector<float> negInf(33, -inf);
  negInf[0] = nan;
  cases.push_back(negInf); // the first value that is not NaN
  std::vector<float> zeros(20, 0.0f);
  zeros[0] = -0.0f;
  zeros[17] = nan;
  cases.push_back(zeros); // -0 and +0 tie: index 0
  std::vector<float> nanThenMax(64, 1.0f);
  nanThenMax[5] = nan;
  nanThenMax[21] = 2.0f; // the NaN's lane of a block holds the maximum later
  cases.push_back(nanThenMax);
  std::vector<float> withInf(50, 1.0f);
  withInf[33] = inf;
  withInf[18] = nan;
  cases.push_back(withInf);
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE(c);
    EXPECT_EQ(sampler::argmax(cases[c].data(),
                              static_cast<int64_t>(cases[c].size())),
              reference(cases[c]));
  }
  EXPECT_EQ(sampler::argmax(v.data(), 262144), 40);
  EXPECT_EQ(sampler::argmax(tail.data(), 37), 36);
  EXPECT_EQ(sampler::argmax(negInf.data(), 33), 1);
}

TEST(Sampler, GreedyAndFilters) {
  using sgc::runtime::sampler;
  const float l[5] = {0.5f, 2.0f, std::nanf(""), 2.0f, -1.0f};
  EXPECT_EQ(sampler::argmax(l, 5), 1); // first of the tied maxima
  const float nan_first[3] = {std::nanf(""), -5.0f, -6.0f};
  EXPECT_EQ(sampler::argmax(nan_first, 3), 1);
  sampler greedy(0.0f, 0, 1.0f, 0);
  EXPECT_EQ(greedy.sample(l, 5), 1);
  sampler k1(1.0f, 1, 1.0f, 7);
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(k1.sample(l, 5), 1);
  sampler k2(1.0f, 2, 1.0f, 7);
  for (int i = 0; i < 50; ++i) {
    const int32_t t = k2.sample(l, 5);
    EXPECT_TRUE(t == 1 || t == 3) << t;
  }
}

//===----------------------------------------------------------------------===//
// Memory: --max-context and the budget check
//===----------------------------------------------------------------------===//

TEST(Memory, MaxContextPlansFewerSlotsAndKeepsTheLogits) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights();
  write_checkpoint(dir.file("m.safetensors"), w);
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  // The full layer holds 20 slots instead of 64; the 4-slot ring is as it
  // was. Nothing allocated yet: the model says what a session would take.
  const uint64_t at20 = (20 + 4) * 8 * 4 * 2;
  EXPECT_EQ(sgc_model_kv_cache_bytes_at(m.get(), 20), at20);
  EXPECT_EQ(sgc_model_kv_cache_bytes_at(m.get(), 2), 2u * 2 * 8 * 4 * 2);
  EXPECT_EQ(sgc_model_kv_cache_bytes_at(m.get(), 0), fake_model::kv_bytes);
  EXPECT_EQ(sgc_model_kv_cache_bytes_at(m.get(), 1000), fake_model::kv_bytes);

  sgc_session_options_t o;
  sgc_session_options_default(&o);
  o.max_context = 20;
  sgc_session_t *raw = nullptr;
  ASSERT_SGC_OK(sgc_session_create(m.get(), wt.get(), &o, &raw));
  session_ptr s(raw);
  EXPECT_EQ(sgc_session_context(s.get()), 20);
  EXPECT_EQ(sgc_session_kv_cache_bytes(s.get()), at20);

  // The same tokens and logits as with the whole context.
  const int64_t max_new = 9; // 11 + 9 = 20 positions, the last one unused
  const std::vector<int32_t> expected =
      fake_model::greedy(w, prompt, max_new, /*ignore_eos=*/true);
  run_record r;
  sgc_generate_options_t g = generate_options(&r, max_new);
  g.ignore_eos = 1;
  ASSERT_SGC_OK(sgc_session_generate(s.get(), prompt.data(),
                                     static_cast<int64_t>(prompt.size()), &g,
                                     nullptr));
  EXPECT_EQ(r.tokens, expected);
  std::vector<int32_t> all_tokens = prompt;
  all_tokens.insert(all_tokens.end(), expected.begin(), expected.end() - 1);
  const std::vector<float> ref = fake_model::logits(w, all_tokens);
  ASSERT_EQ(r.decode_rows.size(), static_cast<size_t>(max_new - 1));
  for (size_t i = 0; i < r.decode_rows.size(); ++i)
    expect_rows_equal(r.decode_rows[i], ref.data() + (prompt.size() + i) * 16);

  // One token more than the context holds: an error naming both numbers.
  run_record r2;
  g = generate_options(&r2, 10);
  status_holder h(sgc_session_generate(
      s.get(), prompt.data(), static_cast<int64_t>(prompt.size()), &g, nullptr));
  EXPECT_EQ(h.code(), SGC_STATUS_USAGE);
  EXPECT_NE(h.message().find("the prompt (11 tokens) plus 10 new tokens exceed "
                             "the context of 20 (--max-context; the model's "
                             "is 64)"),
            std::string::npos)
      << h.all();
  EXPECT_TRUE(r2.tokens.empty());
  // And a negative context is a usage error.
  o.max_context = -1;
  status_holder neg(sgc_session_create(m.get(), wt.get(), &o, &raw));
  EXPECT_EQ(neg.code(), SGC_STATUS_USAGE);
}

// Sequence slots: each holds its own caches. The fake model has no batched
// entry, so sgc_session_decode_batch runs each row as a one-token decode of
// its slot; every row must be that sequence's own logits.
TEST(Sequences, SlotsHoldTheirOwnCaches) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights();
  write_checkpoint(dir.file("m.safetensors"), w);
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  sgc_session_options_t o;
  sgc_session_options_default(&o);
  o.num_sequences = 3;
  sgc_session_t *raw = nullptr;
  ASSERT_SGC_OK(sgc_session_create(m.get(), wt.get(), &o, &raw));
  session_ptr s(raw);
  EXPECT_EQ(sgc_session_num_sequences(s.get()), 3);
  EXPECT_EQ(sgc_session_kv_cache_bytes(s.get()), 3 * fake_model::kv_bytes);
  EXPECT_EQ(sgc_model_decode_batches(m.get(), nullptr, 0), 0u);

  // Three prompts prefilled into slots 2, 0 and 1, then one decode step for
  // all of them in another order.
  const std::vector<std::vector<int32_t>> prompts = {
      {2, 5, 7, 9, 11}, {2, 13, 4}, {2, 6, 6, 8, 10, 12, 3}};
  const int32_t slot_of[3] = {2, 0, 1};
  std::vector<float> row(fake_model::vocab);
  for (int i = 0; i < 3; ++i) {
    ASSERT_SGC_OK(sgc_session_use_sequence(s.get(), slot_of[i]));
    ASSERT_SGC_OK(sgc_session_prefill(
        s.get(), prompts[i].data(), static_cast<int64_t>(prompts[i].size()), 0,
        row.data(), 0));
  }
  const int order[3] = {1, 2, 0};
  int32_t seqs[3], toks[3];
  int64_t pos[3];
  for (int r = 0; r < 3; ++r) {
    seqs[r] = slot_of[order[r]];
    toks[r] = 4 + r;
    pos[r] = static_cast<int64_t>(prompts[order[r]].size());
  }
  std::vector<float> logits(3 * fake_model::vocab);
  ASSERT_SGC_OK(sgc_session_decode_batch(s.get(), 3, seqs, toks, pos,
                                         logits.data()));
  for (int r = 0; r < 3; ++r) {
    std::vector<int32_t> all = prompts[order[r]];
    all.push_back(toks[r]);
    const std::vector<float> ref = fake_model::logits(w, all);
    expect_rows_equal(
        std::vector<float>(logits.begin() + r * fake_model::vocab,
                           logits.begin() + (r + 1) * fake_model::vocab),
        ref.data() + (all.size() - 1) * fake_model::vocab);
  }

  // Bad rows: a slot outside the session, a slot twice, a position past
  // the context; a bad slot to use.
  auto expect_usage = [&](int32_t seq1, int64_t pos1, const char *what) {
    int32_t sq[2] = {0, seq1}, tk[2] = {4, 5};
    int64_t ps[2] = {3, pos1};
    status_holder h(
        sgc_session_decode_batch(s.get(), 2, sq, tk, ps, logits.data()));
    EXPECT_EQ(h.code(), SGC_STATUS_USAGE);
    EXPECT_NE(h.message().find(what), std::string::npos) << h.all();
  };
  expect_usage(3, 4, "row 1: sequence slot 3 is outside the session's 3 slots");
  expect_usage(0, 4, "row 1: sequence slot 0 is in the call twice");
  expect_usage(1, 64, "row 1: position 64 is outside the context length 64");
  status_holder bad(sgc_session_use_sequence(s.get(), -1));
  EXPECT_EQ(bad.code(), SGC_STATUS_USAGE);
  EXPECT_NE(bad.message().find("sequence slot -1 is outside"), std::string::npos);
  // A negative slot count is a usage error; the memory check counts slots.
  o.num_sequences = -2;
  status_holder neg(sgc_session_create(m.get(), wt.get(), &o, &raw));
  EXPECT_EQ(neg.code(), SGC_STATUS_USAGE);
  ASSERT_EQ(setenv("SGC_MEMORY_AVAILABLE", "10000", 1), 0);
  o.num_sequences = 3;
  status_holder oom(sgc_session_create(m.get(), wt.get(), &o, &raw));
  ASSERT_EQ(unsetenv("SGC_MEMORY_AVAILABLE"), 0);
  EXPECT_EQ(oom.code(), SGC_STATUS_DEVICE_UNAVAILABLE);
  EXPECT_NE(oom.all().find("the KV cache at context 64 for 3 sequences "
                           "(13,056 B)"),
            std::string::npos)
      << oom.all();
}

TEST(Memory, BudgetIsCheckedBeforeAllocating) {
  temp_dir dir;
  write_checkpoint(dir.file("m.safetensors"), fake_model::make_weights());
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  // 1000 bytes available: less than the KV cache (4,352 B) + workspace.
  ASSERT_EQ(setenv("SGC_MEMORY_AVAILABLE", "1000", 1), 0);
  sgc_session_options_t o;
  sgc_session_options_default(&o);
  sgc_session_t *raw = nullptr;
  status_holder h(sgc_session_create(m.get(), wt.get(), &o, &raw));
  EXPECT_EQ(h.code(), SGC_STATUS_DEVICE_UNAVAILABLE);
  EXPECT_EQ(raw, nullptr);
  for (const char *part :
       {"not enough memory: the KV cache at context 64 (4,352 B) and the "
        "workspace (576 B) need 4,928 B, but 1,000 B are available",
        "--max-context"})
    EXPECT_NE(h.all().find(part), std::string::npos) << h.all();
  // With fewer positions it fits: (2 + 2) slots x 64 B + 576 B = 832 B.
  o.max_context = 2;
  ASSERT_SGC_OK(sgc_session_create(m.get(), wt.get(), &o, &raw));
  sgc_session_release(raw);
  // Dummy weights count too.
  sgc_weights_options_t wo;
  sgc_weights_options_default(&wo);
  wo.format = SGC_LOAD_FORMAT_DUMMY;
  ASSERT_EQ(setenv("SGC_MEMORY_AVAILABLE", "100", 1), 0);
  sgc_weights_t *dw = nullptr;
  status_holder d(sgc_weights_bind(m.get(), nullptr, &wo, &dw));
  EXPECT_EQ(d.code(), SGC_STATUS_DEVICE_UNAVAILABLE) << d.all();
  EXPECT_NE(d.all().find("the dummy weights need"), std::string::npos)
      << d.all();
  // So does a copy of the checkpoint.
  ASSERT_EQ(setenv("SGC_MEMORY_AVAILABLE", "100", 1), 0);
  sgc_weights_options_t co;
  sgc_weights_options_default(&co);
  co.placement = SGC_WEIGHTS_COPY;
  sgc_weights_t *cw = nullptr;
  status_holder c(
      sgc_weights_bind(m.get(), dir.file("m.safetensors").c_str(), &co, &cw));
  EXPECT_EQ(c.code(), SGC_STATUS_DEVICE_UNAVAILABLE) << c.all();
  EXPECT_EQ(cw, nullptr);
  for (const char *part : {"a copy of the weights need", "--weights-memory=map"})
    EXPECT_NE(c.all().find(part), std::string::npos) << c.all();
  unsetenv("SGC_MEMORY_AVAILABLE");
}

namespace {
/// The VmFlags line of the /proc/self/smaps entry that holds |p|.
std::string vm_flags_of(const void *p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    // Entry headers are "lo-hi perms ..."; field lines never parse so.
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2)
      inside = lo <= a && a < hi;
    else if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}
} // namespace

TEST(Memory, HugePageMemoryIsAlignedAndAsksForHugePages) {
  using sgc::runtime::anon_memory;
  const uint64_t bytes = (uint64_t{5} << 20) + 123;
  anon_memory mem;
  ASSERT_TRUE(anon_memory::allocate(bytes, "a test", &mem, true).ok());
  ASSERT_NE(mem.data(), nullptr);
  EXPECT_EQ(mem.size(), bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(mem.data()) % (uintptr_t{2} << 20), 0u);
  // Zeroed, and every byte writable.
  EXPECT_EQ(mem.data()[0], 0);
  EXPECT_EQ(mem.data()[bytes - 1], 0);
  std::memset(mem.data(), 0x5a, bytes);
  EXPECT_EQ(mem.data()[bytes - 1], 0x5a);
  // MADV_HUGEPAGE shows as "hg" among the mapping's flags.
  const std::string flags = vm_flags_of(mem.data());
  ASSERT_FALSE(flags.empty()) << "no smaps entry for the memory";
  EXPECT_NE((flags + " ").find(" hg "), std::string::npos) << flags;
  // Without the flag: no advice.
  anon_memory plain;
  ASSERT_TRUE(anon_memory::allocate(bytes, "a test", &plain).ok());
  EXPECT_EQ((vm_flags_of(plain.data()) + " ").find(" hg "), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Sampling: min-p and the repetition penalty
//===----------------------------------------------------------------------===//

TEST(Sampler, MinPKeepsTokensNearTheTopAndTheirProportions) {
  using sgc::runtime::sampler;
  using sgc::runtime::sampling;
  // Probabilities 0.5, 0.3, 0.15, 0.05 at temperature 1; min_p 0.2 keeps
  // those >= 0.1: the first three, renormalized to 0.5/0.95, 0.3/0.95, ...
  const float l[4] = {std::log(0.5f), std::log(0.3f), std::log(0.15f),
                      std::log(0.05f)};
  sampling how;
  how.temperature = 1.0f;
  how.min_p = 0.2f;
  how.seed = 7;
  sampler s(how);
  const int draws = 40000;
  int count[4] = {0, 0, 0, 0};
  for (int i = 0; i < draws; ++i)
    ++count[s.sample(l, 4)];
  EXPECT_EQ(count[3], 0);
  const double want[3] = {0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95};
  for (int t = 0; t < 3; ++t) // 5 standard deviations at most
    EXPECT_NEAR(count[t] / double(draws), want[t],
                5 * std::sqrt(want[t] * (1 - want[t]) / draws))
        << "token " << t;
  // min_p 0 keeps all four.
  how.min_p = 0.0f;
  sampler all(how);
  int last = 0;
  for (int i = 0; i < draws; ++i)
    last += all.sample(l, 4) == 3;
  EXPECT_GT(last, 0);
  // The same seed draws the same tokens.
  how.min_p = 0.2f;
  sampler a(how), b(how);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(a.sample(l, 4), b.sample(l, 4));
}

/// Draws `draws` tokens from fixed logits with `how`; the frequencies must
/// be `want` (0 exactly where want is 0) within 5 standard deviations.
static void expectFrequencies(const sgc::runtime::sampling &how,
                              const float *l, int n, const double *want) {
  sgc::runtime::sampler s(how);
  const int draws = 40000;
  std::vector<int> count(n, 0);
  for (int i = 0; i < draws; ++i)
    ++count[s.sample(l, n)];
  for (int t = 0; t < n; ++t) {
    if (want[t] == 0) {
      EXPECT_EQ(count[t], 0) << "token " << t;
      continue;
    }
    EXPECT_NEAR(count[t] / double(draws), want[t],
                5 * std::sqrt(want[t] * (1 - want[t]) / draws))
        << "token " << t;
  }
}

TEST(Sampler, TopKAndTopPKeepTheirSetsInProportion) {
  using sgc::runtime::sampling;
  // Probabilities 0.4, 0.3, 0.2, 0.1 at temperature 1 (the order of the
  // logits is shuffled so a filter that keeps the first ids fails).
  const float l[4] = {std::log(0.2f), std::log(0.4f), std::log(0.1f),
                      std::log(0.3f)};
  sampling how;
  how.temperature = 1.0f;
  how.seed = 11;
  const double none[4] = {0.2, 0.4, 0.1, 0.3};
  expectFrequencies(how, l, 4, none);
  // top-k 2: the two most likely, renormalized (HF's TopKLogitsWarper).
  how.top_k = 2;
  const double k2[4] = {0, 4.0 / 7, 0, 3.0 / 7};
  expectFrequencies(how, l, 4, k2);
  // top-p 0.75: the smallest most-likely set reaching 0.75 is 0.4 + 0.3 +
  // 0.2 (HF's TopPLogitsWarper drops only the tail whose mass <= 0.25).
  how.top_k = 0;
  how.top_p = 0.75f;
  const double p75[4] = {0.2 / 0.9, 0.4 / 0.9, 0, 0.3 / 0.9};
  expectFrequencies(how, l, 4, p75);
  // Both: top-k 3 then top-p 0.6 of the renormalized 0.4/0.9, 0.3/0.9, ...
  // (0.444 + 0.333 >= 0.6): two tokens.
  how.top_k = 3;
  how.top_p = 0.6f;
  expectFrequencies(how, l, 4, k2);
}

TEST(Sampler, RepetitionPenaltyAsHuggingFace) {
  using sgc::runtime::sampler;
  using sgc::runtime::sampling;
  // Token 0 leads (2.0 vs 1.9) until it was seen: 2.0 / 1.2 = 1.67 < 1.9.
  const float l[3] = {2.0f, 1.9f, -1.0f};
  sampling greedy;
  greedy.repetition_penalty = 1.2f;
  sampler g(greedy);
  EXPECT_EQ(g.sample(l, 3, {}), 0);
  EXPECT_EQ(g.sample(l, 3, {0}), 1);
  // Counted once per token, not per occurrence: 2.0 / 1.2 still.
  EXPECT_EQ(g.sample(l, 3, {0, 0, 0, 0}), 1);
  // A negative logit is multiplied: -1.0 * 1.2 drops further.
  const float neg[2] = {-1.0f, -1.1f};
  EXPECT_EQ(g.sample(neg, 2, {0}), 1); // -1.2 < -1.1
  // Penalty 1 changes nothing; out-of-range history ids are ignored.
  sampler off(sampling{});
  EXPECT_EQ(off.sample(l, 3, {0, 7, -3}), 0);
}

TEST(Sampler, TemperatureToZeroIsGreedy) {
  using sgc::runtime::sampler;
  using sgc::runtime::sampling;
  const float l[5] = {0.1f, 0.7f, 0.69f, -2.0f, 0.3f};
  sampling how;
  how.temperature = 1e-4f;
  how.seed = 3;
  sampler s(how);
  for (int i = 0; i < 200; ++i)
    ASSERT_EQ(s.sample(l, 5), sampler::argmax(l, 5));
}

TEST(Run, SamplingOptionsAreChecked) {
  temp_dir dir;
  write_checkpoint(dir.file("m.safetensors"), fake_model::make_weights());
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  session_ptr s = make_session(m.get(), wt.get(), 1);
  run_record r;
  sgc_generate_options_t o = generate_options(&r, 2);
  o.min_p = 1.5f;
  status_holder h(sgc_session_generate(s.get(), prompt.data(), 3, &o, nullptr));
  EXPECT_EQ(h.code(), SGC_STATUS_USAGE);
  EXPECT_NE(h.message().find("min_p must be in [0, 1]"), std::string::npos);
  // A zero-initialized penalty is off, not an error.
  o = generate_options(&r, 2);
  o.repetition_penalty = 0.0f;
  ASSERT_SGC_OK(sgc_session_generate(s.get(), prompt.data(), 3, &o, nullptr));
}

// A batch that requests join and leave between steps (sgc_batch_t, what
// sgc-serve runs): each sequence's greedy tokens are the reference's, the
// one that joins late included; a cancelled one reports nothing more and
// frees its slot; a full batch refuses with a usage error.
TEST(Batch, SequencesJoinAndLeave) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights();
  write_checkpoint(dir.file("m.safetensors"), w);
  model_ptr m = open_fake_model();
  weights_ptr wt = bind_weights(m.get(), dir.file("m.safetensors"));
  sgc_session_options_t so;
  sgc_session_options_default(&so);
  so.num_sequences = 2;
  sgc_session_t *raw = nullptr;
  ASSERT_SGC_OK(sgc_session_create(m.get(), wt.get(), &so, &raw));
  session_ptr s(raw);
  sgc_batch_t *b = nullptr;
  ASSERT_SGC_OK(sgc_batch_create(s.get(), &b));
  std::unique_ptr<sgc_batch_t, void (*)(sgc_batch_t *)> batch(
      b, sgc_batch_release);

  const std::vector<std::vector<int32_t>> prompts = {
      {2, 5, 7, 9, 11}, {2, 13, 4}, {2, 6, 6, 8, 10, 12, 3}, {2, 9}};
  const int64_t max_new[4] = {6, 3, 5, 4};
  run_record rec[4];
  sgc_generate_options_t opts[4];
  sgc_sequence_request_t req[4];
  for (int i = 0; i < 4; ++i) {
    opts[i] = generate_options(&rec[i], max_new[i], 2, false);
    opts[i].ignore_eos = 1;
    req[i] = sgc_sequence_request_t{prompts[i].data(),
                                    static_cast<int64_t>(prompts[i].size()),
                                    &opts[i], 0};
  }
  std::vector<sgc_sequence_request_t *> ended(2);
  size_t n_ended = 0;
  int32_t slot = -1;
  ASSERT_SGC_OK(sgc_batch_add(batch.get(), &req[0], &slot));
  EXPECT_EQ(slot, 0);
  ASSERT_SGC_OK(sgc_batch_step(batch.get(), ended.data(), &n_ended));
  ASSERT_SGC_OK(sgc_batch_add(batch.get(), &req[1], &slot));
  EXPECT_EQ(slot, 1);
  EXPECT_EQ(sgc_batch_free_slots(batch.get()), 0);
  {
    status_holder full(sgc_batch_add(batch.get(), &req[2], nullptr));
    EXPECT_EQ(full.code(), SGC_STATUS_USAGE);
    EXPECT_NE(full.message().find("every sequence slot is in use (2)"),
              std::string::npos)
        << full.all();
  }
  // Step until a slot frees; then the third joins, then the fourth, which
  // is cancelled once it has its first token.
  std::vector<int> finished;
  bool third = false, fourth = false;
  int fourth_tokens = -1;
  for (int steps = 0; steps < 100 && sgc_batch_running(batch.get()) > 0;
       ++steps) {
    ASSERT_SGC_OK(sgc_batch_step(batch.get(), ended.data(), &n_ended));
    if (fourth && fourth_tokens < 0 && !rec[3].tokens.empty()) {
      fourth_tokens = static_cast<int>(rec[3].tokens.size());
      EXPECT_EQ(sgc_batch_cancel(batch.get(), &req[3]), 1);
      EXPECT_EQ(sgc_batch_cancel(batch.get(), &req[3]), 0);
    }
    for (size_t e = 0; e < n_ended; ++e)
      finished.push_back(static_cast<int>(ended[e] - req));
    if (sgc_batch_free_slots(batch.get()) > 0 && !third) {
      ASSERT_SGC_OK(sgc_batch_add(batch.get(), &req[2], nullptr));
      third = true;
    } else if (sgc_batch_free_slots(batch.get()) > 0 && third && !fourth) {
      ASSERT_SGC_OK(sgc_batch_add(batch.get(), &req[3], nullptr));
      fourth = true;
    }
  }
  EXPECT_EQ(sgc_batch_running(batch.get()), 0);
  EXPECT_EQ(sgc_batch_free_slots(batch.get()), 2);
  EXPECT_EQ(finished, (std::vector<int>{1, 0, 2}));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rec[i].tokens, fake_model::greedy(w, prompts[i], max_new[i], true))
        << "sequence " << i;
    EXPECT_EQ(req[i].num_generated, max_new[i]);
  }
  ASSERT_GE(fourth_tokens, 1);
  EXPECT_EQ(static_cast<int>(rec[3].tokens.size()), fourth_tokens);
}

// Stop strings held back across tokens (sgc_text_stream_t): what is handed
// out never holds a stop string nor is taken back, and adds up to the text
// before the first one.
TEST(TextStream, StopStringsAcrossTokens) {
  sgc_tokenizer_t *t = nullptr;
  ASSERT_SGC_OK(sgc_tokenizer_open(SGC_SOURCE_DIR "/examples/tiny-gemma3", &t));
  std::unique_ptr<sgc_tokenizer_t, void (*)(sgc_tokenizer_t *)> tok(
      t, sgc_tokenizer_release);
  const std::string text = "the cat sat on the mat and then the dog came";
  int32_t *raw_ids = nullptr;
  size_t n = 0;
  ASSERT_SGC_OK(
      sgc_tokenizer_encode(t, text.data(), text.size(), 0, &raw_ids, &n));
  std::vector<int32_t> ids(raw_ids, raw_ids + n);
  free(raw_ids);
  struct expectation {
    std::vector<const char *> stops;
    std::string out;
    bool stopped;
  };
  for (const expectation &x : std::vector<expectation>{
           {{"mat"}, "the cat sat on the ", true},
           {{"then the dog", "on the"}, "the cat sat ", true},
           {{"at and then"}, "the cat sat on the m", true},
           {{"cow"}, text, false},
           {{"came!"}, text, false},
           {{""}, text, false}}) {
    sgc_text_stream_t *st = nullptr;
    ASSERT_SGC_OK(sgc_text_stream_create(t, 1, x.stops.data(), x.stops.size(),
                                         &st));
    std::string got;
    int stopped = 0;
    for (int32_t id : ids) {
      const char *piece = nullptr;
      size_t len = 0;
      ASSERT_SGC_OK(sgc_text_stream_push(st, id, &piece, &len, &stopped));
      got.append(piece, len);
      for (const char *stop : x.stops)
        if (*stop) {
          EXPECT_EQ(got.find(stop), std::string::npos) << stop;
        }
      EXPECT_EQ(x.out.compare(0, got.size(), got), 0) << got;
      if (stopped)
        break;
    }
    const char *rest = nullptr;
    size_t len = 0;
    ASSERT_SGC_OK(sgc_text_stream_finish(st, &rest, &len, &stopped));
    got.append(rest, len);
    EXPECT_EQ(got, x.out);
    EXPECT_EQ(stopped != 0, x.stopped) << x.out;
    sgc_text_stream_release(st);
  }
}
