#include "meshnn/io/torch_checkpoint.h"

#include <cstdio>
#include <cstring>
#include <set>

#include "io/file_util.h"
#include "io/stored_zip.h"
#include "io/torch_pickle.h"
#include "meshnn/io/safetensors.h"

namespace meshnn::io {

struct TorchCheckpoint::Impl {
  std::string path;
  std::shared_ptr<ByteSource> bytes;
  std::map<std::string, Tensor> tensors;
  bool check_crc = true;
  uint64_t copied = 0;  // bytes of strided copies made so far (bounded by the file's size)

  void parse();
  std::string archive_folder(const StoredZip& zip) const;
  Tensor materialize(const pickle::TensorSpec& spec, const uint8_t* storage);
};

namespace {

// Strides of a contiguous row-major tensor; a dimension of size ≤ 1 may carry any stride.
bool row_major(const Shape& shape, const std::vector<int64_t>& stride) {
  int64_t expect = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 1 && stride[d] != expect) return false;
    expect *= shape[d];
  }
  return true;
}

// Copies the strided elements of `spec` from `storage` into `out` (row-major), elem bytes each.
void copy_strided(const pickle::TensorSpec& spec, const uint8_t* storage, size_t elem,
                  uint8_t* out) {
  const size_t rank = spec.shape.size();
  std::vector<int64_t> idx(rank, 0);
  const int64_t numel = shape_numel(spec.shape);
  for (int64_t n = 0; n < numel; ++n) {
    uint64_t at = spec.offset;
    for (size_t d = 0; d < rank; ++d) at += static_cast<uint64_t>(idx[d] * spec.stride[d]);
    std::memcpy(out + static_cast<size_t>(n) * elem, storage + at * elem, elem);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < spec.shape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

// The single top folder of the archive's entries ("bigvgan_generator" for a file torch.save
// wrote to bigvgan_generator.pt): the one whose data.pkl is there.
std::string TorchCheckpoint::Impl::archive_folder(const StoredZip& zip) const {
  std::string folder;
  for (const std::string& name : zip.names()) {
    const size_t slash = name.find('/');
    if (slash == std::string::npos || slash == 0 || name.substr(slash) != "/data.pkl") continue;
    if (!folder.empty())
      format_fail(path, 0, "two pickles (", folder, "/data.pkl, ", name,
                  "): not one torch.save archive");
    folder = name.substr(0, slash);
  }
  if (folder.empty())
    format_fail(path, 0, "a zip archive without <folder>/data.pkl: not a torch.save checkpoint");
  return folder;
}

Tensor TorchCheckpoint::Impl::materialize(const pickle::TensorSpec& spec, const uint8_t* storage) {
  const size_t elem = dtype_size(spec.dtype);
  if (shape_numel(spec.shape) == 0) return Tensor::empty(spec.shape, spec.dtype);
  const bool contiguous = row_major(spec.shape, spec.stride);
  uint8_t* src = const_cast<uint8_t*>(storage) + spec.offset * elem;
  // The view's keep-alive is the mapping itself. Misaligned data (never from torch.save, which
  // aligns to 64 bytes) is copied so that typed loads stay aligned.
  if (contiguous && reinterpret_cast<uintptr_t>(src) % elem == 0)
    return Tensor::view(src, spec.shape, spec.dtype, bytes);
  // Copies are bounded by the file's size in all: tensors sharing a storage must not make a few
  // bytes of pickle ask for gigabytes.
  const uint64_t nbytes = static_cast<uint64_t>(shape_numel(spec.shape)) * elem;
  if (nbytes > bytes->size - copied)
    format_fail(path, spec.at, "copies of strided tensors would exceed the file's size");
  copied += nbytes;
  Tensor t = Tensor::empty(spec.shape, spec.dtype);
  if (contiguous)
    std::memcpy(t.raw(), src, t.nbytes());
  else
    copy_strided(spec, storage, elem, static_cast<uint8_t*>(t.raw()));
  return t;
}

void TorchCheckpoint::Impl::parse() {
  const StoredZip zip(bytes, path);
  const std::string folder = archive_folder(zip);
  if (const StoredZip::Entry* bo = zip.find(folder + "/byteorder")) {
    const uint8_t* d =
        check_crc ? zip.checked_data(folder + "/byteorder", *bo) : bytes->data + bo->offset;
    if (std::string(reinterpret_cast<const char*>(d), bo->size) != "little")
      throw Unsupported(detail::concat(path, ": a big-endian torch.save archive (byteorder '",
                                       std::string(reinterpret_cast<const char*>(d), bo->size),
                                       "'); only little-endian checkpoints are read"));
  }
  const std::string pkl = folder + "/data.pkl";
  const StoredZip::Entry* pe = zip.find(pkl);
  const uint8_t* p = check_crc ? zip.checked_data(pkl, *pe) : bytes->data + pe->offset;
  const pickle::StateDict sd = pickle::read_state_dict(p, pe->size, path + ": " + pkl);
  std::set<std::string> crc_done;
  for (const auto& [key, spec] : sd.tensors) {
    const std::string name = folder + "/data/" + spec.storage_key;
    const StoredZip::Entry* e = zip.find(name);
    if (!e)
      format_fail(path, 0, "tensor '", key, "': its storage '", spec.storage_key, "' has no entry ",
                  name);
    const size_t elem = dtype_size(spec.dtype);
    if (e->size / elem != spec.storage_numel || e->size % elem != 0)
      format_fail(path, e->offset, "tensor '", key, "': storage ", name, " holds ", e->size,
                  " bytes, its ", dtype_name(spec.dtype), " storage needs ", spec.storage_numel,
                  " elements");
    const uint8_t* data = bytes->data + e->offset;
    if (check_crc && crc_done.insert(name).second) zip.checked_data(name, *e);
    tensors.emplace(key, materialize(spec, data));
  }
}

TorchCheckpoint TorchCheckpoint::open(const std::string& path) {
  check_regular_input(path);
  auto impl = std::make_shared<Impl>();
  impl->path = path;
  impl->bytes = ByteSource::map_file(path);
  impl->parse();
  return TorchCheckpoint(std::move(impl));
}

TorchCheckpoint TorchCheckpoint::from_bytes(std::vector<uint8_t> bytes, std::string name,
                                            bool check_crc) {
  auto impl = std::make_shared<Impl>();
  impl->path = std::move(name);
  impl->bytes = ByteSource::from_vector(std::move(bytes));
  impl->check_crc = check_crc;
  impl->parse();
  return TorchCheckpoint(std::move(impl));
}

std::vector<std::string> TorchCheckpoint::keys() const {
  std::vector<std::string> out;
  for (const auto& kv : impl_->tensors) out.push_back(kv.first);
  return out;
}
bool TorchCheckpoint::contains(const std::string& key) const {
  return impl_->tensors.count(key) > 0;
}
Tensor TorchCheckpoint::get(const std::string& key) const {
  const auto it = impl_->tensors.find(key);
  if (it == impl_->tensors.end())
    throw WeightError(detail::concat("missing tensor '", key, "' in ", impl_->path));
  return it->second;
}
const std::string& TorchCheckpoint::path() const { return impl_->path; }

bool is_zip_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  unsigned char b[4] = {0, 0, 0, 0};
  const size_t got = std::fread(b, 1, 4, f);
  std::fclose(f);
  return got == 4 && b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4;
}

WeightFile read_weight_file(const std::string& path) {
  WeightFile w;
  w.path = path;
  check_regular_input(path);
  if (is_zip_file(path)) {
    const TorchCheckpoint ckpt = TorchCheckpoint::open(path);
    w.format = "torch";
    for (const std::string& k : ckpt.keys()) w.tensors.emplace(k, ckpt.get(k));
    return w;
  }
  const SafetensorsFile file = SafetensorsFile::open(path);
  w.format = "safetensors";
  for (const std::string& k : file.keys()) w.tensors.emplace(k, file.get(k));
  w.metadata = file.metadata();
  return w;
}

}  // namespace meshnn::io
