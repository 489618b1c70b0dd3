/*
 * sgc-emu-sample - the full seeds' CUDA kernels at the shapes the tiny
 * models never reach, emulated for a few sampled CTAs and compared with a
 * CPU reference of the same op (issue 11, item 4).
 *
 *   sgc-emu-sample MODEL.so --specs SPECS [--seed N] [--schedules N]
 *                  [--random-ctas N] [--family F]... [--plant-bug]
 *
 * MODEL.so is `sgc compile --target=cuda:sm_90a`; SPECS is kernel-specs.py
 * on what the same graph's `sgc compile --kernel-specs=FILE` wrote. For the first decode
 * step of every distinct gemv_rows, attn_decode_splitk, qknorm_rope_append,
 * row_chain and embed kernel: seeded random inputs (bf16 weights of spread
 * 1/sqrt(K), the caches full of keys, the step state at a position past the
 * ring's wrap-around), the sampled CTAs run in the emulator under its
 * schedules, every output element of them checked against the reference's
 * interval (check.h) and every element of the other CTAs checked untouched;
 * then the prefill's own qknorm_rope_append, row_chain, embed,
 * attn_prefill, gemm_mma and kv_write kernels on a call of 300 tokens
 * ending there. One line per
 * kernel; exit 1 when any fails.
 */
#include "test/lib/sgc-emu-sample/check.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

using namespace emu_sample;

namespace {

[[noreturn]] void usage(const char *why) {
  std::fprintf(stderr,
               "sgc-emu-sample: %s\nusage: sgc-emu-sample MODEL.so --specs "
               "SPECS [--seed N] [--schedules N] [--random-ctas N] "
               "[--family gemv_rows|gemm_mma|attn_decode_splitk|"
               "attn_decode_mma|attn_prefill|kv_write|"
               "qknorm_rope_append|row_chain|embed]... "
               "[--plant-bug]\n",
               why);
  std::exit(2);
}

long number_arg(int argc, char **argv, int *i, long lo, long hi) {
  if (*i + 1 >= argc)
    usage((std::string(argv[*i]) + " needs a value").c_str());
  char *end = nullptr;
  const long v = std::strtol(argv[++*i], &end, 10);
  if (*end || v < lo || v > hi)
    usage((std::string(argv[*i - 1]) + " " + argv[*i] + " is not in [" +
           std::to_string(lo) + ", " + std::to_string(hi) + "]")
              .c_str());
  return v;
}

/// The families with a check and their checks.
const std::map<std::string, check_result (*)(kernel_case &)> &checks() {
  static const std::map<std::string, check_result (*)(kernel_case &)> all = {
      {"gemv_rows", check_gemv_rows},
      {"gemm_mma", check_gemm_mma},
      {"kv_write", check_kv_write},
      {"attn_decode_splitk", check_attn_decode},
      {"attn_decode_mma", check_attn_decode},
      {"attn_prefill", check_attn_prefill},
      {"qknorm_rope_append", check_qknorm_rope},
      {"row_chain", check_row_chain},
      {"embed", check_embed}};
  return all;
}

std::string family_of(const std::string &kernel) {
  const size_t u = kernel.find_last_of('_');
  return u == std::string::npos ? kernel : kernel.substr(0, u);
}

std::string list(const std::vector<uint32_t> &v) {
  std::string s;
  for (uint32_t x : v)
    s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::string summary(const std::string &family, const kernel_spec &s) {
  const char *keys_gemv[] = {"k",           "rows",    "epilogue", "cap",
                             "norm_offset", "prologue"};
  const char *keys_attn[] = {"q_heads",      "kv_heads",  "head_dim",
                             "window",       "scale",     "splits",
                             "tile_queries", "tile_keys", "col_splits"};
  std::string out;
  auto add = [&](const char *key) {
    auto it = s.fields.find(key);
    if (it != s.fields.end())
      out += std::string(out.empty() ? "" : " ") + key + "=" + it->second;
  };
  if (family == "qknorm_rope_append") {
    // One group per fused job: heads x head_dim, what it does, its window.
    const int jobs =
        std::atoi(s.fields.count("jobs") ? s.fields.at("jobs").c_str() : "0");
    for (int j = 0; j < jobs; ++j) {
      auto get = [&](const char *key) {
        auto it = s.fields.find("job" + std::to_string(j) + "." + key);
        return it == s.fields.end() ? std::string() : it->second;
      };
      std::string what = !get("copy").empty()      ? "copy"
                         : get("inv_freq").empty() ? "norm"
                                                   : "norm+rope";
      if (get("append") == "1")
        what += "+append";
      out += std::string(out.empty() ? "" : " ") + get("heads") + "x" +
             get("head_dim") + ":" + what + ":w" + get("window");
    }
  } else if (family == "gemv_rows" || family == "gemm_mma")
    for (const char *k : keys_gemv)
      add(k);
  else if (family == "row_chain")
    for (const char *k : {"width", "steps"})
      add(k);
  else if (family == "embed")
    add("scale");
  else if (family == "kv_write")
    for (const char *k : {"heads", "head_dim", "window"})
      add(k);
  else
    for (const char *k : keys_attn)
      add(k);
  return out;
}

} // namespace

int main(int argc, char **argv) {
  std::string model_path, specs_path;
  options opt;
  std::set<std::string> families;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--specs" && i + 1 < argc)
      specs_path = argv[++i];
    else if (a == "--seed")
      opt.seed = static_cast<uint64_t>(number_arg(argc, argv, &i, 0, 1L << 40));
    else if (a == "--schedules")
      opt.schedules = static_cast<int>(number_arg(argc, argv, &i, 1, 64));
    else if (a == "--random-ctas")
      opt.random_ctas = static_cast<int>(number_arg(argc, argv, &i, 0, 64));
    else if (a == "--family" && i + 1 < argc)
      families.insert(argv[++i]);
    else if (a == "--plant-bug")
      opt.plant_bug = true;
    else if (!a.empty() && a[0] != '-' && model_path.empty())
      model_path = a;
    else
      usage(("unknown argument '" + a + "'").c_str());
  }
  if (model_path.empty() || specs_path.empty())
    usage("a model and --specs are required");
  for (const std::string &f : families)
    if (!checks().count(f))
      usage(("no check for family '" + f + "'").c_str());
  if (families.empty())
    for (const auto &[f, fn] : checks())
      families.insert(f);

  std::string error;
  std::map<std::string, kernel_spec> specs;
  model m;
  if (!read_specs(specs_path, &specs, &error) || !m.open(model_path, &error)) {
    std::fprintf(stderr, "sgc-emu-sample: %s\n", error.c_str());
    return 1;
  }
  const sgc_model_v2_t &t = m.table();
  const sgc_abi_phase_t *decode = m.phase(SGC_ABI_PHASE_DECODE);
  const sgc_abi_phase_t *prefill = m.phase(SGC_ABI_PHASE_PREFILL);
  if (!decode) {
    std::fprintf(stderr, "sgc-emu-sample: %s: no decode phase\n",
                 model_path.c_str());
    return 1;
  }
  std::string prefill_text;
  if (prefill)
    prefill_text = ", prefill " + std::to_string(prefill->num_steps) +
                   " steps (" +
                   std::to_string(std::min<int64_t>(opt.prefill_tokens,
                                                    prefill->max_tokens)) +
                   " of " + std::to_string(prefill->max_tokens) + " tokens)";
  std::printf("model %s: vocab %lld, decode %u steps%s, seed %llu, %d "
              "schedules\n",
              t.model_id, static_cast<long long>(t.vocab_size),
              decode->num_steps, prefill_text.c_str(),
              static_cast<unsigned long long>(opt.seed), opt.schedules);
  normal_source random(opt.seed);
  std::set<std::string> seen;
  int checked = 0, failed = 0;
  const auto start = std::chrono::steady_clock::now();
  // The decode phase, then the prefill's own kernels of the families whose
  // checks take a token count.
  struct phase_run {
    const sgc_abi_phase_t *phase;
    const char *name;
  };
  for (const phase_run &ph :
       {phase_run{decode, "decode"}, phase_run{prefill, "prefill"}}) {
    if (!ph.phase)
      continue;
    const bool is_prefill = ph.phase == prefill;
    for (uint32_t si = ph.phase->first_step;
         si < ph.phase->first_step + ph.phase->num_steps; ++si) {
      const sgc_abi_step_t &step = t.steps[si];
      const std::string kernel = m.kernel_name(step);
      const std::string family = family_of(kernel);
      if (!families.count(family) || !seen.insert(kernel).second)
        continue;
      if (is_prefill && family != "qknorm_rope_append" &&
          family != "row_chain" && family != "embed" &&
          family != "attn_prefill" && family != "gemm_mma" &&
          family != "kv_write")
        continue;
      auto it = specs.find(kernel);
      if (it == specs.end()) {
        std::fprintf(stderr,
                     "sgc-emu-sample: %s: kernel %s has no spec in %s\n",
                     model_path.c_str(), kernel.c_str(), specs_path.c_str());
        return 1;
      }
      kernel_case c;
      c.m = &m;
      c.step_index = si - ph.phase->first_step;
      c.step = &step;
      c.kernel = kernel;
      c.spec = &it->second;
      c.max_tokens = ph.phase->max_tokens;
      c.tokens =
          is_prefill ? std::min<int64_t>(opt.prefill_tokens, c.max_tokens) : 1;
      c.phase = ph.name;
      c.ops = m.operands(step, opt.full_slots, c.max_tokens);
      c.opt = opt;
      c.random = &random;
      check_result r = checks().at(family)(c);
      const bool ok = r.error.empty() && r.outside == 0 &&
                      r.untouched_bad == 0 && r.outputs > 0;
      ++checked;
      failed += !ok;
      std::printf("%s: %s (%s)\n  %s step %u (layer %d), grid %ux%ux%u, "
                  "block %u, sampled CTAs %s\n",
                  ok ? "ok" : "FAIL", kernel.c_str(),
                  summary(family, it->second).c_str(), ph.name, c.step_index,
                  step.layer, step.grid[0], step.grid[1], step.grid[2],
                  step.block[0], list(r.ctas).c_str());
      if (!r.error.empty()) {
        std::printf("  emulator: %s\n", r.error.c_str());
        continue;
      }
      std::printf("  %lld outputs: max |err| %.3g (bound there %.3g), worst "
                  "err/bound %.3f, largest bound %.3g, %.2f s\n",
                  static_cast<long long>(r.outputs), r.max_error,
                  r.bound_at_max, r.worst_ratio, r.max_bound, r.seconds);
      if (r.outside)
        std::printf("  %lld outside their bound; first: %s\n",
                    static_cast<long long>(r.outside), r.first_bad.c_str());
      if (r.untouched_bad)
        std::printf("  %lld elements of CTAs that did not run were written\n",
                    static_cast<long long>(r.untouched_bad));
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!checked) {
    std::printf("FAILED: no kernel of the families asked for\n");
    return 1;
  }
  if (failed)
    std::printf("FAILED: %d of %d kernels (%.1f s)\n", failed, checked,
                seconds);
  else
    std::printf("PASSED: %d kernels (%.1f s)\n", checked, seconds);
  return failed ? 1 : 0;
}
