/*
 * checkpoint.cc - single-file and sharded (index.json) checkpoints.
 */
#include "lib/safetensors/safetensors.h"

#include "lib/support/json_strict.h"

#include <algorithm>
#include <unordered_map>

namespace sgc {
namespace safetensors {

namespace {

using json = nlohmann::json;

constexpr uint64_t max_index_bytes = 100000000;

std::string dirname_of(const std::string &path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

bool ends_with(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// A shard name from an index must stay inside the checkpoint directory.
bool safe_relative_path(const std::string &p) {
  if (p.empty() || p[0] == '/' || p.find('\0') != std::string::npos)
    return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string::npos)
      end = p.size();
    const std::string part = p.substr(start, end - start);
    if (part == "..")
      return false;
    start = end + 1;
  }
  return true;
}

} // namespace

const checkpoint::entry *checkpoint::find(std::string_view name) const {
  auto it = std::lower_bound(
      entries_.begin(), entries_.end(), name,
      [](const entry &e, std::string_view n) { return e.info->name < n; });
  if (it == entries_.end() || it->info->name != name)
    return nullptr;
  return &*it;
}

uint64_t checkpoint::tensor_bytes() const {
  uint64_t total = 0;
  for (const entry &e : entries_)
    total += e.info->bytes();
  return total;
}

status checkpoint::open(const std::string &path,
                        std::unique_ptr<checkpoint> *out) {
  auto ck = std::unique_ptr<checkpoint>(new checkpoint());
  ck->path_ = path;
  status st;
  switch (path_kind(path)) {
  case 0:
    return bad_input_error(quote(path) + ": no such file or directory");
  case 2: {
    const std::string single = path + "/model.safetensors";
    const std::string index = path + "/model.safetensors.index.json";
    if (path_kind(single) != 0)
      st = ck->open_single(single);
    else if (path_kind(index) != 0)
      st = ck->open_index(index);
    else
      return bad_input_error(quote(path) +
                             ": directory has neither model.safetensors nor "
                             "model.safetensors.index.json");
    break;
  }
  default:
    if (ends_with(path, ".json"))
      st = ck->open_index(path);
    else
      st = ck->open_single(path);
    break;
  }
  if (!st.ok())
    return st;
  *out = std::move(ck);
  return status();
}

status checkpoint::open_single(const std::string &file_path) {
  std::unique_ptr<file> f;
  status st = file::open(file_path, &f);
  if (!st.ok())
    return st;
  entries_.reserve(f->tensors().size());
  for (const tensor_info &t : f->tensors())
    entries_.push_back({&t, f.get()});
  shards_.push_back(std::move(f));
  return status();
}

status checkpoint::open_index(const std::string &index_file) {
  index_path_ = index_file;
  const std::string where = "index " + quote(index_file);
  std::string text;
  status st = read_small_file(index_file, max_index_bytes, &text);
  if (!st.ok())
    return st;
  json j;
  json_parse_error perr;
  if (!parse_json_strict(text, &j, &perr)) {
    if (!perr.duplicate_key.empty())
      return bad_input_error(where + ": duplicate key " +
                             quote(perr.duplicate_key) + " in object " +
                             quote(perr.object_path));
    return bad_input_error(where + ": not valid JSON: " + perr.message);
  }
  if (!j.is_object())
    return bad_input_error(where + ": not a JSON object");
  if (!j.contains("weight_map") || !j["weight_map"].is_object())
    return bad_input_error(where + ": missing object 'weight_map'");
  const json &wm = j["weight_map"];

  // Group tensor names by shard, shards in order of first mention.
  std::vector<std::string> shard_names;
  std::unordered_map<std::string, std::vector<std::string>> by_shard;
  for (const auto &item : wm.items()) {
    const std::string &name = item.key();
    if (!item.value().is_string())
      return bad_input_error(where + ": tensor " + quote(name) +
                             ": shard is not a string");
    const std::string &shard = item.value().get_ref<const std::string &>();
    if (!safe_relative_path(shard))
      return bad_input_error(where + ": tensor " + quote(name) +
                             ": shard path " + quote(shard) +
                             " is not a relative path inside the checkpoint "
                             "directory");
    auto [it, inserted] = by_shard.try_emplace(shard);
    if (inserted)
      shard_names.push_back(shard);
    it->second.push_back(name);
  }

  const std::string dir = dirname_of(index_file);
  for (const std::string &shard : shard_names) {
    const std::vector<std::string> &names = by_shard[shard];
    const std::string shard_path = dir + "/" + shard;
    std::unique_ptr<file> f;
    st = file::open(shard_path, &f);
    if (!st.ok())
      return std::move(st).note(where + " names this shard for " +
                                std::to_string(names.size()) +
                                " tensors, e.g. " + quote(names.front()));

    std::vector<const std::string *> missing;
    for (const std::string &name : names)
      if (!f->find(name))
        missing.push_back(&name);
    if (!missing.empty()) {
      status err = bad_input_error(quote(shard_path) + ": tensor " +
                                   quote(*missing.front()) + " named by " +
                                   where + " is missing from this shard");
      for (size_t i = 1; i < missing.size(); ++i)
        err.note("also missing: tensor " + quote(*missing[i]));
      return err;
    }
    for (const tensor_info &t : f->tensors()) {
      auto it = wm.find(t.name);
      if (it == wm.end())
        return bad_input_error(quote(shard_path) + ": tensor " + quote(t.name) +
                               " is not listed in " + where);
      if (it->get_ref<const std::string &>() != shard)
        return bad_input_error(quote(shard_path) + ": tensor " + quote(t.name) +
                               " is listed in " + where + " under shard " +
                               quote(it->get_ref<const std::string &>()));
    }
    for (const tensor_info &t : f->tensors())
      entries_.push_back({&t, f.get()});
    shards_.push_back(std::move(f));
  }
  std::sort(entries_.begin(), entries_.end(),
            [](const entry &a, const entry &b) {
              return a.info->name < b.info->name;
            });
  return status();
}

} // namespace safetensors
} // namespace sgc
