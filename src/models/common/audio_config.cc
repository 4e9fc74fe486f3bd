#include "models/common/audio_config.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>

#include "io/config_reader.h"
#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/core/log.h"

namespace meshnn::models {
namespace {

using io::ConfigReader;
using nlohmann::json;

// The fields every generator config has (same names in ltx-core and NVIDIA BigVGAN).
void read_generator_shape(ConfigReader& r, GeneratorConfig& g) {
  g.upsample_initial_channel = r.get<int>("upsample_initial_channel");
  g.upsample_rates = r.get<std::vector<int>>("upsample_rates");
  g.upsample_kernel_sizes = r.get<std::vector<int>>("upsample_kernel_sizes");
  g.resblock_kernel_sizes = r.get<std::vector<int>>("resblock_kernel_sizes");
  g.resblock_dilation_sizes = r.get<std::vector<std::vector<int>>>("resblock_dilation_sizes");
}

int positive_int(ConfigReader& r, const char* key) {
  const int v = r.get<int>(key);
  MESHNN_CHECK(v > 0, r.where(), ": config field '", key, "' must be positive, got ", v);
  return v;
}

// An ltx-core generator section (main vocoder or BWE); its unknown keys are reported by the
// caller's finish().
GeneratorConfig parse_ltx_generator(ConfigReader& r, bool bwe) {
  const std::string& where = r.where();
  GeneratorConfig g;
  g.keys = GeneratorConfig::KeyStyle::ltx;
  g.in_channels = 128;  // stereo × 64 mel bins, hard-coded in ltx-core
  g.out_channels = 2;
  // ltx-core's generator fields (a field outside this list is reported by the caller's finish()).
  r.allow({"upsample_initial_channel",
           "resblock",
           "upsample_rates",
           "resblock_kernel_sizes",
           "upsample_kernel_sizes",
           "resblock_dilation_sizes",
           "stereo",
           "use_tanh_at_final",
           "activation",
           "use_bias_at_final",
           "apply_final_activation",
           "input_sampling_rate",
           "output_sampling_rate",
           "hop_length",
           "n_fft",
           "win_size",
           "num_mels",
           "sampling_rate",
           "antialias_ratio",
           "antialias_kernel_size",
           "alpha_logscale"});
  read_generator_shape(r, g);
  const std::string rb = r.get<std::string>("resblock");
  r.require_eq("stereo", true);
  if (rb == "AMP1") {
    r.require_eq("activation", "snakebeta");
    g.block = GeneratorConfig::Block::amp1;
    g.activation = GeneratorConfig::Act::snakebeta;
    g.use_tanh_at_final = r.get_or<bool>("use_tanh_at_final", true);
    g.use_bias_at_final = r.get_or<bool>("use_bias_at_final", true);
    // Activation1d's anti-aliasing filters are hard-coded (ratio 2, 12 taps), alpha in log scale.
    r.require_if_present("antialias_ratio", 2);
    r.require_if_present("antialias_kernel_size", 12);
    r.require_if_present("alpha_logscale", true);
  } else if (rb == "1") {
    MESHNN_CHECK(!bwe, where, ": the BWE generator must use resblock AMP1");
    g.block = GeneratorConfig::Block::hifigan1;
    g.use_tanh_at_final = r.get_or<bool>("use_tanh_at_final", true);
    g.use_bias_at_final = r.get_or<bool>("use_bias_at_final", true);
    for (const char* k : {"antialias_ratio", "antialias_kernel_size", "alpha_logscale"})
      MESHNN_CHECK(!r.doc().contains(k), where, ": config field '", k,
                   "' belongs to AMP1 generators, not to resblock \"1\"");
  } else {
    throw InvalidArgument(detail::concat(where, ": unsupported resblock '", rb,
                                         "' (LTX uses \"AMP1\" for 2.3 and \"1\" for LTX-2)"));
  }
  g.apply_final_activation = bwe ? false : true;
  r.require_if_present("apply_final_activation", g.apply_final_activation);
  g.sampling_rate = r.get_or<int>("output_sampling_rate", 24000);
  MESHNN_CHECK(g.sampling_rate > 0, where, ": output_sampling_rate must be positive, got ",
               g.sampling_rate);
  // The mel front-end fields: every one present must be a sane value (the BWE's are used by its
  // STFT and checked by the caller; the main vocoder's describe its training mel).
  for (const char* k : {"input_sampling_rate", "hop_length", "n_fft", "win_size", "num_mels"})
    if (r.has(k)) positive_int(r, k);
  r.require_if_present("num_mels", 64);
  if (r.has("win_size") && r.has("n_fft"))
    MESHNN_CHECK(r.get<int>("win_size") <= r.get<int>("n_fft"), where,
                 ": win_size must not exceed n_fft");
  g.validate(where);
  if (!bwe && r.has("hop_length"))
    MESHNN_CHECK(r.get<int>("hop_length") == g.hop(), where, ": hop_length ",
                 r.get<int>("hop_length"), " differs from the product of upsample_rates (", g.hop(),
                 "): one mel frame must become exactly hop_length samples");
  return g;
}

void read_mel_fields(ConfigReader& r, BigVganConfig& c) {
  const std::string& where = r.where();
  c.generator.sampling_rate = r.get<int>("sampling_rate");
  c.num_mels = r.get<int>("num_mels");
  c.n_fft = r.get<int>("n_fft");
  c.hop_size = r.get<int>("hop_size");
  c.win_size = r.get<int>("win_size");
  c.fmin = r.get_or<double>("fmin", 0.0);
  c.fmax = r.get_or<double>("fmax", 0.0);
  MESHNN_CHECK(c.generator.sampling_rate > 0, where, ": sampling_rate must be positive, got ",
               c.generator.sampling_rate);
  MESHNN_CHECK(c.num_mels > 0 && c.n_fft > 0 && c.hop_size > 0 && c.win_size > 0, where,
               ": num_mels, n_fft, hop_size and win_size must be positive (got ", c.num_mels, ", ",
               c.n_fft, ", ", c.hop_size, ", ", c.win_size, ")");
  MESHNN_CHECK(c.n_fft <= (1 << 16) && c.num_mels <= 4096, where, ": n_fft ", c.n_fft,
               " or num_mels ", c.num_mels, " out of range (n_fft ≤ 65536, num_mels ≤ 4096)");
  MESHNN_CHECK(c.win_size <= c.n_fft, where, ": win_size ", c.win_size, " exceeds n_fft ", c.n_fft);
  MESHNN_CHECK(
      std::isfinite(c.fmin) && std::isfinite(c.fmax) && c.fmin >= 0 && c.fmax >= 0 &&
          c.fmax <= c.generator.sampling_rate / 2.0 && (c.fmax == 0 || c.fmin < c.fmax),
      where,
      ": need 0 ≤ fmin < fmax ≤ sampling_rate / 2 (fmax 0 or null = sampling_rate / 2), got fmin ",
      c.fmin, ", fmax ", c.fmax);
}

}  // namespace

int GeneratorConfig::hop() const {
  int64_t h = 1;  // rates are validated ≤ kMaxRate, products capped: no overflow
  for (int r : upsample_rates) h = std::min<int64_t>(h * r, INT_MAX);
  return static_cast<int>(h);
}

void GeneratorConfig::validate(const std::string& where) const {
  MESHNN_CHECK(!upsample_rates.empty(), where, ": upsample_rates is empty");
  MESHNN_CHECK(upsample_rates.size() == upsample_kernel_sizes.size(), where,
               ": upsample_rates and upsample_kernel_sizes differ in length");
  MESHNN_CHECK(resblock_kernel_sizes.size() <= 8, where, ": ", resblock_kernel_sizes.size(),
               " resblock kernels (at most 8)");
  for (const auto& d : resblock_dilation_sizes)
    MESHNN_CHECK(d.size() <= 8, where, ": ", d.size(), " dilations in one resblock (at most 8)");
  MESHNN_CHECK(!resblock_kernel_sizes.empty() &&
                   resblock_kernel_sizes.size() == resblock_dilation_sizes.size(),
               where, ": resblock_kernel_sizes and resblock_dilation_sizes differ in length");
  MESHNN_CHECK(upsample_rates.size() <= 12, where, ": ", upsample_rates.size(),
               " upsample stages (at most 12)");
  MESHNN_CHECK(upsample_initial_channel >= 1 && upsample_initial_channel <= (1 << 20), where,
               ": upsample_initial_channel ", upsample_initial_channel, " must be in [1, 2^20]");
  for (size_t i = 0; i < upsample_rates.size(); ++i) {
    const int u = upsample_rates[i], k = upsample_kernel_sizes[i];
    MESHNN_CHECK(u <= 1024 && k <= 4096, where, ": upsample stage ", i, " rate ", u, " / kernel ",
                 k, " out of range (rate ≤ 1024, kernel ≤ 4096)");
    MESHNN_CHECK(u >= 1 && k >= u && (k - u) % 2 == 0, where, ": upsample stage ", i, " has rate ",
                 u, " and kernel ", k, "; need k ≥ u and k − u even (output exactly u·L)");
  }
  MESHNN_CHECK(upsample_initial_channel >> num_stages() >= 1, where, ": upsample_initial_channel ",
               upsample_initial_channel, " is too small for ", num_stages(), " stages");
  for (size_t j = 0; j < resblock_kernel_sizes.size(); ++j) {
    MESHNN_CHECK(resblock_kernel_sizes[j] >= 1 && resblock_kernel_sizes[j] <= 1025, where,
                 ": resblock kernel ", resblock_kernel_sizes[j], " out of range [1, 1025]");
    for (int d : resblock_dilation_sizes[j])
      MESHNN_CHECK(d >= 1 && d <= 1024, where, ": resblock dilation ", d,
                   " out of range [1, 1024]");
    MESHNN_CHECK(resblock_kernel_sizes[j] % 2 == 1, where, ": resblock kernel ",
                 resblock_kernel_sizes[j], " must be odd (same-length padding)");
    MESHNN_CHECK(!resblock_dilation_sizes[j].empty(), where, ": empty dilation list ", j);
  }
}

// NVIDIA BigVGAN's config.json fields that do not change inference: training, data loading and
// the discriminators (bigvgan_v2_* and base / v1 configs). Any other field is refused.
void allow_bigvgan_training_fields(ConfigReader& r) {
  r.allow({"num_gpus",
           "batch_size",
           "learning_rate",
           "adam_b1",
           "adam_b2",
           "lr_decay",
           "seed",
           "segment_size",
           "num_freq",
           "fmax_for_loss",
           "num_workers",
           "dist_config",
           "use_cqtd_instead_of_mrd",
           "discriminator",
           "resolutions",
           "use_spectral_norm",
           "discriminator_channel_mult",
           "use_multiscale_melloss",
           "clip_grad_norm",
           "normalize_volume",
           "freeze_step"});
  for (const char* p : {"_", "cqtd_", "mpd_", "mrd_", "msd_", "mbd_", "lambda_"}) r.allow_prefix(p);
}

BigVganConfig parse_bigvgan_config(const json& j, const std::string& where) {
  ConfigReader r(j, where);
  BigVganConfig c;
  GeneratorConfig& g = c.generator;
  g.keys = GeneratorConfig::KeyStyle::nvidia;
  c.num_mels = r.get<int>("num_mels");
  g.in_channels = c.num_mels;
  g.out_channels = 1;
  read_generator_shape(r, g);
  const std::string rb = r.get<std::string>("resblock");
  if (rb == "1")
    g.block = GeneratorConfig::Block::amp1;
  else if (rb == "2")
    g.block = GeneratorConfig::Block::amp2;
  else
    throw InvalidArgument(detail::concat(where, ": unsupported resblock '", rb, "'"));
  const std::string act = r.get_or<std::string>("activation", "snakebeta");
  if (act == "snake")
    g.activation = GeneratorConfig::Act::snake;
  else if (act == "snakebeta")
    g.activation = GeneratorConfig::Act::snakebeta;
  else
    throw InvalidArgument(detail::concat(where, ": unsupported activation '", act, "'"));
  g.snake_logscale = r.get_or<bool>("snake_logscale", true);
  // Absent in v1 and base configs → true (BigVGAN's backward-compatibility default).
  g.use_tanh_at_final = r.get_or<bool>("use_tanh_at_final", true);
  g.use_bias_at_final = r.get_or<bool>("use_bias_at_final", true);
  g.apply_final_activation = true;
  read_mel_fields(r, c);
  allow_bigvgan_training_fields(r);
  r.finish();
  g.validate(where);
  MESHNN_CHECK(g.hop() == c.hop_size, where, ": product of upsample_rates (", g.hop(),
               ") must equal hop_size (", c.hop_size, ")");
  return c;
}

bool is_ltx_audio_config(const json& config) {
  return config.is_object() && config.contains("audio_vae") && config.contains("vocoder");
}

namespace {

// The latent mel's frame rate: the audio VAE's sampling rate over its STFT hop (16000 / 160).
struct LtxMelRate {
  int vae_rate = 16000, mel_hop = 160;
  int fps() const { return vae_rate / mel_hop; }
};

LtxMelRate read_ltx_mel_rate(ConfigReader& vae, ConfigReader& params, const std::string& where) {
  LtxMelRate m;
  m.vae_rate = params.get_or<int>("sampling_rate", 16000);
  if (ConfigReader* pre = vae.child_if("preprocessing")) {
    pre->allow_any();
    if (ConfigReader* stft = pre->child_if("stft")) {
      stft->allow_any();
      m.mel_hop = stft->get<int>("hop_length");
    }
  }
  MESHNN_CHECK(m.vae_rate > 0 && m.mel_hop > 0 && m.vae_rate % m.mel_hop == 0, where,
               ": audio_vae sampling_rate ", m.vae_rate, " and STFT hop_length ", m.mel_hop,
               " must be positive with an integer frame rate");
  return m;
}

// config.audio_vae.model.params.ddconfig (dd), beside its params → the decoder's shape; refuses
// what this decoder does not implement, naming the field.
AudioVaeDecoderConfig read_ltx_vae_decoder(ConfigReader& dd, ConfigReader& params,
                                           const std::string& vwhere) {
  AudioVaeDecoderConfig v;
  dd.allow({"double_z", "mel_bins", "z_channels", "resolution", "downsample_time", "in_channels",
            "out_ch", "ch", "ch_mult", "num_res_blocks", "attn_resolutions", "dropout",
            "mid_block_add_attention", "norm_type", "causality_axis"});
  dd.require_eq("norm_type", "pixel");
  dd.require_eq("causality_axis", "height");
  MESHNN_CHECK(dd.get_or<bool>("mid_block_add_attention", false) == false, vwhere,
               ": mid_block_add_attention = true is not supported");
  MESHNN_CHECK(dd.get_or<json>("attn_resolutions", json::array()).empty(), vwhere,
               ": attention blocks (attn_resolutions) are not supported");
  v.ch = dd.get<int>("ch");
  v.ch_mult = dd.get<std::vector<int>>("ch_mult");
  v.num_res_blocks = dd.get<int>("num_res_blocks");
  v.z_channels = dd.get<int>("z_channels");
  v.out_ch = dd.get<int>("out_ch");
  v.mel_bins = dd.get<int>("mel_bins");
  MESHNN_CHECK(!v.ch_mult.empty() && v.num_res_blocks >= 1 && v.ch >= 1, vwhere,
               ": ch, ch_mult and num_res_blocks must be positive");
  const int levels = static_cast<int>(v.ch_mult.size());
  MESHNN_CHECK(v.mel_bins % (1 << (levels - 1)) == 0, vwhere, ": mel_bins ", v.mel_bins,
               " not divisible by 2^", levels - 1);
  v.latent_mel_bins = v.mel_bins >> (levels - 1);
  MESHNN_CHECK(v.z_channels >= 1 && v.out_ch >= 1 && v.mel_bins >= 1, vwhere,
               ": z_channels, out_ch and mel_bins must be positive");
  MESHNN_CHECK(v.ch <= 4096 && levels <= 8 && v.num_res_blocks <= 16 && v.z_channels <= 4096,
               vwhere, ": ch, ch_mult, num_res_blocks or z_channels out of range");
  for (int m : v.ch_mult)
    MESHNN_CHECK(m >= 1 && m <= 64, vwhere, ": ch_mult entries must be in [1, 64], got ", m);
  if (params.has("embed_dim"))
    MESHNN_CHECK(params.get<int>("embed_dim") == v.z_channels, params.where(),
                 ": embed_dim must equal ddconfig.z_channels (", v.z_channels, ")");
  // Encoder-side or training-only fields: typed, and the decoder-relevant one fixed.
  dd.require_if_present("downsample_time", false);
  for (const char* k : {"in_channels", "resolution"})
    if (dd.has(k)) positive_int(dd, k);
  if (dd.has("double_z")) dd.get<bool>("double_z");
  if (dd.has("dropout")) dd.get<double>("dropout");
  return v;
}

// config.vocoder.bwe (LTX-2.3's bandwidth extension) → c.bwe, and the main vocoder's rate.
void read_ltx_bwe(ConfigReader& bwe, LtxAudioConfig& c) {
  c.bwe.generator = parse_ltx_generator(bwe, true);
  const std::string& bw = bwe.where();
  c.bwe.input_sampling_rate = bwe.get<int>("input_sampling_rate");
  c.bwe.output_sampling_rate = bwe.get<int>("output_sampling_rate");
  c.bwe.hop_length = bwe.get<int>("hop_length");
  c.bwe.n_fft = bwe.get<int>("n_fft");
  c.bwe.num_mels = bwe.get<int>("num_mels");
  c.vocoder.sampling_rate = c.bwe.input_sampling_rate;
  c.bwe.generator.sampling_rate = c.bwe.output_sampling_rate;
  MESHNN_CHECK(c.bwe.output_sampling_rate % c.bwe.input_sampling_rate == 0, bw,
               ": output rate must be an integer multiple of the input rate");
  MESHNN_CHECK(c.bwe.generator.hop() ==
                   c.bwe.hop_length * (c.bwe.output_sampling_rate / c.bwe.input_sampling_rate),
               bw, ": BWE upsampling ", c.bwe.generator.hop(),
               " must equal hop_length × rate ratio");
  MESHNN_CHECK(c.bwe.num_mels * 2 == c.bwe.generator.in_channels, bw,
               ": num_mels must be 64 (stereo × 64 = 128 input channels)");
  MESHNN_CHECK(c.bwe.input_sampling_rate > 0 && c.bwe.hop_length > 0 && c.bwe.n_fft >= 2 &&
                   c.bwe.n_fft % 2 == 0 && c.bwe.n_fft <= 8192 && c.bwe.n_fft >= c.bwe.hop_length,
               bw,
               ": need input_sampling_rate > 0, hop_length > 0 and an even n_fft in [hop_length, "
               "8192] (got ",
               c.bwe.input_sampling_rate, ", ", c.bwe.hop_length, ", ", c.bwe.n_fft, ")");
  bwe.require_if_present("win_size", c.bwe.n_fft);  // ltx-core windows with n_fft
  MESHNN_CHECK(c.vocoder.hop() % c.bwe.hop_length == 0, bw, ": hop_length ", c.bwe.hop_length,
               " must divide the main vocoder's hop ", c.vocoder.hop());
}

// config.vocoder → c.version, c.vocoder and (LTX-2.3) c.bwe. Version rule of ltx-core:
// `vocoder.bwe` present → LTX-2.3.
void read_ltx_vocoder(ConfigReader& voc, const std::string& where, LtxAudioConfig& c) {
  if (voc.has("bwe")) {
    c.version = LtxAudioConfig::Version::ltx23;
    MESHNN_CHECK(voc.has("vocoder"), where,
                 ": config.vocoder.bwe present but config.vocoder.vocoder missing");
    c.vocoder = parse_ltx_generator(voc.child("vocoder"), false);
    MESHNN_CHECK(c.vocoder.block == GeneratorConfig::Block::amp1, where,
                 ": LTX-2.3 main vocoder must use resblock AMP1");
    read_ltx_bwe(voc.child("bwe"), c);
  } else {
    c.version = LtxAudioConfig::Version::ltx2;
    c.vocoder = parse_ltx_generator(voc, false);
    MESHNN_CHECK(c.vocoder.block == GeneratorConfig::Block::hifigan1, where,
                 ": an LTX-2 (no bwe) vocoder must use resblock \"1\"");
  }
}

}  // namespace

LtxAudioConfig parse_ltx_audio_config(const json& config, const std::string& where) {
  LtxAudioConfig c;
  MESHNN_CHECK(config.is_object(), where, ": checkpoint config must be a JSON object");
  MESHNN_CHECK(config.contains("audio_vae"), where, ": checkpoint config has no 'audio_vae'");
  MESHNN_CHECK(config.contains("vocoder"), where, ": checkpoint config has no 'vocoder'");
  ConfigReader r(config, where + " config");
  // The other model sections a full LTX-2 checkpoint carries: their contents are not ours.
  r.allow({"transformer", "vae", "scheduler", "text_encoder", "upsampler"});
  MESHNN_CHECK(config.at("audio_vae").is_object() && config.at("vocoder").is_object(), where,
               ": config.audio_vae and config.vocoder must be JSON objects");
  ConfigReader& vae = r.child("audio_vae");
  vae.allow_any();  // the VAE's training and encoder settings; the decoder's are checked below
  MESHNN_CHECK(vae.doc().contains("model") && vae.doc().at("model").contains("params") &&
                   vae.doc().at("model").at("params").contains("ddconfig"),
               where, ": missing config.audio_vae.model.params.ddconfig");
  ConfigReader& model = vae.child("model");
  model.allow_any();
  ConfigReader& params = model.child("params");
  params.allow_any();
  ConfigReader& dd = params.child("ddconfig");
  const LtxMelRate mel = read_ltx_mel_rate(vae, params, where);
  const int mel_fps = mel.fps();
  c.vae = read_ltx_vae_decoder(dd, params, where + " config.audio_vae.model.params.ddconfig");
  ConfigReader& voc = r.child("vocoder");
  read_ltx_vocoder(voc, where, c);
  // One mel frame must become exactly the samples the vocoder's rate implies: upsampling by
  // anything else stretches or squeezes time (320 instead of 160 doubled the audio).
  const int voc_rate = c.vocoder.sampling_rate;
  MESHNN_CHECK(voc_rate % mel_fps == 0 && c.vocoder.hop() == voc_rate / mel_fps, where,
               ": the vocoder's upsample_rates multiply to ", c.vocoder.hop(), " but its ",
               voc_rate, " Hz output from ", mel_fps,
               " mel frames per second (audio_vae sampling_rate ", mel.vae_rate, " / STFT hop ",
               mel.mel_hop, ") needs ", voc_rate % mel_fps == 0 ? voc_rate / mel_fps : -1,
               " samples per mel frame");
  if (c.version == LtxAudioConfig::Version::ltx2 && voc.has("sampling_rate"))
    MESHNN_CHECK(voc.get<int>("sampling_rate") == voc_rate, where,
                 ": config.vocoder.sampling_rate differs from output_sampling_rate (", voc_rate,
                 ")");
  MESHNN_CHECK(c.vae.out_ch * c.vae.mel_bins == c.vocoder.in_channels, where,
               ": the decoder's out_ch × mel_bins (", c.vae.out_ch * c.vae.mel_bins,
               ") must equal the vocoder's 128 input channels");
  r.finish();
  return c;
}

json ltx23_reference_config() {
  const json amp = {{"resblock", "AMP1"},
                    {"resblock_kernel_sizes", {3, 7, 11}},
                    {"resblock_dilation_sizes", {{1, 3, 5}, {1, 3, 5}, {1, 3, 5}}},
                    {"stereo", true},
                    {"use_tanh_at_final", false},
                    {"activation", "snakebeta"},
                    {"use_bias_at_final", false}};
  json main = amp;
  main["upsample_initial_channel"] = 1536;
  main["upsample_rates"] = {5, 2, 2, 2, 2, 2};
  main["upsample_kernel_sizes"] = {11, 4, 4, 4, 4, 4};
  json bwe = amp;
  bwe["upsample_initial_channel"] = 512;
  bwe["upsample_rates"] = {6, 5, 2, 2, 2};
  bwe["upsample_kernel_sizes"] = {12, 11, 4, 4, 4};
  bwe["apply_final_activation"] = false;
  bwe["input_sampling_rate"] = 16000;
  bwe["output_sampling_rate"] = 48000;
  bwe["hop_length"] = 80;
  bwe["n_fft"] = 512;
  bwe["win_size"] = 512;
  bwe["num_mels"] = 64;
  json dd = {{"double_z", true},
             {"mel_bins", 64},
             {"z_channels", 8},
             {"resolution", 256},
             {"downsample_time", false},
             {"in_channels", 2},
             {"out_ch", 2},
             {"ch", 128},
             {"ch_mult", {1, 2, 4}},
             {"num_res_blocks", 2},
             {"attn_resolutions", json::array()},
             {"dropout", 0.0},
             {"mid_block_add_attention", false},
             {"norm_type", "pixel"},
             {"causality_axis", "height"}};
  return {
      {"audio_vae",
       {{"model", {{"params", {{"sampling_rate", 16000}, {"embed_dim", 8}, {"ddconfig", dd}}}}}}},
      {"vocoder", {{"vocoder", main}, {"bwe", bwe}}}};
}

}  // namespace meshnn::models
