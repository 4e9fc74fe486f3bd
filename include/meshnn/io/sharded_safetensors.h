// Sharded safetensors, as Hugging Face writes a large model: shard files
// (`model-00001-of-00003.safetensors`, …) and an index `model.safetensors.index.json`
// {"metadata": {...}, "weight_map": {tensor key: shard file name}}. Every shard is opened
// (mmapped) once and the index is checked against the files before any tensor is read: a shard
// missing, a key in the index missing from its shard, a key stored in two shards, a tensor in a
// shard the index does not list, or a shard name that is not a plain file name beside the index
// → FormatError naming the file and the key.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"
#include "meshnn/io/safetensors.h"

namespace meshnn::io {

class ShardedSafetensors {
 public:
  // index_path: a model.safetensors.index.json; the shards are the files it names beside it.
  static ShardedSafetensors open_index(const std::string& index_path);
  // A model folder: its model.safetensors.index.json (sharded), else its model.safetensors (one
  // file). InvalidArgument naming the folder when it holds neither.
  static ShardedSafetensors open_folder(const std::string& folder);
  // A single file, as one shard (the same interface over either layout).
  static ShardedSafetensors open_file(const std::string& path);

  bool contains(const std::string& key) const;
  std::vector<std::string> keys() const;  // sorted, over every shard
  // As SafetensorsFile::get, from the key's shard (WeightError naming the key when absent).
  Tensor get(const std::string& key) const;
  DType dtype(const std::string& key) const;
  const Shape& shape(const std::string& key) const;
  // The shards' own "__metadata__", merged (a key two shards give different values is a
  // FormatError at open).
  const std::map<std::string, std::string>& metadata() const;
  std::vector<std::string> files() const;  // the index (when sharded) and every shard, opened
  const std::string& path() const;         // what was opened (index, folder or file)

  struct Impl;

 private:
  explicit ShardedSafetensors(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// The index's weight_map (tensor key → shard file name) from the text of an index file, checked
// on its own: an object with "weight_map" (non-empty, every value a plain file name) and an
// optional "metadata" object, nothing else, no duplicate keys. FormatError naming `where`.
std::map<std::string, std::string> parse_safetensors_index(const std::string& text,
                                                           const std::string& where);

// Whether `folder` is a directory holding model.safetensors.index.json or model.safetensors.
bool is_safetensors_folder(const std::string& folder);

}  // namespace meshnn::io
