/*
 * sgc_run_test.cc - the sgc-run binary end to end: exit codes for every
 * error class (each prints one "error:" line first, then only "note:"
 * lines), generated ids, --dump-logits, --write-dummy-weights,
 * --inspect-weights.
 */
#include "fake_model_reference.h"
#include "lib/safetensors/safetensors.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <sstream>

using sgc_test::process_result;
using sgc_test::temp_dir;
namespace st = sgc::safetensors;

namespace {

process_result sgc_run(std::vector<std::string> args) {
  args.insert(args.begin(), SGC_RUN_PATH);
  return sgc_test::run_process(args);
}

/// A failing run: the expected code, one error line first, notes after.
void expect_failure(const process_result &r, int code,
                    const std::vector<std::string> &parts = {}) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  const std::vector<std::string> lines = sgc_test::lines(r.err);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind("error: ", 0), 0u) << r.err;
  for (size_t i = 1; i < lines.size(); ++i)
    EXPECT_EQ(lines[i].rfind("note: ", 0), 0u) << r.err;
  for (const std::string &p : parts)
    EXPECT_NE(r.err.find(p), std::string::npos) << "no '" << p << "' in\n"
                                                << r.err;
}

std::string ids_text(const std::vector<int32_t> &ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i)
    out += (i ? " " : "") + std::to_string(ids[i]);
  return out + "\n";
}

std::string ids_arg(const std::vector<int32_t> &ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i)
    out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

void write_checkpoint(const std::string &path, const fake_model::weights &w) {
  st::tensor_source e, n;
  e.name = fake_model::embed_name;
  e.type = sgc::dtype::bf16;
  e.shape = {16, 8};
  e.data = w.embed.data();
  n.name = fake_model::norm_name;
  n.type = sgc::dtype::f32;
  n.shape = {8};
  n.data = w.norm.data();
  ASSERT_TRUE(st::write(path, {e, n}).ok());
}

const std::vector<int32_t> prompt = {2, 6, 10, 14, 3, 7, 11};

} // namespace

TEST(SgcRun, HelpAndUsage) {
  process_result r = sgc_run({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("usage: sgc-run", 0), 0u);
  EXPECT_TRUE(r.err.empty());
  expect_failure(sgc_run({}), 2, {"no model given", "sgc-run --help"});
  expect_failure(sgc_run({"--bogus"}), 2, {"unknown option '--bogus'"});
  expect_failure(sgc_run({SGC_TEST_FAKE_MODEL, "--prompt-ids", "1,x"}), 2,
                 {"--prompt-ids"});
  expect_failure(sgc_run({SGC_TEST_FAKE_MODEL, "--prompt-ids"}), 2,
                 {"needs a value"});
  expect_failure(sgc_run({SGC_TEST_FAKE_MODEL, "--threads", "0"}), 2);
  expect_failure(sgc_run({SGC_TEST_FAKE_MODEL, "--device", "tpu"}), 2);
  expect_failure(sgc_run({SGC_TEST_FAKE_MODEL, "--load-format=pickle"}), 2);
  expect_failure(sgc_run({SGC_TEST_FAKE_MODEL}), 2, {"nothing to do"});
  expect_failure(sgc_run({SGC_TEST_FAKE_MODEL, "--prompt-ids", "1"}), 2,
                 {"no weights given"});
  expect_failure(sgc_run({"a.so", "b.so"}), 2, {"more than one model"});
  r = sgc_run({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("model ABI 2.9"), std::string::npos);
}

TEST(SgcRun, GeneratesTheReferenceTokens) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights(11);
  write_checkpoint(dir.file("model.safetensors"), w);
  const std::vector<int32_t> expected =
      fake_model::greedy(w, prompt, 6, /*ignore_eos=*/true);
  for (const char *chunk : {"1", "3", "8"}) {
    const process_result r =
        sgc_run({SGC_TEST_FAKE_MODEL, "--weights", dir.path(), "--prompt-ids",
                 ids_arg(prompt), "--max-new-tokens", "6", "--ignore-eos",
                 "--prefill-chunk", chunk, "--threads", "2"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, ids_text(expected));
    EXPECT_TRUE(r.err.empty()) << r.err; // no progress bar without a tty
  }
  expect_failure(sgc_run({SGC_TEST_FAKE_MODEL, "--weights", dir.path(),
                          "--prompt-ids", "1", "--prefill-chunk", "9"}),
                 2, {"prefill chunk 9 exceeds the model's maximum of 8"});
  expect_failure(sgc_run({SGC_TEST_FAKE_MODEL, "--weights", dir.path(),
                          "--prompt-ids", "1,16"}),
                 2, {"token id 16"});
  expect_failure(sgc_run({SGC_TEST_FAKE_MODEL, "--weights", dir.path(),
                          "--prompt-ids", "1", "--max-new-tokens", "64"}),
                 2, {"context length 64"});
  // --check prints a summary and runs nothing.
  const process_result c =
      sgc_run({SGC_TEST_FAKE_MODEL, "--weights", dir.path(), "--check"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("kv cache: 2 layers, " +
                       std::to_string(fake_model::kv_bytes) + " bytes"),
            std::string::npos)
      << c.out;
  // An unknown variant is a usage error that lists the model's variants.
  expect_failure(
      sgc_run({SGC_TEST_FAKE_MODEL, "--weights", dir.path(), "--prompt-ids",
               "1,2", "--cpu-variant", "fake-broken"}),
      2, {"no CPU variant named 'fake-broken'", "'fake-generic'"});
}

TEST(SgcRun, DumpLogits) {
  temp_dir dir;
  const fake_model::weights w = fake_model::make_weights(12);
  write_checkpoint(dir.file("m.safetensors"), w);
  const std::string dump = dir.file("logits.safetensors");
  const process_result r =
      sgc_run({SGC_TEST_FAKE_MODEL, "--weights", dir.file("m.safetensors"),
               "--prompt-ids", ids_arg(prompt), "--max-new-tokens", "4",
               "--ignore-eos", "--prefill-chunk", "3", "--dump-logits", dump});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<int32_t> gen = fake_model::greedy(w, prompt, 4, true);
  std::vector<int32_t> all = prompt;
  all.insert(all.end(), gen.begin(), gen.end() - 1);
  const std::vector<float> ref = fake_model::logits(w, all);

  std::unique_ptr<st::file> f;
  const sgc::status s = st::file::open(dump, &f);
  ASSERT_TRUE(s.ok()) << s.to_string();
  const st::tensor_info *pl = f->find("prefill_logits");
  const st::tensor_info *dl = f->find("decode_logits");
  const st::tensor_info *pi = f->find("prompt_ids");
  const st::tensor_info *gi = f->find("generated_ids");
  ASSERT_TRUE(pl && dl && pi && gi);
  EXPECT_EQ(pl->shape, (std::vector<int64_t>{7, 16}));
  EXPECT_EQ(dl->shape, (std::vector<int64_t>{3, 16}));
  EXPECT_EQ(gi->shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(pl->type, sgc::dtype::f32);
  EXPECT_EQ(gi->type, sgc::dtype::i32);
  const auto *p = reinterpret_cast<const float *>(f->data(*pl));
  const auto *d = reinterpret_cast<const float *>(f->data(*dl));
  for (int i = 0; i < 7 * 16; ++i)
    ASSERT_EQ(p[i], ref[i]) << i;
  for (int i = 0; i < 3 * 16; ++i)
    ASSERT_EQ(d[i], ref[7 * 16 + i]) << i;
  const auto *g = reinterpret_cast<const int32_t *>(f->data(*gi));
  EXPECT_EQ(std::vector<int32_t>(g, g + 4), gen);
}

TEST(SgcRun, DummyWeights) {
  temp_dir dir;
  const std::string file = dir.file("dummy.safetensors");
  process_result r =
      sgc_run({SGC_TEST_FAKE_MODEL, "--write-dummy-weights", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  const process_result from_file =
      sgc_run({SGC_TEST_FAKE_MODEL, "--weights", file, "--prompt-ids",
               ids_arg(prompt), "--max-new-tokens", "5", "--ignore-eos"});
  const process_result dummy =
      sgc_run({SGC_TEST_FAKE_MODEL, "--load-format=dummy", "--prompt-ids",
               ids_arg(prompt), "--max-new-tokens", "5", "--ignore-eos"});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  ASSERT_EQ(dummy.exit_code, 0) << dummy.err;
  EXPECT_EQ(from_file.out, dummy.out);
  EXPECT_EQ(sgc_test::lines(dummy.out).size(), 1u);
  expect_failure(sgc_run({SGC_TEST_FAKE_MODEL, "--load-format=dummy",
                          "--weights", file, "--prompt-ids", "1"}),
                 2);
  // Progress on request: goes to stderr, output unchanged.
  const process_result progress = sgc_run(
      {SGC_TEST_FAKE_MODEL, "--weights", file, "--prompt-ids", ids_arg(prompt),
       "--max-new-tokens", "5", "--ignore-eos", "--progress"});
  EXPECT_EQ(progress.exit_code, 0);
  EXPECT_EQ(progress.out, dummy.out);
  EXPECT_NE(progress.err.find("loading weights"), std::string::npos);
  EXPECT_NE(progress.err.find("100.0%"), std::string::npos);
}

TEST(SgcRun, InspectWeights) {
  const process_result r =
      sgc_run({"--inspect-weights", sgc_test::fixtures_dir() + "/sharded"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "layers.0.w F32 [2] 8 model-00001-of-00002.safetensors\n"
                   "layers.1.w F32 [2] 8 model-00002-of-00002.safetensors\n"
                   "norm.w F32 [1] 4 model-00002-of-00002.safetensors\n"
                   "total: 3 tensors, 20 bytes (20 B), 2 shards\n");
  expect_failure(sgc_run({"--inspect-weights",
                          sgc_test::fixtures_dir() + "/bad_hole.safetensors"}),
                 1, {"bad_hole.safetensors", "hole of 4 bytes"});
}

TEST(SgcRun, BadFilesExitWithCodeOne) {
  // Every malformed checkpoint fixture, given as --weights to a good model.
  const char *bad[] = {"bad_empty.safetensors",
                       "bad_seven_bytes.safetensors",
                       "bad_header_past_eof.safetensors",
                       "bad_header_2pow63.safetensors",
                       "bad_header_not_json.safetensors",
                       "bad_header_not_object.safetensors",
                       "bad_name_not_utf8.safetensors",
                       "bad_duplicate_name.safetensors",
                       "bad_overlap.safetensors",
                       "bad_reversed_offsets.safetensors",
                       "bad_offsets_out_of_range.safetensors",
                       "bad_hole.safetensors",
                       "bad_byte_length.safetensors",
                       "bad_shape_overflow.safetensors",
                       "bad_negative_dim.safetensors",
                       "bad_unknown_dtype.safetensors",
                       "bad_truncated_data.safetensors",
                       "sharded_missing_shard",
                       "sharded_missing_tensor"};
  for (const char *f : bad) {
    SCOPED_TRACE(f);
    const std::string path = sgc_test::fixtures_dir() + "/" + f;
    expect_failure(sgc_run({SGC_TEST_FAKE_MODEL, "--weights", path,
                            "--prompt-ids", "1,2"}),
                   1, {f});
    expect_failure(sgc_run({"--inspect-weights", path}), 1, {f});
  }
  temp_dir dir;
  expect_failure(sgc_run({SGC_TEST_FAKE_MODEL, "--weights", dir.file("absent"),
                          "--prompt-ids", "1"}),
                 1, {"no such file"});
}

TEST(SgcRun, ModelErrors) {
  temp_dir dir;
  write_checkpoint(dir.file("m.safetensors"), fake_model::make_weights());
  const std::string weights = dir.file("m.safetensors");
  auto run_model = [&](const std::string &model) {
    return sgc_run({model, "--weights", weights, "--prompt-ids", "1,2"});
  };
  expect_failure(run_model(SGC_TEST_NOT_A_MODEL), 1,
                 {"not an sgc model", "sgc_model_query"});
  expect_failure(run_model(SGC_TEST_FAKE_MODEL_BAD_MAGIC), 1,
                 {"not an sgc model", "magic"});
  expect_failure(run_model(SGC_TEST_FAKE_MODEL_ABI3), 3,
                 {"model ABI version 3.9", "ABI 2.9"});
  expect_failure(run_model(SGC_TEST_FAKE_MODEL_ABI1), 3,
                 {"model ABI version 1.9", "ABI 2.9"});
  expect_failure(run_model(SGC_TEST_FAKE_MODEL_BAD_TABLE), 1,
                 {"invalid model table"});
  sgc_test::write_file(dir.file("notes.so"), "plain text\n");
  expect_failure(run_model(dir.file("notes.so")), 1, {"not an sgc model"});
  expect_failure(run_model(dir.file("absent.so")), 1, {"no such file"});
}

TEST(SgcRun, TruncatedModelExitsWithCodeOne) {
  // A half-copied library: dlopen would map pages past the end of the file
  // and die of SIGBUS (exit 135, no message); the runtime refuses it first.
  temp_dir dir;
  const std::string image = sgc_test::read_file(SGC_TEST_FAKE_MODEL);
  for (size_t n : {size_t{20}, size_t{300}, image.size() * 4 / 5,
                   image.size() - 1}) {
    SCOPED_TRACE(n);
    const std::string path = dir.file("half.so");
    sgc_test::write_file(path, image.substr(0, n));
    const process_result r =
        sgc_run({path, "--load-format=dummy", "--prompt-ids", "1"});
    expect_failure(r, 1,
                   {"'" + path + "': not an sgc model: truncated: ",
                    "but the file has " + std::to_string(n)});
    size_t errors = 0;
    for (const std::string &line : sgc_test::lines(r.err))
      errors += line.rfind("error: ", 0) == 0;
    EXPECT_EQ(errors, 1u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(SgcRun, MismatchedCheckpointExitsWithCodeThree) {
  temp_dir dir;
  // Only a misshapen embedding: the norm is missing too.
  const fake_model::weights w = fake_model::make_weights();
  st::tensor_source e;
  e.name = fake_model::embed_name;
  e.type = sgc::dtype::bf16;
  e.shape = {4, 8};
  e.data = w.embed.data();
  ASSERT_TRUE(st::write(dir.file("m.safetensors"), {e}).ok());
  const process_result r =
      sgc_run({SGC_TEST_FAKE_MODEL, "--weights", dir.file("m.safetensors"),
               "--prompt-ids", "1,2"});
  expect_failure(r, 3,
                 {"does not fit model 'fake-gemma3-toy'",
                  "note: missing tensor 'language_model.model.norm.weight'",
                  "BF16 [4, 8], the model expects BF16 [16, 8]"});
  EXPECT_EQ(sgc_test::lines(r.err).size(), 3u);
}

TEST(SgcRun, CudaDevice) {
  temp_dir dir;
  write_checkpoint(dir.file("m.safetensors"), fake_model::make_weights());
  const process_result r =
      sgc_run({SGC_TEST_FAKE_MODEL, "--weights", dir.file("m.safetensors"),
               "--prompt-ids", "1,2", "--device", "cuda"});
  if (r.exit_code == 4) {
    expect_failure(r, 4);
    EXPECT_TRUE(r.err.rfind("error: no CUDA driver found", 0) == 0 ||
                r.err.rfind("error: no CUDA device", 0) == 0)
        << r.err;
  } else {
    // A machine with a working GPU: the CPU-only model cannot run there.
    expect_failure(r, 3, {"compiled for target 'cpu'"});
  }
}
