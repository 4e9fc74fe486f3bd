// Sharded safetensors (meshnn/io/sharded_safetensors.h): the index read strictly and checked
// against every shard's header before any tensor is handed out.
#include "meshnn/io/sharded_safetensors.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/file_util.h"
#include "io/json.h"
#include "meshnn/core/error.h"

namespace meshnn::io {

namespace {

constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kSingleName = "model.safetensors";

namespace fs = std::filesystem;

// As stat(2): false on any error (a folder we cannot read is "not there", never an exception).
bool dir_exists(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}
bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// A shard named by the index must be a file beside it: no folders, no way out of the model.
bool plain_file_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos &&
         s.find('\\') == std::string::npos && s.find('\0') == std::string::npos;
}

}  // namespace

struct ShardedSafetensors::Impl {
  std::string path;
  std::string index;                    // "" for one file
  std::vector<SafetensorsFile> shards;  // in index order of first mention
  std::map<std::string, size_t> owner;  // key → shard
  std::map<std::string, std::string> metadata;

  const SafetensorsFile& shard_of(const std::string& key) const {
    auto it = owner.find(key);
    if (it == owner.end())
      throw WeightError(detail::concat("missing tensor '", key, "' in ", path));
    return shards[it->second];
  }

  // Every shard's tensors against the index: each listed where the index says, nothing else.
  void check_against(const std::map<std::string, size_t>& listed) {
    std::map<std::string, size_t> found;
    for (size_t i = 0; i < shards.size(); ++i) {
      for (const std::string& k : shards[i].keys()) {
        auto [it, fresh] = found.emplace(k, i);
        if (!fresh)
          throw FormatError(detail::concat(index, ": tensor '", k, "' is stored in two shards, ",
                                           shards[it->second].path(), " and ", shards[i].path()));
        auto l = listed.find(k);
        if (l == listed.end())
          throw FormatError(detail::concat(shards[i].path(), ": tensor '", k, "' is not listed in ",
                                           index, "'s weight_map"));
      }
      for (const auto& [k, v] : shards[i].metadata()) {
        auto [it, fresh] = metadata.emplace(k, v);
        if (!fresh && it->second != v)
          throw FormatError(detail::concat(shards[i].path(), ": __metadata__ '", k, "' = '", v,
                                           "' differs from another shard's '", it->second, "'"));
      }
    }
    for (const auto& [k, i] : listed) {
      auto f = found.find(k);
      if (f == found.end())
        throw FormatError(detail::concat(shards[i].path(), ": tensor '", k, "' is listed in ",
                                         index, " for this shard but the shard does not hold it"));
      if (f->second != i)
        throw FormatError(detail::concat(index, ": tensor '", k, "' is listed for ",
                                         shards[i].path(), " but stored in ",
                                         shards[f->second].path()));
    }
    owner = std::move(found);
  }
};

std::map<std::string, std::string> parse_safetensors_index(const std::string& text,
                                                           const std::string& where) {
  nlohmann::json j;
  try {
    j = parse_config_json(text, where);  // duplicate keys refused
  } catch (const InvalidArgument& e) {
    throw FormatError(e.what());
  }
  MESHNN_CHECK_AS(FormatError, j.is_object(), where, ": expected a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it)
    MESHNN_CHECK_AS(FormatError, it.key() == "metadata" || it.key() == "weight_map", where,
                    ": unexpected top-level key '", it.key(),
                    "' (an index holds \"metadata\" and \"weight_map\")");
  MESHNN_CHECK_AS(FormatError, j.contains("weight_map") && j.at("weight_map").is_object(), where,
                  ": missing \"weight_map\" object (tensor key → shard file)");
  if (j.contains("metadata"))
    MESHNN_CHECK_AS(FormatError, j.at("metadata").is_object() || j.at("metadata").is_null(), where,
                    ": \"metadata\" must be an object");
  const nlohmann::json& wm = j.at("weight_map");
  MESHNN_CHECK_AS(FormatError, !wm.empty(), where, ": weight_map is empty");
  std::map<std::string, std::string> out;
  for (auto it = wm.begin(); it != wm.end(); ++it) {
    MESHNN_CHECK_AS(FormatError, it.value().is_string(), where, ": weight_map['", it.key(),
                    "'] must be a shard file name, got ", it.value().dump());
    const std::string name = it.value().get<std::string>();
    MESHNN_CHECK_AS(FormatError, plain_file_name(name), where, ": weight_map['", it.key(), "'] = '",
                    name, "' is not a file name beside the index");
    out.emplace(it.key(), name);
  }
  return out;
}

ShardedSafetensors ShardedSafetensors::open_index(const std::string& index_path) {
  auto m = std::make_shared<Impl>();
  m->path = m->index = index_path;
  const std::vector<uint8_t> bytes = read_file_bytes(index_path);
  const std::string text(bytes.begin(), bytes.end());
  const std::map<std::string, std::string> wm = parse_safetensors_index(text, index_path);
  const std::string dir = fs::path(index_path).parent_path().string();
  std::map<std::string, size_t> shard_index;  // file name → shard
  std::map<std::string, size_t> listed;       // key → shard
  for (const auto& [key, name] : wm) {
    auto [s, fresh] = shard_index.emplace(name, m->shards.size());
    if (fresh) {
      const std::string shard = (fs::path(dir) / name).string();
      MESHNN_CHECK_AS(FormatError, path_exists(shard), index_path, ": shard '", name,
                      "' (for tensor '", key, "') is missing: ", shard);
      m->shards.push_back(SafetensorsFile::open(shard));
    }
    listed.emplace(key, s->second);
  }
  m->check_against(listed);
  return ShardedSafetensors(std::move(m));
}

ShardedSafetensors ShardedSafetensors::open_file(const std::string& path) {
  auto m = std::make_shared<Impl>();
  m->path = path;
  m->shards.push_back(SafetensorsFile::open(path));
  for (const std::string& k : m->shards[0].keys()) m->owner.emplace(k, 0);
  m->metadata = m->shards[0].metadata();
  return ShardedSafetensors(std::move(m));
}

ShardedSafetensors ShardedSafetensors::open_folder(const std::string& folder) {
  MESHNN_CHECK(dir_exists(folder), folder, ": not a folder");
  const std::string index = (fs::path(folder) / kIndexName).string();
  const std::string single = (fs::path(folder) / kSingleName).string();
  if (path_exists(index)) {
    auto m = std::make_shared<Impl>(*open_index(index).impl_);  // shards shared, not re-read
    m->path = folder;
    return ShardedSafetensors(std::move(m));
  }
  MESHNN_CHECK(path_exists(single), folder, ": holds neither ", kIndexName,
               " (sharded weights) nor ", kSingleName);
  return open_file(single);
}

bool is_safetensors_folder(const std::string& folder) {
  return dir_exists(folder) && (path_exists(fs::path(folder) / kIndexName) ||
                                path_exists(fs::path(folder) / kSingleName));
}

bool ShardedSafetensors::contains(const std::string& key) const {
  return impl_->owner.count(key) > 0;
}

std::vector<std::string> ShardedSafetensors::keys() const {
  std::vector<std::string> k;
  k.reserve(impl_->owner.size());
  for (const auto& [key, s] : impl_->owner) k.push_back(key);
  return k;
}

Tensor ShardedSafetensors::get(const std::string& key) const {
  return impl_->shard_of(key).get(key);
}
DType ShardedSafetensors::dtype(const std::string& key) const {
  return impl_->shard_of(key).dtype(key);
}
const Shape& ShardedSafetensors::shape(const std::string& key) const {
  return impl_->shard_of(key).shape(key);
}
const std::map<std::string, std::string>& ShardedSafetensors::metadata() const {
  return impl_->metadata;
}
const std::string& ShardedSafetensors::path() const { return impl_->path; }

std::vector<std::string> ShardedSafetensors::files() const {
  std::vector<std::string> f;
  if (!impl_->index.empty()) f.push_back(impl_->index);
  for (const SafetensorsFile& s : impl_->shards) f.push_back(s.path());
  return f;
}

}  // namespace meshnn::io
