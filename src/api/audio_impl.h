// The typed audio classes' insides, shared by the one-shot API (audio.cc) and streaming
// (streaming.cc): the loaded weights and a pool of runners over them, and the layout conversions at
// the API edge.
#pragma once

#include <memory>
#include <string>

#include "models/bigvgan/model.h"
#include "models/bigvgan/typed_model.h"
#include "models/ltx/audio_decoder.h"
#include "models/ltx/typed_model.h"
#include "ops/permute.h"
#include "runtime/pool.h"

namespace meshnn {

// The loaded model is the weights, never run itself; each call runs copies of it from the pool.
struct LtxAudioDecoder::Impl {
  std::unique_ptr<const models::LtxAudioDecoder> loaded;
  runtime::Pool<models::LtxAudioDecoder> pool;
  int64_t parameters = 0;
  Impl(std::unique_ptr<const models::LtxAudioDecoder> w, int64_t params)
      : loaded(std::move(w)),
        pool([this] { return runtime::runner_of(*loaded); }),
        parameters(params) {}
  const models::LtxAudioDecoder& weights() const { return *loaded; }
};

struct BigVganVocoder::Impl {
  std::unique_ptr<const models::BigVgan> loaded;
  runtime::Pool<models::BigVgan> pool;
  std::string config_json;
  Impl(std::unique_ptr<const models::BigVgan> w, std::string cfg)
      : loaded(std::move(w)),
        pool([this] { return runtime::runner_of(*loaded); }),
        config_json(std::move(cfg)) {}
  const models::BigVgan& weights() const { return *loaded; }
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
