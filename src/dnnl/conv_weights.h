// The packed-weight store of one oneDNN convolution layer: its weights in every form the
// primitives run, made once per process and shared by reference by every device runner of the
// layer.
//
// Holds (1) the weight terms of the layer's precision mode in PyTorch layout (conv_precision.h)
// and (2) packed copies of each term, one per layout a primitive asked for. The layouts are opaque
// here: the caller names one by key bytes and fills the buffer itself (conv_primitives.cc: oneDNN
// reorders). (A layer that runs on our own kernels has no store: its kernel object holds its
// weights, layers/conv_engine.h.)
//
// Thread safety: packing runs under a mutex, once per (term, layout); a caller keeps the pointer it
// got, so steady-state forwards take no lock. A term's PyTorch-layout copy is released once its
// first packed copy exists (a later layout is made from that copy), which halves the weight
// memory. Plain heap vectors on purpose: freed, they go back to the system, where a Tensor's
// storage would stay in the reuse cache and hold the whole f32 checkpoint in the peak RSS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace meshnn::dnnl_glue {

// One packed copy of a weight term: the backend's layout key and 64-byte aligned bytes.
struct PackedWeights {
  std::vector<unsigned char> layout;
  size_t bytes = 0;
  void* data = nullptr;  // owned (freed by the store)
};

class ConvWeightStore {
 public:
  // terms: the weight terms in PyTorch layout (split_weights).
  explicit ConvWeightStore(std::vector<std::vector<float>> terms);
  ~ConvWeightStore();
  ConvWeightStore(const ConvWeightStore&) = delete;
  ConvWeightStore& operator=(const ConvWeightStore&) = delete;

  size_t term_count() const { return terms_.size(); }
  // Term w in PyTorch layout; empty once released (after its first packing).
  const std::vector<float>& term(int w) const { return terms_[static_cast<size_t>(w)]; }

  // Fills `dst` (`bytes` long) with term w in the requested layout, from the PyTorch-layout values
  // `user`, or, once those are released (user == nullptr), from the term's first packed copy.
  using PackFn = std::function<void(const float* user, const PackedWeights* first, void* dst)>;
  // The packed copy of term w in the layout keyed by (layout, layout_len): looked up, or made now
  // with `pack` (once per process). The pointer stays valid for the store's lifetime.
  void* packed(int w, const void* layout, size_t layout_len, size_t bytes, const PackFn& pack);

 private:
  std::mutex mu_;
  std::vector<std::vector<float>> terms_;
  std::vector<std::vector<PackedWeights>> packed_;  // per term
};

}  // namespace meshnn::dnnl_glue
