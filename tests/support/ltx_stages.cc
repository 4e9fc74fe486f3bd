#include "support/ltx_stages.h"

#include "meshnn/core/error.h"
#include "models/ltx/audio_stages.h"

namespace meshnn::models {

Tensor LtxDecoderAccess::stage_a(LtxAudioDecoder& dec, const Tensor& latent_cl, const TimeShard& ts,
                                 int64_t real) {
  return dec.vae_->forward(latent_cl, ts, real);
}

Tensor LtxDecoderAccess::stage_b(LtxAudioDecoder& dec, const Tensor& mel_packed,
                                 const TimeShard& ts, int64_t real) {
  return dec.vocoder_->forward(mel_packed, ts, real);
}

LtxAudioDecoder::StageC LtxDecoderAccess::stage_c(LtxAudioDecoder& dec, const Tensor& wav16,
                                                  const TimeShard& ts, int64_t real) {
  MESHNN_CHECK(dec.bwe_ != nullptr, "stage C: this checkpoint (LTX-2) has no bandwidth extension");
  return dec.bwe_->forward(wav16, ts, real, true);
}

runtime::ChunkChain LtxDecoderAccess::chunk_chain(const LtxAudioDecoder& dec) {
  return LtxAudioDecoder::chunk_chain(dec.stages());
}

std::vector<graph::NodePtr> LtxDecoderAccess::stage_graphs(const LtxAudioDecoder& dec) {
  std::vector<graph::NodePtr> out;
  for (auto& s : dec.stages()) out.push_back(std::move(s.node));
  return out;
}

}  // namespace meshnn::models
