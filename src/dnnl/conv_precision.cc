#include "dnnl/conv_precision.h"

#include "meshnn/core/bf16.h"

namespace meshnn::dnnl_glue {

std::vector<PrecisionTerm> precision_terms(Precision p) {
  switch (p) {
    case Precision::fp32:
      return {{SrcPart::raw, 0}};
    case Precision::bf16:
      return {{SrcPart::hi, 0}};
    case Precision::bf16x2:
      return {{SrcPart::hi, 0}, {SrcPart::hi, 1}};
    case Precision::bf16x3:
      return {{SrcPart::hi, 0}, {SrcPart::hi, 1}, {SrcPart::lo, 0}};
  }
  return {};
}

std::vector<std::vector<float>> split_weights(const float* w, int64_t n, Precision p) {
  std::vector<std::vector<float>> terms;
  if (p == Precision::fp32) {
    terms.emplace_back(w, w + n);
    return terms;
  }
  std::vector<float> hi(n), lo(n);
  for (int64_t i = 0; i < n; ++i) {
    hi[i] = round_to_bf16(w[i]);
    lo[i] = round_to_bf16(w[i] - hi[i]);
  }
  terms.push_back(std::move(hi));
  if (p != Precision::bf16) terms.push_back(std::move(lo));
  return terms;
}

void split_activations_bf16(const float* x, int64_t n, uint16_t* hi, uint16_t* lo) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const bf16 h = to_bf16(x[i]);
    hi[i] = h.bits;
    if (lo) lo[i] = to_bf16(x[i] - to_f32(h)).bits;
  }
}

void split_activations_f32(const float* x, int64_t n, float* hi, float* lo) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float h = round_to_bf16(x[i]);
    hi[i] = h;
    if (lo) lo[i] = round_to_bf16(x[i] - h);
  }
}

}  // namespace meshnn::dnnl_glue
