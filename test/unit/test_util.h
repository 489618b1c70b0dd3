/*
 * test_util.h - helpers shared by the unit tests: temporary directories,
 * raw files, safetensors images built by hand, running a subprocess.
 */
#ifndef SGC_TEST_UNIT_TEST_UTIL_H
#define SGC_TEST_UNIT_TEST_UTIL_H

#include <cstdint>
#include <string>
#include <vector>

namespace sgc_test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents
/// when the object dies.
class temp_dir {
public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir &) = delete;
  temp_dir &operator=(const temp_dir &) = delete;
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

void write_file(const std::string &path, const std::string &bytes);
std::string read_file(const std::string &path);

/// 8-byte little-endian length + |header| + |data|; |length| overrides the
/// length field when not ~0.
std::string safetensors_image(const std::string &header,
                              const std::string &data = "",
                              uint64_t length = ~uint64_t{0});

struct process_result {
  int exit_code = -1; ///< -1 if it did not exit normally
  std::string out;
  std::string err;
};

/// Runs |argv| (argv[0] is the program path) and captures its output.
process_result run_process(const std::vector<std::string> &argv);

/// Splits |text| into lines (without the newlines).
std::vector<std::string> lines(const std::string &text);

/// The directory of the committed fixtures (test/Inputs/safetensors).
std::string fixtures_dir();

} // namespace sgc_test

#endif // SGC_TEST_UNIT_TEST_UTIL_H
