// Tensor: shape + dtype + 64-byte aligned storage, always dense row-major (C order).
//
// A Tensor is a cheap handle: copying it shares the storage (like torch.Tensor); clone() makes a
// deep copy. Views over foreign memory (an mmap'd safetensors file) hold
// a keep-alive reference to the owner, so a view never outlives its bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/core/bf16.h"
#include "meshnn/core/error.h"

namespace meshnn {

enum class DType : uint8_t { f32, bf16, f16, f64, i64, i32, u8, boolean };

size_t dtype_size(DType dt);
const char* dtype_name(DType dt);  // "f32", "bf16", ...

using Shape = std::vector<int64_t>;
std::string shape_str(const Shape& s);  // "(1, 80, 512)"
int64_t shape_numel(const Shape& s);

constexpr int kMaxRank = 6;
constexpr size_t kTensorAlignment = 64;

template <class T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::f32;
};
template <>
struct DTypeOf<bf16> {
  static constexpr DType value = DType::bf16;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::f64;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::i64;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::i32;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::u8;
};

class Tensor {
 public:
  Tensor() = default;
  // Owned, zero-filled storage.
  explicit Tensor(Shape shape, DType dtype = DType::f32);
  // Owned storage left uninitialised (for outputs that are fully overwritten).
  static Tensor empty(Shape shape, DType dtype = DType::f32);
  // Non-owning view of `data`; `owner` (may be null) keeps the memory alive.
  static Tensor view(void* data, Shape shape, DType dtype, std::shared_ptr<void> owner = nullptr);
  // Owned copy of a host vector.
  template <class T>
  static Tensor from_vector(const std::vector<T>& v, Shape shape);

  bool defined() const { return dtype_set_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  // Size along dim; negative dims count from the end.
  int64_t dim(int d) const;
  // Normalises a possibly negative dim against the rank, with a ShapeError if out of range.
  int norm_dim(int d) const;
  int64_t numel() const { return shape_numel(shape_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  DType dtype() const { return dtype_; }
  bool owns_storage() const { return owned_; }

  void* raw() { return data_; }
  const void* raw() const { return data_; }
  template <class T>
  T* data() {
    check_dtype(DTypeOf<T>::value);
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* data() const {
    check_dtype(DTypeOf<T>::value);
    return static_cast<const T*>(data_);
  }

  Tensor clone() const;
  // Same bytes, new shape with the same element count.
  Tensor reshape(Shape shape) const;
  // Copy of rows [start, start+len) along `d` for any layout.
  Tensor narrow(int d, int64_t start, int64_t len) const;
  // dtype conversion (f32 ↔ bf16 with round-to-nearest-even, f64 → f32, ints → floats, ...).
  Tensor to(DType dtype) const;
  void fill_zero();

  void check_dtype(DType expected) const;

 private:
  Shape shape_;
  DType dtype_ = DType::f32;
  bool dtype_set_ = false;
  bool owned_ = false;
  void* data_ = nullptr;
  std::shared_ptr<void> keep_;
};

// Concatenates tensors of equal dtype and equal shape except along `d`.
Tensor concat(const std::vector<Tensor>& parts, int d);

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& v, Shape shape) {
  MESHNN_CHECK_AS(ShapeError, shape_numel(shape) == static_cast<int64_t>(v.size()),
                  "from_vector: ", v.size(), " values for shape ", shape_str(shape));
  Tensor t = Tensor::empty(std::move(shape), DTypeOf<T>::value);
  if (!v.empty()) std::memcpy(t.raw(), v.data(), v.size() * sizeof(T));
  return t;
}

}  // namespace meshnn
