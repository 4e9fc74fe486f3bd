// The LTX audio decoder's Stage A (mel-VAE decoder) and Stage C (bandwidth extension): their
// layers and graphs (audio_stages.cc), run by LtxAudioDecoder (audio_decoder.cc).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "models/ltx/audio_decoder.h"

namespace meshnn::models {

// ---- Stage A: mel-VAE decoder -------------------------------------------------------------------

struct LtxAudioDecoder::MelVae {
  struct ResBlock {
    std::optional<Conv2d> conv1, conv2, nin;
  };
  AudioVaeDecoderConfig cfg;
  std::vector<float> stats_std, stats_mean;  // (z_channels · latent_mel_bins), feature c·F + f
  std::optional<Conv2d> conv_in, conv_out;
  std::vector<ResBlock> mid;
  std::vector<std::vector<ResBlock>> up;             // run order: level L−1 … 0
  std::vector<std::optional<Conv2d>> upsample_conv;  // per run-order level (none for level 0)

  MelVae(const MelVae& o);
  MelVae(const AudioVaeDecoderConfig& c, const std::map<std::string, Tensor>& state, Precision p);

  // The mel-VAE's one wiring: latent rows (B, n, F, Cz) channels-last → log-mel rows (B, m, 64, 2).
  graph::NodePtr build_graph() const;
  // latent: (B, S, F, Cz) channels-last shard → (B, 4S, 64, 2) (for 3 levels); real T → 4T − 3.
  Tensor forward(const Tensor& latent, const TimeShard& ts, int64_t real);
  graph::NodePtr one_shot;  // forward()'s graph, built on first use (per runner copy)
};

// ---- Stage C: bandwidth extension -------------------------------------------------------------

struct LtxAudioDecoder::Bwe {
  BweConfig cfg;
  std::optional<Conv1d> stft;  // forward_basis as a strided conv: 1 → 2·bins, k n_fft, stride hop
  std::optional<Conv1d> mel;   // mel_basis as a k1 conv: bins → num_mels
  std::optional<Generator> gen;
  std::vector<float> hann;  // ×ratio resampler taps (computed; not in the checkpoint)
  ops::UpsampleGeometry geom;
  int ratio;

  Bwe(const Bwe& o);
  Bwe(const BweConfig& c, const std::map<std::string, Tensor>& state, Precision p);

  // Residual + skip, clamped. p: {residual (B, n, 2), skip (B, n, 2)} → into p[0].
  static Tensor add_clamp(std::vector<Tensor>& p);
  // 16 kHz rows (B, n, 2) → packed log-mel rows (B, n / hop, 2·num_mels).
  graph::NodePtr log_mel_graph() const;
  // The BWE's one wiring: 16 kHz rows (B, n, 2) → 48 kHz rows (B, ratio·n, 2).
  graph::NodePtr build_graph() const;
  // x: (B, S, 2) 16 kHz shard with `real` samples → StageC (intermediates when asked).
  StageC forward(const Tensor& x, const TimeShard& ts, int64_t real, bool intermediates);
  graph::NodePtr one_shot;  // forward()'s graph, built on first use (per runner copy)
};

}  // namespace meshnn::models
