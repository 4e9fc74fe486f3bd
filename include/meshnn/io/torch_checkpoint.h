// A weights-only reader of the zip archive torch.save writes (PyTorch ≥ 1.6), without Python:
// NVIDIA publishes BigVGAN as config.json + bigvgan_generator.pt, a pickled {'generator':
// state_dict}.
//
// Archive layout: <name>/data.pkl (the pickle), <name>/data/<key> (one entry per storage, its
// raw little-endian bytes), <name>/version, optionally <name>/byteorder; every entry stored
// (uncompressed), its data 64-byte aligned. <name> is the file's stem when torch.save wrote it,
// any single folder name is accepted.
//
// Safety: the pickle runs in a restricted virtual machine with the allow-list of PyTorch's
// weights_only loader (the opcodes and globals a dict of tensors needs; src/io/torch_pickle.h
// lists them); anything else — a GLOBAL such as os.system, REDUCE on a non-rebuild callable, a
// pickled nn.Module, INST/OBJ/STACK_GLOBAL — is refused with a FormatError naming the opcode or
// global and its byte offset. Nothing is ever executed. Every offset, length, shape and stride is
// bounds-checked against the file, and each entry's CRC-32 is checked.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::io {

class TorchCheckpoint {
 public:
  // Maps the file (privately) and reads the state dict: for {'generator': {...}} the generator's
  // tensors, else the top-level dict's (every value must be a tensor).
  static TorchCheckpoint open(const std::string& path);
  // An in-memory file; `name` stands in for the path in errors. check_crc = false skips the
  // CRC-32 checks (for fuzzing the structure behind them only).
  static TorchCheckpoint from_bytes(std::vector<uint8_t> bytes, std::string name,
                                    bool check_crc = true);

  // Sorted names, as in the state dict (no prefix added for the 'generator' wrapper).
  std::vector<std::string> keys() const;
  bool contains(const std::string& key) const;
  // The tensor in its stored dtype (f32, f16, bf16, f64, i64, i32, u8, bool): a zero-copy view of
  // the mapping when contiguous and aligned, else an owned row-major copy. WeightError naming the
  // key and the file when absent.
  Tensor get(const std::string& key) const;
  const std::string& path() const;

  struct Impl;

 private:
  explicit TorchCheckpoint(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// True when the file starts like a zip archive ("PK\3\4"): how a .pt is told from safetensors.
bool is_zip_file(const std::string& path);

// A checkpoint's tensors and metadata, whichever format holds them (a safetensors file, or a
// torch.save zip archive, told apart by the first bytes): the one way model loaders read weights.
struct WeightFile {
  std::string path;
  std::string format;                           // "safetensors" | "torch"
  std::map<std::string, Tensor> tensors;        // views of the mapping where possible
  std::map<std::string, std::string> metadata;  // safetensors __metadata__ (torch: none)
};
WeightFile read_weight_file(const std::string& path);

}  // namespace meshnn::io
