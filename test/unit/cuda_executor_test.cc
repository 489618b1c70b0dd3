/*
 * cuda_executor_test.cc - the CUDA executor against the recording fake
 * libcuda (fake_cuda.c) with the hand-written CUDA model of
 * fake_cuda_model.c: what it asks of the driver (module loaded once,
 * kernels resolved once, the shared-memory opt-in, the decode graph
 * captured once and replayed per token, every launch's parameters as the
 * ABI says), the logits rows it copies back, and failing driver calls.
 * Then the emulator executor (--device cuda-emu), whose kernels compute
 * the toy model exactly (fake_model_reference.h), and sgc-run end to end.
 *
 * Expected addresses and values are derived by hand from the model's plan
 * (fake_cuda_model.c) and the fake's pattern (fake_cuda.c), not from the
 * executor.
 */
#include <sgc/abi.h>
#include <sgc/runtime.h>

#include "fake_model_reference.h"
#include "lib/safetensors/safetensors.h"
#include "runtime/src/cuda/cuda_executor.h"
#include "runtime/src/cuda/emu_executor.h"
#include "runtime/src/model.h"
#include "runtime/src/weights.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <cinttypes>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using sgc::runtime::bound_weights;
using sgc::runtime::cuda_executor;
using sgc::runtime::executor;
using sgc::runtime::model_library;
using sgc_test::temp_dir;
namespace st = sgc::safetensors;

namespace {

/// One line of the fake's log: the call's name and its key=value words.
struct call {
  std::string name;
  std::map<std::string, std::string> args;
  bool captured = false;
  std::string line;
};

std::vector<call> read_log(const std::string &path) {
  std::vector<call> calls;
  for (const std::string &line : sgc_test::lines(sgc_test::read_file(path))) {
    std::istringstream in(line);
    call c;
    c.line = line;
    in >> c.name;
    std::string word;
    while (in >> word) {
      const size_t eq = word.find('=');
      if (eq != std::string::npos)
        c.args[word.substr(0, eq)] = word.substr(eq + 1);
      else if (word == "captured")
        c.captured = true;
    }
    calls.push_back(c);
  }
  return calls;
}

size_t count(const std::vector<call> &calls, const std::string &name) {
  size_t n = 0;
  for (const call &c : calls)
    n += c.name == name;
  return n;
}

uint64_t hex(const std::string &text) {
  return std::strtoull(text.c_str(), nullptr, 16);
}

std::string hex_list(const std::vector<uint64_t> &values) {
  std::string out;
  char buf[32];
  for (uint64_t v : values) {
    std::snprintf(buf, sizeof buf, "%s0x%" PRIx64, out.empty() ? "" : ",", v);
    out += buf;
  }
  return out;
}

void write_weights(const std::string &path, const fake_model::weights &w) {
  std::vector<st::tensor_source> src(2);
  src[0].name = fake_model::embed_name;
  src[0].type = sgc::dtype::bf16;
  src[0].shape = {16, 8};
  src[0].data = w.embed.data();
  src[1].name = fake_model::norm_name;
  src[1].type = sgc::dtype::f32;
  src[1].shape = {8};
  src[1].data = w.norm.data();
  sgc::status s = st::write(path, src);
  ASSERT_TRUE(s.ok()) << s.to_string();
}

/// A model, its weights and an executor over the fake driver, with the
/// fake's log in a temporary directory.
class CudaExecutor : public ::testing::Test {
protected:
  void SetUp() override {
    log_ = dir_.file("calls.log");
    setenv("FAKE_CUDA_LOG", log_.c_str(), 1);
    unsetenv("FAKE_CUDA_FAIL");
    unsetenv("FAKE_CUDA_FREE_BYTES");
    unsetenv("FAKE_CUDA_LAUNCH_US");
    unsetenv("SGC_CUDA_PROFILE");
    unsetenv("SGC_CUDA_DUMP");
    unsetenv("SGC_CUDA_PDL");
    unsetenv("FAKE_CUDA_DRIVER_VERSION");
    reset_fake_counts();
    write_weights(dir_.file("w.safetensors"), weights_);
  }
  /// The fake counts calls for FAKE_CUDA_FAIL per process: start afresh.
  static void reset_fake_counts() {
    void *fake = dlopen(SGC_TEST_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD);
    if (fake) {
      auto reset = reinterpret_cast<void (*)()>(dlsym(fake, "fake_cuda_reset"));
      if (reset)
        reset();
      dlclose(fake);
    }
  }
  void TearDown() override {
    unsetenv("FAKE_CUDA_LOG");
    unsetenv("FAKE_CUDA_FAIL");
    unsetenv("FAKE_CUDA_FREE_BYTES");
    unsetenv("FAKE_CUDA_LAUNCH_US");
    unsetenv("SGC_CUDA_DUMP");
    unsetenv("SGC_CUDA_PDL");
  }

  /// Opens |model_path|, binds the weights, creates, allocates and binds
  /// an executor; returns the first failure.
  sgc::status make(const char *model_path, int64_t context = 64,
                   uint64_t staging = 32ull << 20) {
    sgc::status s = model_library::open(model_path, &model_);
    if (!s.ok())
      return s;
    sgc_weights_options_t wo;
    sgc_weights_options_default(&wo);
    s = bound_weights::bind(model_, dir_.file("w.safetensors").c_str(), wo,
                            &weights_bound_);
    if (!s.ok())
      return s;
    cuda_executor::options o;
    o.library = SGC_TEST_FAKE_CUDA;
    o.progress = [](void *user, uint64_t done, uint64_t total) {
      static_cast<CudaExecutor *>(user)->progress_.push_back({done, total});
    };
    o.progress_user = this;
    o.staging_bytes = staging;
    o.profile_path = profile_path_;
    o.dump_path = dump_path_;
    s = cuda_executor::create(model_, o, &exec_);
    if (s.ok())
      s = exec_->allocate(context, 1);
    if (s.ok())
      s = exec_->bind(*weights_bound_);
    return s;
  }

  const sgc_abi_phase_t &phase(uint32_t kind) { return *model_->phase(kind); }

  sgc::status prefill(const std::vector<int32_t> &tokens, int64_t pos0,
                      std::vector<float> *logits, bool all = false) {
    logits->assign((all ? tokens.size() : 1) * 16, -1.0f);
    return exec_->run(phase(SGC_ABI_PHASE_PREFILL), tokens.data(),
                      static_cast<int64_t>(tokens.size()), pos0, logits->data(),
                      all, nullptr);
  }
  sgc::status decode(int32_t token, int64_t pos, std::vector<float> *logits) {
    logits->assign(16, -1.0f);
    return exec_->run(phase(SGC_ABI_PHASE_DECODE), &token, 1, pos,
                      logits->data(), false, nullptr);
  }

  temp_dir dir_;
  std::string log_;
  fake_model::weights weights_ = fake_model::make_weights();
  std::shared_ptr<model_library> model_;
  std::shared_ptr<bound_weights> weights_bound_;
  std::unique_ptr<executor> exec_;
  std::vector<std::pair<uint64_t, uint64_t>> progress_;
  /// SGC_CUDA_PROFILE / SGC_CUDA_DUMP for make() (empty: none).
  std::string profile_path_, dump_path_;
};

/// One record of an SGC_CUDA_DUMP file: its header line and its bytes.
struct dump_record {
  std::string header;
  std::string data;
};

std::vector<dump_record> read_dump(const std::string &path) {
  const std::string text = sgc_test::read_file(path);
  std::vector<dump_record> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t eol = text.find('\n', at);
    if (eol == std::string::npos)
      break;
    dump_record r;
    r.header = text.substr(at, eol - at);
    const size_t b = r.header.find("\"bytes\":");
    const size_t n = b == std::string::npos
                         ? 0
                         : std::strtoull(r.header.c_str() + b + 8, nullptr, 10);
    r.data = text.substr(eol + 1, n);
    out.push_back(r);
    at = eol + 1 + n;
  }
  return out;
}

// The log writes "-> 0x..." after an allocation: two words without '='.
uint64_t allocated_address(const call &c) {
  const size_t at = c.line.find("-> 0x");
  return at == std::string::npos ? 0 : hex(c.line.substr(at + 3));
}

uint64_t allocation_of(const std::vector<call> &calls, uint64_t bytes) {
  for (const call &c : calls)
    if (c.name == "cuMemAlloc_v2" && c.args.count("bytes") &&
        c.args.at("bytes") == std::to_string(bytes))
      return allocated_address(c);
  ADD_FAILURE() << "no allocation of " << bytes << " bytes";
  return 0;
}

TEST_F(CudaExecutor, ModuleLoadedOnceKernelsResolvedOnce) {
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL).ok());
  std::vector<float> logits;
  ASSERT_TRUE(prefill({3, 4, 5}, 0, &logits).ok());
  for (int64_t pos = 3; pos < 6; ++pos)
    ASSERT_TRUE(decode(7, pos, &logits).ok());
  ASSERT_TRUE(prefill({1, 2}, 6, &logits).ok());
  const std::vector<call> calls = read_log(log_);
  EXPECT_EQ(count(calls, "cuModuleLoadData"), 1u);
  EXPECT_EQ(count(calls, "cuDevicePrimaryCtxRetain"), 1u);
  // Four kernels, each looked up once, though eight steps launch them.
  std::map<std::string, int> lookups;
  for (const call &c : calls)
    if (c.name == "cuModuleGetFunction")
      ++lookups[c.args.at("name")];
  const std::map<std::string, int> once = {{"fake_embed", 1},
                                           {"fake_attn", 1},
                                           {"fake_append", 1},
                                           {"fake_logits", 1}};
  EXPECT_EQ(lookups, once);
  // Only fake_attn has a step over 48 KiB (64 KiB in prefill): it opts in
  // to exactly that, once.
  std::vector<std::string> optins;
  for (const call &c : calls)
    if (c.name == "cuFuncSetAttribute")
      optins.push_back(c.args.at("name") + " " + c.args.at("attribute") + " " +
                       c.args.at("value"));
  EXPECT_EQ(optins, std::vector<std::string>{"fake_attn 8 65536"});
}

TEST_F(CudaExecutor, DecodeCapturedOnceReplayedPerToken) {
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL).ok());
  std::vector<float> logits;
  ASSERT_TRUE(prefill({3, 4, 5}, 0, &logits).ok());
  const int decodes = 5;
  for (int i = 0; i < decodes; ++i)
    ASSERT_TRUE(decode(7, 3 + i, &logits).ok());
  const std::vector<call> calls = read_log(log_);
  EXPECT_EQ(count(calls, "cuStreamBeginCapture_v2"), 1u);
  EXPECT_EQ(count(calls, "cuStreamEndCapture"), 1u);
  EXPECT_EQ(count(calls, "cuGraphInstantiateWithFlags"), 1u);
  EXPECT_EQ(count(calls, "cuGraphLaunch"), static_cast<size_t>(decodes));
  // Prefill launches directly (4 launches), decode only through the graph
  // (4 captured launches, never again).
  size_t direct = 0, captured = 0;
  for (const call &c : calls)
    if (c.name == "cuLaunchKernelEx")
      (c.captured ? captured : direct) += 1;
  EXPECT_EQ(direct, 4u);
  EXPECT_EQ(captured, 4u);
  // Before each replay (and after the one before), one copy of the step
  // state and the token (32 + 4 bytes) from pinned memory; after it, the
  // logits row back.
  size_t last_replay = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].name != "cuGraphLaunch")
      continue;
    size_t j = i;
    while (j > last_replay && calls[j].name != "cuMemcpyHtoDAsync_v2")
      --j;
    last_replay = i;
    ASSERT_EQ(calls[j].name, "cuMemcpyHtoDAsync_v2") << "replay at " << i;
    EXPECT_EQ(calls[j].args.at("bytes"), "36");
    EXPECT_EQ(calls[j].args.at("pinned"), "1");
    ASSERT_LT(i + 1, calls.size());
    EXPECT_EQ(calls[i + 1].name, "cuMemcpyDtoHAsync_v2");
  }
}

TEST_F(CudaExecutor, LaunchParametersFollowTheAbi) {
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL).ok());
  std::vector<float> logits;
  ASSERT_TRUE(prefill({3, 4, 5}, 0, &logits).ok());
  ASSERT_TRUE(decode(7, 3, &logits).ok());
  const std::vector<call> calls = read_log(log_);
  // The allocations, by size (fake_cuda_model.c): the KV cache 4,480 B
  // (K0 2,048 at 0, V0 2,048 at 2,048, K1 128 at 4,096, V1 128 at 4,352;
  // 256-byte aligned), the workspace 1,024 B, the step state and tokens
  // 32 + 8 x 4 B, the weights 288 B (embed 256 at 0, norm 32 at 256).
  const uint64_t kv = allocation_of(calls, 4480);
  const uint64_t ws = allocation_of(calls, 1024);
  const uint64_t state = allocation_of(calls, 64);
  const uint64_t w = allocation_of(calls, 288);
  const uint64_t tokens = state + 32;
  const std::map<std::string, std::vector<uint64_t>> expected = {
      {"fake_embed", {tokens, state, w, w + 256, ws}},
      {"fake_attn", {state, ws, kv, kv + 4352, ws + 256}},
      {"fake_append", {state, ws, kv, kv + 2048, kv + 4096, kv + 4352}},
      {"fake_logits", {state, w, ws + 256, ws + 512}},
  };
  const sgc_abi_variant_t &v = model_->table().variants[0];
  std::vector<std::string> geometry;
  size_t launches = 0;
  for (const call &c : calls) {
    if (c.name != "cuLaunchKernelEx")
      continue;
    ++launches;
    const std::string &name = c.args.at("name");
    // One 8-byte parameter per operand: as many as the kernel's num_params.
    uint32_t num_params = 0;
    for (uint32_t k = 0; k < v.num_functions; ++k)
      if (name == v.kernels[k].name)
        num_params = v.kernels[k].num_params;
    EXPECT_EQ(c.args.at("params"), std::to_string(num_params)) << c.line;
    EXPECT_EQ(c.args.at("values"), hex_list(expected.at(name))) << c.line;
    geometry.push_back(name + " " + c.args.at("grid") + " " +
                       c.args.at("block") + " " + c.args.at("smem"));
  }
  EXPECT_EQ(launches, 8u);
  // Prefill's steps are GRID_TOKENS_X: 3 blocks for 3 tokens, not 8.
  const std::vector<std::string> plan = {
      "fake_embed 3,1,1 8,1,1 0",  "fake_attn 3,1,1 8,1,1 65536",
      "fake_append 3,1,1 8,1,1 0", "fake_logits 3,1,1 16,1,1 0",
      "fake_embed 1,1,1 8,1,1 0",  "fake_attn 1,1,1 8,1,1 1024",
      "fake_append 1,1,1 8,1,1 0", "fake_logits 1,1,1 16,1,1 0"};
  EXPECT_EQ(geometry, plan);
  // Everything the session put on the device was cleared first.
  size_t cleared = 0;
  for (const call &c : calls)
    if (c.name == "cuMemsetD8Async" && c.args.at("value") == "0")
      ++cleared;
  EXPECT_EQ(cleared, 4u); // KV cache, workspace, step state, weights
}

TEST_F(CudaExecutor, ProfileTimesEveryLaunchWithAnEventPair) {
  // The fake's clock runs 2.5 us per launch it runs.
  setenv("FAKE_CUDA_LAUNCH_US", "2.5", 1);
  profile_path_ = dir_.file("profile.tsv");
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL).ok());
  std::vector<float> logits;
  ASSERT_TRUE(prefill({3, 4, 5}, 0, &logits).ok());
  ASSERT_TRUE(decode(7, 3, &logits).ok());
  ASSERT_TRUE(decode(8, 4, &logits).ok());
  // Decode ran launch by launch, and still computed: the fake's pattern of
  // a row at position 4 is c + 400.
  for (int c = 0; c < 16; ++c)
    ASSERT_EQ(logits[c], c + 400.0f) << c;
  exec_.reset(); // destroys the events
  const std::vector<call> calls = read_log(log_);
  EXPECT_EQ(count(calls, "cuStreamBeginCapture_v2"), 0u);
  EXPECT_EQ(count(calls, "cuGraphLaunch"), 0u);
  // A start and an end event per step of the plan, created once (4 prefill
  // and 4 decode steps), recorded around each of the 12 launches.
  EXPECT_EQ(count(calls, "cuEventCreate"), 16u);
  EXPECT_EQ(count(calls, "cuEventRecord"), 24u);
  EXPECT_EQ(count(calls, "cuEventElapsedTime"), 12u);
  EXPECT_EQ(count(calls, "cuEventDestroy_v2"), 16u);
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].name == "cuLaunchKernelEx") {
      ASSERT_GT(i, 0u);
      ASSERT_LT(i + 1, calls.size());
      EXPECT_EQ(calls[i - 1].name, "cuEventRecord") << i;
      EXPECT_EQ(calls[i + 1].name, "cuEventRecord") << i;
    }
  // The model line, the header, one row per launch. Weight bytes: embed
  // (bf16 16 x 8, 256 B) and norm (f32 8, 32 B) for fake_embed, the embed
  // for fake_logits (tied), none for the others.
  const std::vector<std::string> rows =
      sgc_test::lines(sgc_test::read_file(profile_path_));
  ASSERT_EQ(rows.size(), 14u);
  EXPECT_EQ(rows[0], std::string("# sgc launch profile: model ") +
                         SGC_TEST_FAKE_CUDA_MODEL +
                         " variant " +
                         model_->table().variants[0].name +
                         " weight_bytes 288");
  EXPECT_EQ(rows[1], "call\tphase\tstep\tlayer\tkernel\ttokens\tgrid\tblock\t"
                     "smem\tweight_bytes\tus");
  const std::vector<std::string> want = {
      "0\tprefill\t0\t-1\tfake_embed\t3\t3,1,1\t8,1,1\t0\t288\t2.500",
      "0\tprefill\t1\t0\tfake_attn\t3\t3,1,1\t8,1,1\t65536\t0\t2.500",
      "0\tprefill\t2\t0\tfake_append\t3\t3,1,1\t8,1,1\t0\t0\t2.500",
      "0\tprefill\t3\t-1\tfake_logits\t3\t3,1,1\t16,1,1\t0\t256\t2.500",
      "1\tdecode\t0\t-1\tfake_embed\t1\t1,1,1\t8,1,1\t0\t288\t2.500",
      "1\tdecode\t1\t0\tfake_attn\t1\t1,1,1\t8,1,1\t1024\t0\t2.500",
      "1\tdecode\t2\t0\tfake_append\t1\t1,1,1\t8,1,1\t0\t0\t2.500",
      "1\tdecode\t3\t-1\tfake_logits\t1\t1,1,1\t16,1,1\t0\t256\t2.500",
  };
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(rows[2 + i], want[i]) << i;
  EXPECT_EQ(rows[13].substr(0, 19), "2\tdecode\t3\t-1\tfake_");
}

TEST_F(CudaExecutor, WithoutTracesDecodeStaysAGraphWithoutEvents) {
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL).ok());
  std::vector<float> logits;
  ASSERT_TRUE(prefill({3, 4, 5}, 0, &logits).ok());
  ASSERT_TRUE(decode(7, 3, &logits).ok());
  const std::vector<call> calls = read_log(log_);
  EXPECT_EQ(count(calls, "cuGraphLaunch"), 1u);
  EXPECT_EQ(count(calls, "cuEventCreate"), 0u);
  EXPECT_EQ(count(calls, "cuEventRecord"), 0u);
}

TEST_F(CudaExecutor, AFailingEventCallNamesIt) {
  profile_path_ = dir_.file("profile.tsv");
  setenv("FAKE_CUDA_FAIL", "cuEventElapsedTime#2=1", 1);
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL).ok());
  std::vector<float> logits;
  const sgc::status s = prefill({3, 4, 5}, 0, &logits);
  ASSERT_EQ(s.code(), sgc::status_code::internal) << s.to_string();
  EXPECT_EQ(s.message(), "cannot time prefill step 1 (layer 0) for "
                         "SGC_CUDA_PROFILE");
  ASSERT_FALSE(s.notes().empty());
  EXPECT_NE(s.notes()[0].find("cuEventElapsedTime failed: "
                              "CUDA_ERROR_INVALID_VALUE (1)"),
            std::string::npos)
      << s.notes()[0];
}

TEST_F(CudaExecutor, AnUnwritableProfileIsAUsageError) {
  profile_path_ = dir_.file("no-such-dir/profile.tsv");
  const sgc::status s = make(SGC_TEST_FAKE_CUDA_MODEL);
  ASSERT_EQ(s.code(), sgc::status_code::usage) << s.to_string();
  EXPECT_EQ(s.message().find("cannot create the launch profile '"), 0u)
      << s.message();
}

TEST_F(CudaExecutor, DumpRecordsEveryLaunchsWrittenOperands) {
  dump_path_ = dir_.file("gpu.dump");
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL).ok());
  std::vector<float> logits;
  ASSERT_TRUE(prefill({3, 4, 5}, 0, &logits).ok());
  ASSERT_TRUE(decode(7, 3, &logits).ok());
  const std::vector<call> calls = read_log(log_);
  EXPECT_EQ(count(calls, "cuGraphLaunch"), 0u);
  const std::vector<dump_record> records = read_dump(dump_path_);
  // Per call: fake_embed h; fake_attn h, K0, V1, u; fake_append h, K0, V0,
  // K1, V1; fake_logits u, logits (fake_cuda_model.c's operands; the
  // tokens, step state and weights are inputs only).
  ASSERT_EQ(records.size(), 24u);
  EXPECT_EQ(records[0].header,
            "{\"call\":0,\"phase\":\"prefill\",\"step\":0,\"layer\":-1,"
            "\"kernel\":\"fake_embed\",\"tokens\":3,\"operand\":4,"
            "\"kind\":\"workspace\",\"dtype\":\"F32\",\"bytes\":96}");
  EXPECT_EQ(records[2].header,
            "{\"call\":0,\"phase\":\"prefill\",\"step\":1,\"layer\":0,"
            "\"kernel\":\"fake_attn\",\"tokens\":3,\"operand\":2,"
            "\"kind\":\"k_cache\",\"dtype\":\"F32\",\"bytes\":2048}");
  EXPECT_NE(records[3].header.find("\"operand\":3,\"kind\":\"v_cache\","
                                   "\"dtype\":\"F32\",\"bytes\":128}"),
            std::string::npos)
      << records[3].header;
  const dump_record &last = records[23];
  EXPECT_EQ(last.header,
            "{\"call\":1,\"phase\":\"decode\",\"step\":3,\"layer\":-1,"
            "\"kernel\":\"fake_logits\",\"tokens\":1,\"operand\":3,"
            "\"kind\":\"workspace\",\"dtype\":\"F32\",\"bytes\":64}");
  // The logits as the launch left them: the fake writes c + 100 p.
  ASSERT_EQ(last.data.size(), 64u);
  for (int c = 0; c < 16; ++c) {
    float v;
    std::memcpy(&v, last.data.data() + 4 * c, 4);
    EXPECT_EQ(v, c + 300.0f) << c;
  }
}

TEST_F(CudaExecutor, LogitsRowsComeBack) {
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL).ok());
  // The fake writes row r of a call at position p as c + 100 (p + r).
  std::vector<float> logits;
  ASSERT_TRUE(prefill({3, 4, 5, 6, 7}, 2, &logits).ok());
  for (int c = 0; c < 16; ++c)
    EXPECT_EQ(logits[c], c + 100.0f * (2 + 4)) << c;
  ASSERT_TRUE(prefill({3, 4, 5}, 7, &logits, /*all=*/true).ok());
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 16; ++c)
      EXPECT_EQ(logits[r * 16 + c], c + 100.0f * (7 + r)) << r << " " << c;
  // Each decode token sees its own position: the step state is copied
  // before every replay of the one graph.
  for (int64_t pos = 10; pos < 13; ++pos) {
    ASSERT_TRUE(decode(7, pos, &logits).ok());
    for (int c = 0; c < 16; ++c)
      EXPECT_EQ(logits[c], c + 100.0f * pos) << pos << " " << c;
  }
  // What was copied: the last row of the first call (row 4 of 16 floats at
  // workspace offset 512), then three whole rows.
  const std::vector<call> calls = read_log(log_);
  const uint64_t ws = allocation_of(calls, 1024);
  std::vector<std::string> copies;
  for (const call &c : calls)
    if (c.name == "cuMemcpyDtoHAsync_v2")
      copies.push_back(std::to_string(hex(c.args.at("src")) - ws) + "+" +
                       c.args.at("bytes"));
  const std::vector<std::string> want = {"768+64", "512+192", "512+64",
                                         "512+64", "512+64"};
  EXPECT_EQ(copies, want);
}

TEST_F(CudaExecutor, Bf16LogitsBecomeFloat) {
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL_BF16_LOGITS).ok());
  // bf16 rows: 0.5 c + 16 r; the last of three rows is r = 2.
  std::vector<float> logits;
  ASSERT_TRUE(prefill({3, 4, 5}, 0, &logits).ok());
  for (int c = 0; c < 16; ++c)
    EXPECT_EQ(logits[c], 0.5f * c + 32.0f) << c;
  const std::vector<call> calls = read_log(log_);
  const uint64_t ws = allocation_of(calls, 1024);
  bool seen = false;
  for (const call &c : calls)
    if (c.name == "cuMemcpyDtoHAsync_v2") {
      EXPECT_EQ(hex(c.args.at("src")) - ws, 512u + 2 * 32);
      EXPECT_EQ(c.args.at("bytes"), "32");
      seen = true;
    }
  EXPECT_TRUE(seen);
}

TEST_F(CudaExecutor, WeightsCopiedOnceWithProgress) {
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL).ok());
  const std::vector<call> calls = read_log(log_);
  const uint64_t w = allocation_of(calls, 288);
  std::vector<std::string> copies;
  for (const call &c : calls)
    if (c.name == "cuMemcpyHtoDAsync_v2")
      copies.push_back(std::to_string(hex(c.args.at("dst")) - w) + "+" +
                       c.args.at("bytes") + " pinned=" + c.args.at("pinned"));
  const std::vector<std::string> want = {"0+256 pinned=1", "256+32 pinned=1"};
  EXPECT_EQ(copies, want);
  ASSERT_FALSE(progress_.empty());
  EXPECT_EQ(progress_.back().first, 288u);
  EXPECT_EQ(progress_.back().second, 288u);
}

TEST_F(CudaExecutor, WeightsCopiedInChunks) {
  // Staging buffers of 100 bytes: the embedding (256 B at 0) in three
  // chunks, the norm (32 B at 256) in one, each tensor's bytes where the
  // plan expects them.
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL, 64, 100).ok());
  const std::vector<call> calls = read_log(log_);
  const uint64_t w = allocation_of(calls, 288);
  std::vector<std::string> copies;
  for (const call &c : calls)
    if (c.name == "cuMemcpyHtoDAsync_v2")
      copies.push_back(std::to_string(hex(c.args.at("dst")) - w) + "+" +
                       c.args.at("bytes"));
  const std::vector<std::string> want = {"0+100", "100+100", "200+56",
                                         "256+32"};
  EXPECT_EQ(copies, want);
  std::vector<std::pair<uint64_t, uint64_t>> seen = {
      {100, 288}, {200, 288}, {256, 288}, {288, 288}};
  EXPECT_EQ(progress_, seen);
  // The bytes on the "device" are the checkpoint's (the fake's device
  // memory is host memory).
  const uint8_t *device = reinterpret_cast<const uint8_t *>(w);
  EXPECT_EQ(std::memcmp(device, weights_.embed.data(), 256), 0);
  EXPECT_EQ(std::memcmp(device + 256, weights_.norm.data(), 32), 0);
}

/// The status of |s| as text, for messages and substring checks.
std::string text(const sgc::status &s) { return s.to_string(); }

TEST_F(CudaExecutor, OutOfMemoryNamesTheCall) {
  setenv("FAKE_CUDA_FAIL", "cuMemAlloc_v2=2", 1);
  const sgc::status s = make(SGC_TEST_FAKE_CUDA_MODEL);
  EXPECT_EQ(s.code(), sgc::status_code::device_unavailable) << text(s);
  EXPECT_EQ(s.message(), "cannot allocate the KV cache on the GPU (4,480 B)");
  EXPECT_NE(text(s).find(": cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2)"),
            std::string::npos)
      << text(s);
  EXPECT_NE(text(s).find("cuda_executor.cc:"), std::string::npos);
}

TEST_F(CudaExecutor, TooLittleFreeMemoryIsRefusedFirst) {
  setenv("FAKE_CUDA_FREE_BYTES", "4000", 1);
  const sgc::status s = make(SGC_TEST_FAKE_CUDA_MODEL);
  EXPECT_EQ(s.code(), sgc::status_code::device_unavailable) << text(s);
  // 288 weights + 4,480 KV + 1,024 workspace + 64 step state.
  EXPECT_EQ(s.message(), "the model does not fit in the GPU's free memory: "
                         "5,856 B needed, 4,000 B free");
  EXPECT_EQ(count(read_log(log_), "cuMemAlloc_v2"), 0u);
}

TEST_F(CudaExecutor, FailingLaunchAndGraphCallsNameTheCall) {
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL).ok());
  std::vector<float> logits;
  setenv("FAKE_CUDA_FAIL", "cuLaunchKernelEx#2=1", 1);
  sgc::status s = prefill({3, 4}, 0, &logits);
  EXPECT_EQ(s.code(), sgc::status_code::internal) << text(s);
  EXPECT_EQ(s.message(), "cannot launch kernel 'fake_attn' (prefill step 1 "
                         "(layer 0))");
  EXPECT_NE(text(s).find(": cuLaunchKernelEx failed: "), std::string::npos);
  EXPECT_NE(text(s).find("CUDA_ERROR_INVALID_VALUE (1)"), std::string::npos);

  setenv("FAKE_CUDA_FAIL", "cuGraphInstantiateWithFlags=999", 1);
  s = decode(7, 2, &logits);
  EXPECT_EQ(s.code(), sgc::status_code::internal) << text(s);
  EXPECT_EQ(s.message(), "cannot instantiate the decode phase's CUDA graph");
  EXPECT_NE(text(s).find("CUDA_ERROR_UNKNOWN (999)"), std::string::npos);
}

TEST_F(CudaExecutor, RefusedSharedMemoryOptInNamesTheKernel) {
  setenv("FAKE_CUDA_FAIL", "cuFuncSetAttribute=1", 1);
  const sgc::status s = make(SGC_TEST_FAKE_CUDA_MODEL);
  EXPECT_EQ(s.code(), sgc::status_code::internal) << text(s);
  EXPECT_EQ(s.message(), "kernel 'fake_attn' of CUDA variant 'sm_90a' cannot "
                         "have 65536 bytes of dynamic shared memory");
  EXPECT_NE(text(s).find(": cuFuncSetAttribute failed: "
                         "CUDA_ERROR_INVALID_VALUE (1)"),
            std::string::npos)
      << text(s);
}

TEST_F(CudaExecutor, KernelsWithStaticSharedMemoryOptInToTheirDynamic) {
  // fake_append has 44 KiB of static shared memory and its steps bring 8 KiB
  // of dynamic: under 48 KiB of dynamic, but over 48 KiB together, which a
  // driver refuses without the opt-in.
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL_STATIC_SHARED).ok());
  std::vector<float> logits;
  const sgc::status s = prefill({3, 4, 5}, 0, &logits);
  ASSERT_TRUE(s.ok()) << text(s);
  ASSERT_TRUE(decode(7, 3, &logits).ok());
  std::vector<std::string> optins;
  for (const call &c : read_log(log_))
    if (c.name == "cuFuncSetAttribute")
      optins.push_back(c.args.at("name") + " " + c.args.at("value"));
  const std::vector<std::string> want = {"fake_attn 65536",
                                         "fake_append 8192"};
  EXPECT_EQ(optins, want);
}

// The launches' pdl= words, in order, with a '|' before each call's.
std::string pdl_pattern(const std::vector<call> &calls) {
  std::string out;
  for (const call &c : calls) {
    if (c.name == "cuMemcpyHtoDAsync_v2" || c.name == "cuStreamBeginCapture_v2")
      out += "|";
    else if (c.name == "cuLaunchKernelEx")
      out += c.args.at("pdl");
  }
  return out;
}

TEST_F(CudaExecutor, KernelsThatWaitLaunchWithProgrammaticSerialization) {
  // Every kernel waits for its predecessor: each call's launches after the
  // first ask for PDL, the captured decode launches too.
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL_WAITS).ok());
  std::vector<float> logits;
  ASSERT_TRUE(prefill({3, 4, 5}, 0, &logits).ok());
  ASSERT_TRUE(decode(7, 3, &logits).ok());
  ASSERT_TRUE(decode(8, 4, &logits).ok());
  // Weights and state copies, the prefill, the decode's copy, its capture.
  std::string p = pdl_pattern(read_log(log_));
  EXPECT_NE(p.find("|0111||0111|"), std::string::npos) << p;
  EXPECT_EQ(p.find("|1"), std::string::npos) << p;
}

TEST_F(CudaExecutor, KernelsThatDoNotWaitOrPdlOffLaunchPlainly) {
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL).ok());
  std::vector<float> logits;
  ASSERT_TRUE(prefill({3, 4, 5}, 0, &logits).ok());
  EXPECT_EQ(pdl_pattern(read_log(log_)).find('1'), std::string::npos);
  // Kernels that wait, with the variable `name` set to `value` while the
  // executor is made: no launch asks for PDL.
  auto plain_with = [&](const char *name, const char *value) {
    setenv(name, value, 1);
    ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL_WAITS).ok());
    unsetenv(name);
    ASSERT_TRUE(prefill({3, 4, 5}, 0, &logits).ok());
    ASSERT_TRUE(decode(7, 3, &logits).ok());
    EXPECT_EQ(pdl_pattern(read_log(log_)).find('1'), std::string::npos)
        << name << "=" << value;
  };
  plain_with("SGC_CUDA_PDL", "0");
  // A driver before 12.3 cannot capture programmatic launches in a graph.
  plain_with("FAKE_CUDA_DRIVER_VERSION", "12020");
}

TEST_F(CudaExecutor, AFaultWhileRunningNamesThePhase) {
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL).ok());
  // A kernel fault shows at the next synchronization: the one after the
  // logits copy.
  std::vector<float> logits;
  reset_fake_counts();
  setenv("FAKE_CUDA_FAIL", "cuStreamSynchronize=700", 1);
  sgc::status s = decode(3, 0, &logits);
  EXPECT_EQ(s.code(), sgc::status_code::internal) << text(s);
  EXPECT_EQ(s.message(), "the GPU failed while running the decode phase");
  EXPECT_NE(text(s).find(": cuStreamSynchronize failed: "
                         "CUDA_ERROR_ILLEGAL_ADDRESS (700)"),
            std::string::npos)
      << text(s);
}

TEST_F(CudaExecutor, KernelsMustFitTheSteps) {
  // Refused before the driver is asked for anything, naming the model, the
  // variant, the step and the kernel.
  sgc::status s = make(SGC_TEST_FAKE_CUDA_MODEL_STEP_PARAMS);
  EXPECT_EQ(s.code(), sgc::status_code::bad_input) << text(s);
  EXPECT_EQ(s.message(),
            std::string(SGC_TEST_FAKE_CUDA_MODEL_STEP_PARAMS) +
                ": CUDA variant 'sm_90a': prefill step 2 (layer 0) (kernel "
                "'fake_append'): the kernel takes 5 parameters, the step "
                "passes 6");
  EXPECT_EQ(count(read_log(log_), "cuInit"), 0u);
  s = make(SGC_TEST_FAKE_CUDA_MODEL_BIG_BLOCK);
  EXPECT_EQ(s.code(), sgc::status_code::bad_input) << text(s);
  EXPECT_EQ(s.message(), std::string(SGC_TEST_FAKE_CUDA_MODEL_BIG_BLOCK) +
                             ": CUDA variant 'sm_90a': decode step 3 (kernel "
                             "'fake_logits'): 2048 threads per block (at most "
                             "1024)");
  // The emulator's table says fake_append uses dynamic shared memory that its
  // launches do not bring: refused for the GPU too (the same kernels).
  s = make(SGC_TEST_FAKE_CUDA_MODEL_DYNAMIC_SHARED);
  EXPECT_EQ(s.code(), sgc::status_code::bad_input) << text(s);
  EXPECT_NE(s.message().find(": CUDA variant 'sm_90a': "), std::string::npos)
      << text(s);
  EXPECT_NE(s.message().find("(kernel 'fake_append'): the kernel uses 256 bytes "
                             "of dynamic shared memory, the launch asks for 0"),
            std::string::npos)
      << text(s);
}

TEST_F(CudaExecutor, MissingKernelNamesIt) {
  const sgc::status s = make(SGC_TEST_FAKE_CUDA_MODEL_NO_KERNEL);
  EXPECT_EQ(s.code(), sgc::status_code::internal) << text(s);
  EXPECT_EQ(s.message(), "the fatbin lacks kernel 'fake_attn' of CUDA variant "
                         "'sm_90a'");
  EXPECT_NE(text(s).find("CUDA_ERROR_NOT_FOUND (500)"), std::string::npos);
}

TEST_F(CudaExecutor, ARefusedFatbinNamesTheVariant) {
  // The fake driver takes only its text fatbins, as a driver refuses an
  // image it cannot read.
  const sgc::status s = make(SGC_TEST_FAKE_CUDA_MODEL_SM90A);
  EXPECT_EQ(s.code(), sgc::status_code::internal) << text(s);
  EXPECT_NE(s.message().find("cannot load the fatbin of CUDA variant "
                             "'sm_90a' of 'fake-gemma3-toy-cuda'"),
            std::string::npos)
      << text(s);
  EXPECT_NE(text(s).find("cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE "
                         "(200)"),
            std::string::npos)
      << text(s);
}

TEST_F(CudaExecutor, ParameterListMustMatchTheFatbin) {
  const sgc::status s = make(SGC_TEST_FAKE_CUDA_MODEL_PARAM_COUNT);
  EXPECT_EQ(s.code(), sgc::status_code::bad_input) << text(s);
  EXPECT_NE(s.message().find("kernel 'fake_append' of CUDA variant 'sm_90a' "
                             "does not take the 6 8-byte parameters the model "
                             "lists"),
            std::string::npos)
      << text(s);
  EXPECT_NE(text(s).find("the fatbin's kernel has a parameter 6 too"),
            std::string::npos);
}

TEST_F(CudaExecutor, NoDeviceIsDeviceUnavailable) {
  cuda_executor::options o;
  o.library = SGC_TEST_FAKE_CUDA_NO_DEVICE;
  ASSERT_TRUE(model_library::open(SGC_TEST_FAKE_CUDA_MODEL, &model_).ok());
  sgc::status s = cuda_executor::create(model_, o, &exec_);
  EXPECT_EQ(s.code(), sgc::status_code::device_unavailable) << text(s);
  EXPECT_EQ(s.message(), "no CUDA device");
  o.library = "libsgc-test-no-such-driver.so.1";
  s = cuda_executor::create(model_, o, &exec_);
  EXPECT_EQ(s.code(), sgc::status_code::device_unavailable) << text(s);
  EXPECT_EQ(s.message(), "no CUDA driver found");
}

//===----------------------------------------------------------------------===//
// sgc-run --device cuda, with the fake as libcuda.so.1
//===----------------------------------------------------------------------===//

/// Runs sgc-run with |env| ("NAME=value" words) through env(1).
sgc_test::process_result run_sgc(const std::vector<std::string> &env,
                                 const std::vector<std::string> &args) {
  std::vector<std::string> argv = {"/usr/bin/env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(SGC_RUN_PATH);
  argv.insert(argv.end(), args.begin(), args.end());
  return sgc_test::run_process(argv);
}

TEST_F(CudaExecutor, SgcRunGeneratesThroughTheGraph) {
  const std::string lib = dir_.file("lib");
  ASSERT_EQ(system(("mkdir -p " + lib).c_str()), 0);
  ASSERT_EQ(symlink(SGC_TEST_FAKE_CUDA, (lib + "/libcuda.so.1").c_str()), 0);
  const std::vector<std::string> env = {"LD_LIBRARY_PATH=" + lib,
                                        "FAKE_CUDA_LOG=" + log_};
  sgc_test::process_result r =
      run_sgc(env, {SGC_TEST_FAKE_CUDA_MODEL, "--device", "cuda",
                    "--load-format", "dummy", "--prompt-ids", "3,4,5",
                    "--max-new-tokens", "4", "--ignore-eos", "--no-progress",
                    "-v"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The fake's logits peak at the last column: token 15 every time.
  EXPECT_EQ(r.out, "15 15 15 15\n") << r.err;
  EXPECT_NE(r.err.find("\ncuda: variant 'sm_90a'\n"), std::string::npos)
      << r.err;
  const std::vector<call> calls = read_log(log_);
  EXPECT_EQ(count(calls, "cuModuleLoadData"), 1u);
  EXPECT_EQ(count(calls, "cuStreamBeginCapture_v2"), 1u);
  EXPECT_EQ(count(calls, "cuGraphLaunch"), 3u); // tokens 2..4

  // A failing allocation: exit 4, the message, the call in a note.
  r = run_sgc({"LD_LIBRARY_PATH=" + lib, "FAKE_CUDA_FAIL=cuMemAlloc_v2=2"},
              {SGC_TEST_FAKE_CUDA_MODEL, "--device", "cuda", "--load-format",
               "dummy", "--prompt-ids", "3", "--no-progress"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(sgc_test::lines(r.err).at(0),
            "error: cannot allocate the KV cache on the GPU (4,480 B)")
      << r.err;
  EXPECT_NE(r.err.find("CUDA_ERROR_OUT_OF_MEMORY (2)"), std::string::npos);
}

TEST_F(CudaExecutor, SgcRunWithoutADriverExits4) {
  // An empty library path: no libcuda.so.1 unless the machine has one.
  sgc_test::process_result r =
      run_sgc({"LD_LIBRARY_PATH=" + dir_.path()},
              {SGC_TEST_FAKE_CUDA_MODEL, "--device", "cuda", "--load-format",
               "dummy", "--prompt-ids", "3", "--no-progress"});
  void *real = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (real) {
    dlclose(real);
    GTEST_SKIP() << "this machine has a CUDA driver";
  }
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(sgc_test::lines(r.err).at(0), "error: no CUDA driver found");
}

//===----------------------------------------------------------------------===//
// The emulator executor (--device cuda-emu)
//===----------------------------------------------------------------------===//

class CudaEmu : public CudaExecutor {
protected:
  void SetUp() override {
    CudaExecutor::SetUp();
    setenv("SGC_EMU_SCHEDULES", "3", 1);
  }
  void TearDown() override {
    unsetenv("SGC_EMU_SCHEDULES");
    CudaExecutor::TearDown();
  }
  sgc::status make_emu(const char *model_path, int64_t context = 64) {
    sgc::status s = model_library::open(model_path, &model_);
    if (!s.ok())
      return s;
    sgc_weights_options_t wo;
    sgc_weights_options_default(&wo);
    s = bound_weights::bind(model_, dir_.file("w.safetensors").c_str(), wo,
                            &weights_bound_);
    if (s.ok())
      s = sgc::runtime::create_emu_executor(model_, nullptr, &exec_);
    if (s.ok())
      s = exec_->allocate(context, 1);
    if (s.ok())
      s = exec_->bind(*weights_bound_);
    return s;
  }
#ifdef SGC_TEST_HAVE_CUDA_EMU
  /// Prefill |tokens| in chunks of |chunk|, then decode |decode| tokens,
  /// comparing every row with the reference (exact: the same float ops).
  void expect_reference(int64_t chunk, const std::vector<int32_t> &prompt,
                        const std::vector<int32_t> &decoded) {
    std::vector<int32_t> all = prompt;
    all.insert(all.end(), decoded.begin(), decoded.end());
    const std::vector<float> want = fake_model::logits(weights_, all);
    std::vector<float> logits;
    const int64_t n = static_cast<int64_t>(prompt.size());
    for (int64_t pos = 0; pos < n; pos += chunk) {
      const int64_t m = std::min(chunk, n - pos);
      std::vector<int32_t> part(prompt.begin() + pos, prompt.begin() + pos + m);
      sgc::status s = prefill(part, pos, &logits, /*all=*/true);
      ASSERT_TRUE(s.ok()) << s.to_string();
      for (int64_t r = 0; r < m; ++r)
        for (int c = 0; c < 16; ++c)
          ASSERT_EQ(logits[r * 16 + c], want[(pos + r) * 16 + c])
              << "chunk " << chunk << " position " << pos + r << " logit " << c;
    }
    for (size_t i = 0; i < decoded.size(); ++i) {
      const int64_t pos = n + static_cast<int64_t>(i);
      sgc::status s = decode(decoded[i], pos, &logits);
      ASSERT_TRUE(s.ok()) << s.to_string();
      for (int c = 0; c < 16; ++c)
        ASSERT_EQ(logits[c], want[pos * 16 + c])
            << "decode position " << pos << " logit " << c;
    }
  }
#endif
};

TEST_F(CudaEmu, NeedsTheEmulatorTable) {
  const sgc::status s = make_emu(SGC_TEST_FAKE_CUDA_MODEL_NO_EMU);
  EXPECT_EQ(s.code(), sgc::status_code::mismatch) << text(s);
  EXPECT_NE(s.message().find("carries no kernels for the CUDA emulator"),
            std::string::npos);
}

TEST_F(CudaEmu, BadScheduleCountIsAUsageError) {
  setenv("SGC_EMU_SCHEDULES", "0", 1);
  const sgc::status s = make_emu(SGC_TEST_FAKE_CUDA_MODEL);
#ifdef SGC_TEST_HAVE_CUDA_EMU
  EXPECT_EQ(s.code(), sgc::status_code::usage) << text(s);
  EXPECT_EQ(s.message(),
            "SGC_EMU_SCHEDULES='0' is not a schedule count in [1, 64]");
#else
  EXPECT_EQ(s.code(), sgc::status_code::device_unavailable) << text(s);
#endif
}

#ifdef SGC_TEST_HAVE_CUDA_EMU

TEST_F(CudaEmu, MatchesTheReferenceInChunksAndPastTheRing) {
  // The ring holds 4 positions: chunks of window - 1, window + 1 and the
  // whole maximum chunk, then decoding well past several wrap-arounds.
  const std::vector<int32_t> prompt = {2, 9, 4, 11, 7, 3, 14, 5, 6, 1, 8};
  const std::vector<int32_t> decoded = {12, 0, 13, 10, 9, 3, 7};
  for (int64_t chunk : {3, 5, 8}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    exec_.reset();
    ASSERT_TRUE(make_emu(SGC_TEST_FAKE_CUDA_MODEL).ok());
    expect_reference(chunk, prompt, decoded);
  }
}

TEST_F(CudaEmu, TheNvccFatbinModelRunsOnTheEmulatorToo) {
  // fake_cuda_model_sm90a.so carries nvcc's fatbin (for scripts/device-check
  // on a GPU host) and the same emulator kernels: the reference again.
  ASSERT_TRUE(make_emu(SGC_TEST_FAKE_CUDA_MODEL_SM90A).ok());
  expect_reference(3, {2, 9, 4, 11, 7, 3, 14}, {12, 0, 13, 10, 9});
  const sgc_abi_variant_t &v = model_->table().variants[0];
  const std::string file = sgc_test::read_file(
      std::string(SGC_TEST_SOURCE_DIR) +
      "/test/Inputs/cuda/fake_cuda_kernels.fatbin");
  ASSERT_EQ(v.fatbin_bytes, file.size());
  EXPECT_EQ(std::memcmp(v.fatbin, file.data(), file.size()), 0);
  // A fatbin (magic 0xBA55ED50) naming each kernel.
  EXPECT_EQ(file.substr(0, 4), std::string("\x50\xed\x55\xba", 4));
  for (const char *k : {"fake_embed", "fake_attn", "fake_append",
                        "fake_logits"})
    EXPECT_NE(file.find(k), std::string::npos) << k;
}

TEST_F(CudaEmu, DumpPairsWithTheCudaExecutorsDump) {
  // The same calls on the fake GPU and on the emulator, both dumped.
  dump_path_ = dir_.file("gpu.dump");
  ASSERT_TRUE(make(SGC_TEST_FAKE_CUDA_MODEL).ok());
  std::vector<float> logits;
  ASSERT_TRUE(prefill({3, 4, 5}, 0, &logits).ok());
  ASSERT_TRUE(decode(7, 3, &logits).ok());
  exec_.reset();
  const std::string emu_dump = dir_.file("emu.dump");
  setenv("SGC_CUDA_DUMP", emu_dump.c_str(), 1);
  ASSERT_TRUE(make_emu(SGC_TEST_FAKE_CUDA_MODEL).ok());
  ASSERT_TRUE(prefill({3, 4, 5}, 0, &logits).ok());
  ASSERT_TRUE(decode(7, 3, &logits).ok());
  exec_.reset();
  unsetenv("SGC_CUDA_DUMP");
  const std::vector<dump_record> gpu = read_dump(dump_path_);
  const std::vector<dump_record> emu = read_dump(emu_dump);
  ASSERT_EQ(gpu.size(), 24u);
  ASSERT_EQ(emu.size(), gpu.size());
  for (size_t i = 0; i < gpu.size(); ++i)
    EXPECT_EQ(emu[i].header, gpu[i].header) << i;
  // The emulator's records hold what its kernels computed: the decode
  // logits are the reference's row at position 3.
  const std::vector<float> want = fake_model::logits(weights_, {3, 4, 5, 7});
  const dump_record &last = emu.back();
  ASSERT_EQ(last.data.size(), 64u);
  for (int c = 0; c < 16; ++c) {
    float v;
    std::memcpy(&v, last.data.data() + 4 * c, 4);
    EXPECT_EQ(v, want[3 * 16 + c]) << c;
  }
}

TEST_F(CudaEmu, FindsARaceBetweenBlocks) {
  ASSERT_TRUE(make_emu(SGC_TEST_FAKE_CUDA_MODEL_EMU_RACE).ok());
  std::vector<float> logits;
  // Up to 4 tokens no two blocks share a ring slot; 6 tokens race.
  ASSERT_TRUE(prefill({1, 2, 3, 4}, 0, &logits).ok());
  const sgc::status s = prefill({1, 2, 3, 4, 5, 6}, 4, &logits);
  EXPECT_EQ(s.code(), sgc::status_code::internal) << text(s);
  EXPECT_NE(text(s).find("fake_append"), std::string::npos) << text(s);
  EXPECT_NE(text(s).find("prefill step 2"), std::string::npos) << text(s);
  EXPECT_NE(text(s).find("race"), std::string::npos) << text(s);
}

TEST_F(CudaEmu, FindsAnAccessOutOfBounds) {
  ASSERT_TRUE(make_emu(SGC_TEST_FAKE_CUDA_MODEL_EMU_OOB).ok());
  std::vector<float> logits;
  // Blocks past the call's tokens read a token that is not there.
  const sgc::status s = prefill({1, 2, 3}, 0, &logits);
  EXPECT_EQ(s.code(), sgc::status_code::internal) << text(s);
  EXPECT_NE(text(s).find("fake_embed"), std::string::npos) << text(s);
  EXPECT_NE(text(s).find("fake_embed: load of the token"), std::string::npos)
      << text(s);
}

TEST_F(CudaEmu, FindsADivergentBarrier) {
  ASSERT_TRUE(make_emu(SGC_TEST_FAKE_CUDA_MODEL_EMU_DIVERGENT).ok());
  std::vector<float> logits;
  const sgc::status s = prefill({1, 2}, 0, &logits);
  EXPECT_EQ(s.code(), sgc::status_code::internal) << text(s);
  EXPECT_NE(text(s).find("fake_attn"), std::string::npos) << text(s);
  EXPECT_NE(text(s).find("barrier"), std::string::npos) << text(s);
}

TEST_F(CudaEmu, SgcRunGeneratesOnTheEmulator) {
  write_weights(dir_.file("w.safetensors"), weights_);
  sgc_test::process_result r =
      run_sgc({"SGC_EMU_SCHEDULES=2"},
              {SGC_TEST_FAKE_CUDA_MODEL, "--device", "cuda-emu", "--weights",
               dir_.file("w.safetensors"), "--prompt-ids", "2,9,4,11,7",
               "--max-new-tokens", "4", "--ignore-eos", "--prefill-chunk", "3",
               "--no-progress", "-v"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("\ncuda-emu: variant 'sm_90a'\n"), std::string::npos)
      << r.err;
  // Greedy tokens from the reference, computed the same way.
  std::vector<int32_t> seq = {2, 9, 4, 11, 7};
  std::string want;
  for (int i = 0; i < 4; ++i) {
    const std::vector<float> l = fake_model::logits(weights_, seq);
    const float *row = l.data() + (seq.size() - 1) * 16;
    int32_t best = 0;
    for (int32_t v = 1; v < 16; ++v)
      if (row[v] > row[best])
        best = v;
    want += (i ? " " : "") + std::to_string(best);
    seq.push_back(best);
  }
  EXPECT_EQ(r.out, want + "\n") << r.err;
}

#endif // SGC_TEST_HAVE_CUDA_EMU

} // namespace
