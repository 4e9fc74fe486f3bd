// The public audio classes' insides, shared by the one-shot API (audio.cc) and streaming
// (streaming.cc): the loaded weights in a runner pool, and the layout conversions at the API edge.
#pragma once

#include <memory>
#include <string>

#include "api/runner_pool.h"
#include "meshnn/audio.h"
#include "models/bigvgan/model.h"
#include "models/ltx/audio_decoder.h"

namespace meshnn {

struct LtxAudioDecoder::Impl {
  api::RunnerPool<models::LtxAudioDecoder> pool;
  int64_t parameters = 0;
  Impl(std::unique_ptr<const models::LtxAudioDecoder> w, int64_t params)
      : pool(std::move(w)), parameters(params) {}
};

struct BigVganVocoder::Impl {
  api::RunnerPool<models::BigVgan> pool;
  std::string config_json;
  Impl(std::unique_ptr<const models::BigVgan> w, std::string cfg)
      : pool(std::move(w)), config_json(std::move(cfg)) {}
};

namespace api {

// (B, S, C) interleaved → (B, C, S) planar, as PyTorch audio models return waveforms.
inline Tensor to_planar(const Tensor& x) {
  const int64_t B = x.dim(0), S = x.dim(1), C = x.dim(2);
  if (C == 1) return x.reshape({B, 1, S});
  Tensor out = Tensor::empty({B, C, S});
  const float* s = x.data<float>();
  float* d = out.data<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < S; ++t)
      for (int64_t c = 0; c < C; ++c) d[(b * C + c) * S + t] = s[(b * S + t) * C + c];
  return out;
}

}  // namespace api
}  // namespace meshnn
