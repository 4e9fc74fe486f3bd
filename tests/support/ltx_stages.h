// The LTX audio decoder's stages one by one and its chunk chain, for the tests that check a stage
// against PyTorch's, a stage's window context, or per-stage precision (the product runs the
// stages only as its chain: LtxAudioDecoder::decode, decode_chunked).
#pragma once

#include <cstdint>
#include <vector>

#include "meshnn/core/tensor.h"
#include "meshnn/layers/time_shard.h"
#include "models/ltx/audio_decoder.h"
#include "runtime/chunked.h"

namespace meshnn::models {

struct LtxDecoderAccess {
  // latent_cl: (B, S, 16, 8) channels-last shard, `real` frames → log-mel (B, 4S, 64, 2), real
  // 4T − 3.
  static Tensor stage_a(LtxAudioDecoder& dec, const Tensor& latent_cl, const TimeShard& ts,
                        int64_t real);
  // Stage B: packed mel (B, S, 128) → (B, hop·S, 2).
  static Tensor stage_b(LtxAudioDecoder& dec, const Tensor& mel_packed, const TimeShard& ts,
                        int64_t real);
  // Stage C (LTX-2.3): 16 kHz (B, S, 2) → 48 kHz (B, 3S, 2) with its intermediates.
  static LtxAudioDecoder::StageC stage_c(LtxAudioDecoder& dec, const Tensor& wav16,
                                         const TimeShard& ts, int64_t real);
  // The chain decode_chunked runs (runtime::run_chunked's geometry and reaches).
  static runtime::ChunkChain chunk_chain(const LtxAudioDecoder& dec);
  // The chain's stage graphs in order: mel-VAE (→ packed mel rows), vocoder, BWE (LTX-2.3).
  static std::vector<graph::NodePtr> stage_graphs(const LtxAudioDecoder& dec);
};

}  // namespace meshnn::models
