// The public audio classes' insides, shared by the one-shot API (audio.cc) and streaming
// (streaming.cc): the loaded weights in a runner pool, and the layout conversions at the API edge.
#pragma once

#include <memory>
#include <string>

#include "api/runner_pool.h"
#include "meshnn/audio.h"
#include "models/bigvgan/model.h"
#include "models/ltx/audio_decoder.h"
#include "ops/permute.h"

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
// Mono needs no copy: (B, S, 1) and (B, 1, S) are the same bytes.
inline Tensor to_planar(const Tensor& x) {
  if (x.dim(2) == 1) return x.reshape({x.dim(0), 1, x.dim(1)});
  return ops::deinterleave(x);
}

}  // namespace api
}  // namespace meshnn
