#include "models/ltx/weights.h"

#include <cmath>

#include "meshnn/core/error.h"
#include "meshnn/core/log.h"

namespace meshnn::models {

using Kind = LayerDesc::Kind;

MelVaeWeights mel_vae_weights(const AudioVaeDecoderConfig& v) {
  const std::string st = "audio_vae.per_channel_statistics.", d = "audio_vae.decoder.";
  const int64_t feats = static_cast<int64_t>(v.z_channels) * v.latent_mel_bins;
  MelVaeWeights w;
  w.stats_std = tensor_layer(st + "std-of-means", {feats});
  w.stats_mean = tensor_layer(st + "mean-of-means", {feats});
  const int levels = static_cast<int>(v.ch_mult.size());
  // Time rate and mel width at each run-order level: ×2 per upsample.
  double rate = 1;
  int64_t width = v.latent_mel_bins;
  auto conv = [&](std::string key, int64_t ci, int64_t co, int64_t k, double scale) {
    LayerDesc c = conv_layer(Kind::conv2d, std::move(key), ci, co, k,
                             scale / std::sqrt(static_cast<double>(ci * k * k)), rate);
    c.width = width;
    return c;
  };
  int64_t ch = static_cast<int64_t>(v.ch) * v.ch_mult.back();
  w.conv_in = conv(d + "conv_in", v.z_channels, ch, 3, 1.0);
  auto res = [&](const std::string& p, int stage, int block, int64_t ci, int64_t co) {
    MelVaeWeights::ResBlock r;
    r.conv1 = conv(p + "conv1", ci, co, 3, 1.0);
    r.conv2 = conv(p + "conv2", co, co, 3, 0.5);
    r.has_shortcut = ci != co;
    if (r.has_shortcut) r.nin_shortcut = conv(p + "nin_shortcut", ci, co, 1, 0.5);
    for (LayerDesc* c : {&r.conv1, &r.conv2, &r.nin_shortcut}) {
      c->stage = stage;
      c->block = block;
    }
    return r;
  };
  w.mid.push_back(res(d + "mid.block_1.", -1, 0, ch, ch));
  w.mid.push_back(res(d + "mid.block_2.", -1, 1, ch, ch));
  for (int l = levels - 1; l >= 0; --l) {
    const int run = levels - 1 - l;  // run-order level
    const int64_t co = static_cast<int64_t>(v.ch) * v.ch_mult[l];
    MelVaeWeights::Level& level = w.levels.emplace_back();
    for (int i = 0; i <= v.num_res_blocks; ++i) {
      level.blocks.push_back(
          res(d + "up." + std::to_string(l) + ".block." + std::to_string(i) + ".", run, i, ch, co));
      ch = co;
    }
    if (l != 0) {
      rate *= 2;
      width *= 2;
      level.has_upsample = true;
      level.upsample_conv = conv(d + "up." + std::to_string(l) + ".upsample.conv", ch, ch, 3, 1.0);
      level.upsample_conv.stage = run;
      level.upsample_conv.upsample = true;
    }
  }
  // A log-mel-like output around −5 in random checkpoints.
  w.conv_out = conv(d + "conv_out", ch, v.out_ch, 3, 1.5);
  w.conv_out.init_bias = -5.0;
  return w;
}

ModelDesc describe_mel_vae(const AudioVaeDecoderConfig& v) { return flatten(mel_vae_weights(v)); }

BweWeights bwe_weights(const BweConfig& b) {
  const int64_t bins = b.n_fft / 2 + 1;
  BweWeights w;
  w.stft_basis = tensor_layer("vocoder.mel_stft.stft_fn.forward_basis", {2 * bins, 1, b.n_fft});
  // Decode never reads the inverse basis; real checkpoints carry it.
  w.inverse_stft_basis = tensor_layer("vocoder.mel_stft.stft_fn.inverse_basis",
                                      {2 * bins, 1, b.n_fft}, /*optional=*/true);
  w.mel_basis = tensor_layer("vocoder.mel_stft.mel_basis", {b.num_mels, bins});
  w.generator = generator_weights(b.generator, bwe_generator_prefix());
  // The generator runs on STFT frames: hop_length input samples per frame.
  w.generator.conv_post.init_std = 0.05 / std::sqrt(w.generator.conv_post.c_in * 7.0);
  return w;
}

std::string bwe_generator_prefix() { return "vocoder.bwe_generator."; }

bool is_ltx_audio_key(const std::string& key) {
  return key.rfind("audio_vae.", 0) == 0 || key.rfind("vocoder.", 0) == 0;
}

bool is_ltx_encoder_key(const std::string& key) { return key.rfind("audio_vae.encoder.", 0) == 0; }

std::string ltx_vocoder_prefix(const LtxAudioConfig& cfg) {
  // LTX-2.3 nests the main generator under vocoder.vocoder.; LTX-2 is flat under vocoder.
  return cfg.version == LtxAudioConfig::Version::ltx23 ? "vocoder.vocoder." : "vocoder.";
}

LtxWeights ltx_weights(const LtxAudioConfig& cfg) {
  LtxWeights w;
  w.vae = mel_vae_weights(cfg.vae);
  const bool v23 = cfg.version == LtxAudioConfig::Version::ltx23;
  w.vocoder = generator_weights(cfg.vocoder, ltx_vocoder_prefix(cfg));
  w.vocoder.conv_post.init_std = (v23 ? 0.08 : 0.5) / std::sqrt(w.vocoder.conv_post.c_in * 7.0);
  w.has_bwe = v23;
  if (v23) w.bwe = bwe_weights(cfg.bwe);
  return w;
}

ModelDesc describe_ltx(const LtxAudioConfig& cfg) { return flatten(ltx_weights(cfg)); }

CheckpointReport check_ltx_checkpoint(const LtxAudioConfig& cfg,
                                      const std::map<std::string, Shape>& tensors) {
  const ModelDesc desc = describe_ltx(cfg);
  const std::map<std::string, Shape> required = required_shapes(desc);
  TensorSetRules rules;
  rules.ours = [](const std::string& k) { return is_ltx_audio_key(k) && !is_ltx_encoder_key(k); };
  rules.optional = [&](const std::string& k) { return !required.count(k); };
  TensorSetReport t = check_tensor_set(required_shapes(desc, true), tensors, rules);
  CheckpointReport r;
  r.missing = std::move(t.missing);
  r.wrong_shape = std::move(t.wrong_shape);
  r.unused = std::move(t.unknown);
  r.invalid = std::move(t.invalid);
  return r;
}

void require_ltx_checkpoint(const LtxAudioConfig& cfg, const std::map<std::string, Shape>& tensors,
                            const CheckpointCheckOptions& opt, const std::string& where) {
  const CheckpointReport r = check_ltx_checkpoint(cfg, tensors);
  if (r.problems(opt) == 0) {
    if (!r.unused.empty())
      log_warn(detail::concat(
          where, ": ", r.unused.size(),
          " tensor(s) under audio_vae. / vocoder. that no layer uses (allowed): ", r.unused.front(),
          r.unused.size() > 1 ? ", …" : ""));
    return;
  }
  std::string msg =
      detail::concat(where, ": ", r.problems(opt), " checkpoint key problem(s) for this config:");
  append_problem_list(msg, "missing", r.missing);
  append_problem_list(msg, "with the wrong shape", r.wrong_shape);
  append_problem_list(msg, "invalid", r.invalid);
  if (!opt.allow_unused_audio_tensors) {
    append_problem_list(msg,
                        "unused by every layer (the config and the weights disagree; "
                        "--allow-unused-tensors accepts them)",
                        r.unused);
  }
  throw WeightError(msg);
}

}  // namespace meshnn::models
