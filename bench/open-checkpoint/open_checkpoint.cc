/*
 * open_checkpoint.cc - measures how long opening a safetensors checkpoint
 * takes and how much memory it makes resident, before and after the tensor
 * data is touched (a benchmark, not a test: see run.sh).
 *
 *   sgc-bench-open-checkpoint generate DIR TOTAL_MB SHARDS
 *       writes a synthetic sharded checkpoint (BF16 tensors, real bytes)
 *   sgc-bench-open-checkpoint measure PATH [REPEATS]
 *       prints open time (min/median/max) and RSS after open / after touch
 */
#include "lib/safetensors/safetensors.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace st = sgc::safetensors;

namespace {

/// Resident set size in KiB from /proc/self/status (VmRSS), or -1.
long rss_kib(const char *field = "VmRSS:") {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(field, 0) == 0)
      return std::atol(line.c_str() + std::strlen(field));
  return -1;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

int generate(const std::string &dir, long total_mb, int shards) {
  // Gemma-like rows: [512, 3840] BF16 matrices (3.75 MiB each) plus small
  // norm vectors, spread over the shards; names sorted like HF checkpoints.
  const uint64_t total = static_cast<uint64_t>(total_mb) << 20;
  const int64_t rows = 512, cols = 3840;
  const uint64_t matrix_bytes = static_cast<uint64_t>(rows * cols * 2);
  const uint64_t matrices = std::max<uint64_t>(1, total / matrix_bytes);
  std::string index = "{\"metadata\":{\"total_size\":0},\"weight_map\":{";
  uint64_t next = 0;
  bool first = true;
  for (int s = 0; s < shards; ++s) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1,
                  shards);
    std::vector<st::tensor_source> src;
    const uint64_t end = matrices * (s + 1) / shards;
    for (; next < end; ++next) {
      for (int k = 0; k < 2; ++k) {
        st::tensor_source t;
        t.name = "model.language_model.layers." + std::to_string(next) +
                 (k ? ".input_layernorm.weight" : ".mlp.weight");
        t.type = sgc::dtype::bf16;
        t.shape =
            k ? std::vector<int64_t>{cols} : std::vector<int64_t>{rows, cols};
        t.generate = [](uint64_t off, void *dst, size_t n) {
          auto *p = static_cast<uint8_t *>(dst);
          for (size_t i = 0; i < n; ++i)
            p[i] = static_cast<uint8_t>((off + i) * 2654435761u >> 24);
          return sgc::status();
        };
        index += std::string(first ? "" : ",") + "\"" + t.name + "\":\"" +
                 name + "\"";
        first = false;
        src.push_back(std::move(t));
      }
    }
    const sgc::status rc = st::write(dir + "/" + name, src);
    if (!rc.ok()) {
      std::fputs(rc.to_string().c_str(), stderr);
      return 1;
    }
  }
  index += "}}\n";
  std::ofstream(dir + "/model.safetensors.index.json") << index;
  std::printf("wrote %llu matrices (%.2f GiB) in %d shards to %s\n",
              static_cast<unsigned long long>(matrices),
              static_cast<double>(matrices * matrix_bytes) / (1 << 30), shards,
              dir.c_str());
  return 0;
}

int measure(const std::string &path, int repeats) {
  const long rss_start = rss_kib();
  std::vector<double> times;
  std::unique_ptr<st::checkpoint> keep;
  long rss_after_open = 0;
  for (int r = 0; r < repeats; ++r) {
    std::unique_ptr<st::checkpoint> c;
    const auto t0 = std::chrono::steady_clock::now();
    const sgc::status s = st::checkpoint::open(path, &c);
    times.push_back(seconds_since(t0));
    if (!s.ok()) {
      std::fputs(s.to_string().c_str(), stderr);
      return 1;
    }
    if (r == 0) {
      rss_after_open = rss_kib();
      keep = std::move(c);
    }
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t sum = 0;
  for (const auto &e : keep->tensors()) {
    const uint8_t *p = e.shard->data(*e.info);
    for (uint64_t i = 0; i < e.info->bytes(); i += 4096)
      sum += p[i];
  }
  const double touch_s = seconds_since(t0);
  const long rss_after_touch = rss_kib();
  std::printf("checkpoint: %s (%zu tensors, %.3f GiB, %zu shards)\n",
              path.c_str(), keep->tensors().size(),
              static_cast<double>(keep->tensor_bytes()) / (1 << 30),
              keep->shards().size());
  std::printf("open (validate every header, mmap every shard), %d runs: "
              "min %.4f s, median %.4f s, max %.4f s\n",
              repeats, sorted.front(), sorted[sorted.size() / 2],
              sorted.back());
  std::printf("RSS: at start %.1f MiB, after open %.1f MiB (+%.1f MiB), "
              "after touching every page %.1f MiB (touch took %.3f s, "
              "checksum %llu)\n",
              rss_start / 1024.0, rss_after_open / 1024.0,
              (rss_after_open - rss_start) / 1024.0, rss_after_touch / 1024.0,
              touch_s, static_cast<unsigned long long>(sum % 1000));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc >= 5 && std::strcmp(argv[1], "generate") == 0)
    return generate(argv[2], std::atol(argv[3]), std::atoi(argv[4]));
  if (argc >= 3 && std::strcmp(argv[1], "measure") == 0)
    return measure(argv[2], argc >= 4 ? std::atoi(argv[3]) : 5);
  std::fprintf(stderr,
               "usage: %s generate DIR TOTAL_MB SHARDS\n"
               "       %s measure PATH [REPEATS]\n",
               argv[0], argv[0]);
  return 2;
}
