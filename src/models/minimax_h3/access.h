// The registry entry's (entry.cc) view of a loaded MiniMaxH3AudioVae (typed_model.h): which halves
// were loaded and the decoder's stream. Defined beside the class in api/minimax_h3_audio.cc (the
// class names this struct its friend).
#pragma once

#include "meshnn/audio_model.h"
#include "models/minimax_h3/typed_model.h"

namespace meshnn::api {

struct MiniMaxH3Access {
  static bool has_encoder(const MiniMaxH3AudioVae& vae);
  static bool has_decoder(const MiniMaxH3AudioVae& vae);
  // The decoder's stream: latents (B, C, n) → (B, 1, m), as decode_stream().
  static AudioStream decoder_stream(const MiniMaxH3AudioVae& vae, const StreamOptions& options);
};

}  // namespace meshnn::api
