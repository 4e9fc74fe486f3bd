#include "dnnl/conv_weights.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace meshnn::dnnl_glue {

ConvWeightStore::ConvWeightStore(std::vector<std::vector<float>> terms)
    : terms_(std::move(terms)), packed_(terms_.size()) {}

ConvWeightStore::~ConvWeightStore() {
  for (auto& per_term : packed_)
    for (PackedWeights& p : per_term) std::free(p.data);
}

void* ConvWeightStore::packed(int w, const void* layout, size_t layout_len, size_t bytes,
                              const PackFn& pack) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& copies = packed_[static_cast<size_t>(w)];
  auto& term = terms_[static_cast<size_t>(w)];
  for (PackedWeights& p : copies)
    if (p.layout.size() == layout_len && std::memcmp(p.layout.data(), layout, layout_len) == 0)
      return p.data;
  PackedWeights p;
  const auto* key = static_cast<const unsigned char*>(layout);
  p.layout.assign(key, key + layout_len);
  p.bytes = bytes;
  p.data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p.data == nullptr) throw std::bad_alloc();
  try {
    pack(term.empty() ? nullptr : term.data(), copies.empty() ? nullptr : &copies.front(), p.data);
  } catch (...) {
    std::free(p.data);
    throw;
  }
  copies.push_back(std::move(p));
  std::vector<float>().swap(term);
  return copies.back().data;
}

}  // namespace meshnn::dnnl_glue
