#include "models/audio_config.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <set>
#include <type_traits>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/core/log.h"

namespace meshnn::models {
namespace {

using nlohmann::json;

// Typed field access with errors that name the field and where it came from. Integers are
// strict: 64.5 (or 64.0), "64", true and out-of-range values are errors that show the value as
// written (2^70 stays 1180591620717411303424, never a wrapped int).
int as_int(const json& v, const std::string& field, const std::string& where) {
  const std::string big = io::big_integer_text(v);
  MESHNN_CHECK(big.empty(), where, ": config field '", field, "' = ", big,
               " is out of range (integers here must be between ", INT_MIN, " and ", INT_MAX, ")");
  MESHNN_CHECK(v.is_number_integer(), where, ": config field '", field,
               "' must be an integer, got ", v.dump(), " (", v.type_name(), ")");
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    MESHNN_CHECK(u <= static_cast<uint64_t>(INT_MAX), where, ": config field '", field, "' = ", u,
                 " is out of range (at most ", INT_MAX, ")");
    return static_cast<int>(u);
  }
  const int64_t i = v.get<int64_t>();
  MESHNN_CHECK(i >= INT_MIN && i <= INT_MAX, where, ": config field '", field, "' = ", i,
               " is out of range (integers here must be between ", INT_MIN, " and ", INT_MAX, ")");
  return static_cast<int>(i);
}

template <class T>
T convert(const json& v, const std::string& field, const std::string& where) {
  if constexpr (std::is_same_v<T, int>) {
    return as_int(v, field, where);
  } else if constexpr (std::is_same_v<T, std::vector<int>> ||
                       std::is_same_v<T, std::vector<std::vector<int>>>) {
    MESHNN_CHECK(v.is_array(), where, ": config field '", field, "' must be a list, got ",
                 v.dump());
    T out;
    for (size_t i = 0; i < v.size(); ++i)
      out.push_back(
          convert<typename T::value_type>(v[i], detail::concat(field, "[", i, "]"), where));
    return out;
  } else if constexpr (std::is_same_v<T, double>) {
    const std::string big = io::big_integer_text(v);
    if (!big.empty()) return std::strtod(big.c_str(), nullptr);
    MESHNN_CHECK(v.is_number(), where, ": config field '", field, "' must be a number, got ",
                 v.dump(), " (", v.type_name(), ")");
    return v.get<double>();
  } else if constexpr (std::is_same_v<T, bool>) {
    MESHNN_CHECK(v.is_boolean(), where, ": config field '", field, "' must be true or false, got ",
                 v.dump());
    return v.get<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    MESHNN_CHECK(v.is_string(), where, ": config field '", field, "' must be a string, got ",
                 v.dump(), " (", v.type_name(), ")");
    return v.get<std::string>();
  } else {
    return v;
  }
}

template <class T>
T get_field(const json& j, const char* key, const std::string& where) {
  MESHNN_CHECK(j.is_object(), where, ": expected a JSON object");
  auto it = j.find(key);
  MESHNN_CHECK(it != j.end(), where, ": missing config field '", key, "'");
  return convert<T>(*it, key, where);
}
template <class T>
T get_or(const json& j, const char* key, T fallback, const std::string& where) {
  MESHNN_CHECK(j.is_object(), where, ": expected a JSON object");
  if (!j.contains(key) || j.at(key).is_null()) return fallback;
  return get_field<T>(j, key, where);
}

void reject_unknown(const json& j, const std::set<std::string>& known, const std::string& where) {
  for (auto it = j.begin(); it != j.end(); ++it)
    MESHNN_CHECK(known.count(it.key()), where, ": unknown config field '", it.key(),
                 "' (it may change the architecture; meshnn does not know it)");
}

void require_eq(const json& j, const char* key, const json& expected, const std::string& where) {
  MESHNN_CHECK(j.contains(key) && j.at(key) == expected, where, ": config field '", key,
               "' must be ", expected.dump(), " (found ",
               j.contains(key) ? j.at(key).dump() : "none", ")");
}

// The fields every generator config has (same names in ltx-core and NVIDIA BigVGAN).
void read_generator_shape(const json& j, const std::string& where, GeneratorConfig& g) {
  g.upsample_initial_channel = get_field<int>(j, "upsample_initial_channel", where);
  g.upsample_rates = get_field<std::vector<int>>(j, "upsample_rates", where);
  g.upsample_kernel_sizes = get_field<std::vector<int>>(j, "upsample_kernel_sizes", where);
  g.resblock_kernel_sizes = get_field<std::vector<int>>(j, "resblock_kernel_sizes", where);
  g.resblock_dilation_sizes =
      get_field<std::vector<std::vector<int>>>(j, "resblock_dilation_sizes", where);
}

// A field meshnn does not read but that would change the architecture: present → must hold the
// one value meshnn implements.
void require_if_present(const json& j, const char* key, const json& expected,
                        const std::string& where) {
  if (j.contains(key) && !j.at(key).is_null()) require_eq(j, key, expected, where);
}
int positive_int(const json& j, const char* key, const std::string& where) {
  const int v = get_field<int>(j, key, where);
  MESHNN_CHECK(v > 0, where, ": config field '", key, "' must be positive, got ", v);
  return v;
}

GeneratorConfig parse_ltx_generator(const json& j, const std::string& where, bool bwe) {
  static const std::set<std::string> known = {"upsample_initial_channel",
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
                                              "alpha_logscale"};
  MESHNN_CHECK(j.is_object(), where, ": expected a JSON object");
  reject_unknown(j, known, where);
  GeneratorConfig g;
  g.keys = GeneratorConfig::KeyStyle::ltx;
  g.in_channels = 128;  // stereo × 64 mel bins, hard-coded in ltx-core
  g.out_channels = 2;
  read_generator_shape(j, where, g);
  const std::string rb = get_field<std::string>(j, "resblock", where);
  require_eq(j, "stereo", true, where);
  if (rb == "AMP1") {
    require_eq(j, "activation", "snakebeta", where);
    g.block = GeneratorConfig::Block::amp1;
    g.activation = GeneratorConfig::Act::snakebeta;
    g.use_tanh_at_final = get_or<bool>(j, "use_tanh_at_final", true, where);
    g.use_bias_at_final = get_or<bool>(j, "use_bias_at_final", true, where);
    // Activation1d's anti-aliasing filters are hard-coded (ratio 2, 12 taps), alpha in log scale.
    require_if_present(j, "antialias_ratio", 2, where);
    require_if_present(j, "antialias_kernel_size", 12, where);
    require_if_present(j, "alpha_logscale", true, where);
  } else if (rb == "1") {
    MESHNN_CHECK(!bwe, where, ": the BWE generator must use resblock AMP1");
    g.block = GeneratorConfig::Block::hifigan1;
    g.use_tanh_at_final = get_or<bool>(j, "use_tanh_at_final", true, where);
    g.use_bias_at_final = get_or<bool>(j, "use_bias_at_final", true, where);
    for (const char* k : {"antialias_ratio", "antialias_kernel_size", "alpha_logscale"})
      MESHNN_CHECK(!j.contains(k), where, ": config field '", k,
                   "' belongs to AMP1 generators, not to resblock \"1\"");
  } else {
    throw InvalidArgument(detail::concat(where, ": unsupported resblock '", rb,
                                         "' (LTX uses \"AMP1\" for 2.3 and \"1\" for LTX-2)"));
  }
  g.apply_final_activation = bwe ? false : true;
  require_if_present(j, "apply_final_activation", g.apply_final_activation, where);
  g.sampling_rate = get_or<int>(j, "output_sampling_rate", 24000, where);
  MESHNN_CHECK(g.sampling_rate > 0, where, ": output_sampling_rate must be positive, got ",
               g.sampling_rate);
  // The mel front-end fields: every one present must be a sane value (the BWE's are used by its
  // STFT and checked by the caller; the main vocoder's describe its training mel).
  for (const char* k : {"input_sampling_rate", "hop_length", "n_fft", "win_size", "num_mels"})
    if (j.contains(k)) positive_int(j, k, where);
  require_if_present(j, "num_mels", 64, where);
  if (j.contains("win_size") && j.contains("n_fft"))
    MESHNN_CHECK(get_field<int>(j, "win_size", where) <= get_field<int>(j, "n_fft", where), where,
                 ": win_size must not exceed n_fft");
  g.validate(where);
  if (!bwe && j.contains("hop_length"))
    MESHNN_CHECK(get_field<int>(j, "hop_length", where) == g.hop(), where, ": hop_length ",
                 get_field<int>(j, "hop_length", where),
                 " differs from the product of upsample_rates (", g.hop(),
                 "): one mel frame must become exactly hop_length samples");
  return g;
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

BigVganConfig parse_bigvgan_config(const json& j, const std::string& where) {
  BigVganConfig c;
  GeneratorConfig& g = c.generator;
  g.keys = GeneratorConfig::KeyStyle::nvidia;
  c.num_mels = get_field<int>(j, "num_mels", where);
  g.in_channels = c.num_mels;
  g.out_channels = 1;
  read_generator_shape(j, where, g);
  const std::string rb = get_field<std::string>(j, "resblock", where);
  if (rb == "1")
    g.block = GeneratorConfig::Block::amp1;
  else if (rb == "2")
    g.block = GeneratorConfig::Block::amp2;
  else
    throw InvalidArgument(detail::concat(where, ": unsupported resblock '", rb, "'"));
  const std::string act = get_or<std::string>(j, "activation", "snakebeta", where);
  if (act == "snake")
    g.activation = GeneratorConfig::Act::snake;
  else if (act == "snakebeta")
    g.activation = GeneratorConfig::Act::snakebeta;
  else
    throw InvalidArgument(detail::concat(where, ": unsupported activation '", act, "'"));
  g.snake_logscale = get_or<bool>(j, "snake_logscale", true, where);
  // Absent in v1 and base configs → true (BigVGAN's backward-compatibility default).
  g.use_tanh_at_final = get_or<bool>(j, "use_tanh_at_final", true, where);
  g.use_bias_at_final = get_or<bool>(j, "use_bias_at_final", true, where);
  g.apply_final_activation = true;
  parse_mel_fields(j, where, c);
  g.validate(where);
  MESHNN_CHECK(g.hop() == c.hop_size, where, ": product of upsample_rates (", g.hop(),
               ") must equal hop_size (", c.hop_size, ")");
  return c;
}

void parse_mel_fields(const json& j, const std::string& where, BigVganConfig& c) {
  c.generator.sampling_rate = get_field<int>(j, "sampling_rate", where);
  c.num_mels = get_field<int>(j, "num_mels", where);
  c.n_fft = get_field<int>(j, "n_fft", where);
  c.hop_size = get_field<int>(j, "hop_size", where);
  c.win_size = get_field<int>(j, "win_size", where);
  c.fmin = get_or<double>(j, "fmin", 0.0, where);
  c.fmax = get_or<double>(j, "fmax", 0.0, where);
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

LtxAudioConfig parse_ltx_audio_config(const json& config, const std::string& where) {
  LtxAudioConfig c;
  MESHNN_CHECK(config.is_object(), where, ": checkpoint config must be a JSON object");
  MESHNN_CHECK(config.contains("audio_vae"), where, ": checkpoint config has no 'audio_vae'");
  MESHNN_CHECK(config.contains("vocoder"), where, ": checkpoint config has no 'vocoder'");
  // The audio sections plus the other model sections a full LTX-2 checkpoint carries (their
  // contents are not ours to check); anything else is an error, not silently ignored.
  static const std::set<std::string> top_known = {"audio_vae", "vocoder",      "transformer", "vae",
                                                  "scheduler", "text_encoder", "upsampler"};
  reject_unknown(config, top_known, where + " config");
  const json& vae = config.at("audio_vae");
  MESHNN_CHECK(vae.is_object() && config.at("vocoder").is_object(), where,
               ": config.audio_vae and config.vocoder must be JSON objects");
  const std::string vwhere = where + " config.audio_vae.model.params.ddconfig";
  MESHNN_CHECK(vae.contains("model") && vae.at("model").contains("params") &&
                   vae.at("model").at("params").contains("ddconfig"),
               where, ": missing config.audio_vae.model.params.ddconfig");
  const json& params = vae.at("model").at("params");
  const json& dd = params.at("ddconfig");
  MESHNN_CHECK(dd.is_object(), vwhere, ": expected a JSON object");
  // Mel frames per second of the latent's mel: the VAE's rate over its STFT hop (16000 / 160).
  const std::string pwhere = where + " config.audio_vae.model.params";
  const int vae_rate = get_or<int>(params, "sampling_rate", 16000, pwhere);
  int mel_hop = 160;
  if (vae.contains("preprocessing") && vae.at("preprocessing").is_object() &&
      vae.at("preprocessing").contains("stft"))
    mel_hop = get_field<int>(vae.at("preprocessing").at("stft"), "hop_length",
                             where + " config.audio_vae.preprocessing.stft");
  MESHNN_CHECK(vae_rate > 0 && mel_hop > 0 && vae_rate % mel_hop == 0, where,
               ": audio_vae sampling_rate ", vae_rate, " and STFT hop_length ", mel_hop,
               " must be positive with an integer frame rate");
  const int mel_fps = vae_rate / mel_hop;
  static const std::set<std::string> dd_known = {"double_z",
                                                 "mel_bins",
                                                 "z_channels",
                                                 "resolution",
                                                 "downsample_time",
                                                 "in_channels",
                                                 "out_ch",
                                                 "ch",
                                                 "ch_mult",
                                                 "num_res_blocks",
                                                 "attn_resolutions",
                                                 "dropout",
                                                 "mid_block_add_attention",
                                                 "norm_type",
                                                 "causality_axis"};
  reject_unknown(dd, dd_known, vwhere);
  // Refuse what this decoder does not implement, naming the field.
  require_eq(dd, "norm_type", "pixel", vwhere);
  require_eq(dd, "causality_axis", "height", vwhere);
  MESHNN_CHECK(get_or<bool>(dd, "mid_block_add_attention", false, vwhere) == false, vwhere,
               ": mid_block_add_attention = true is not supported");
  MESHNN_CHECK(get_or<json>(dd, "attn_resolutions", json::array(), vwhere).empty(), vwhere,
               ": attention blocks (attn_resolutions) are not supported");
  c.vae.ch = get_field<int>(dd, "ch", vwhere);
  c.vae.ch_mult = get_field<std::vector<int>>(dd, "ch_mult", vwhere);
  c.vae.num_res_blocks = get_field<int>(dd, "num_res_blocks", vwhere);
  c.vae.z_channels = get_field<int>(dd, "z_channels", vwhere);
  c.vae.out_ch = get_field<int>(dd, "out_ch", vwhere);
  c.vae.mel_bins = get_field<int>(dd, "mel_bins", vwhere);
  MESHNN_CHECK(!c.vae.ch_mult.empty() && c.vae.num_res_blocks >= 1 && c.vae.ch >= 1, vwhere,
               ": ch, ch_mult and num_res_blocks must be positive");
  const int levels = static_cast<int>(c.vae.ch_mult.size());
  MESHNN_CHECK(c.vae.mel_bins % (1 << (levels - 1)) == 0, vwhere, ": mel_bins ", c.vae.mel_bins,
               " not divisible by 2^", levels - 1);
  c.vae.latent_mel_bins = c.vae.mel_bins >> (levels - 1);
  MESHNN_CHECK(c.vae.z_channels >= 1 && c.vae.out_ch >= 1 && c.vae.mel_bins >= 1, vwhere,
               ": z_channels, out_ch and mel_bins must be positive");
  MESHNN_CHECK(
      c.vae.ch <= 4096 && levels <= 8 && c.vae.num_res_blocks <= 16 && c.vae.z_channels <= 4096,
      vwhere, ": ch, ch_mult, num_res_blocks or z_channels out of range");
  for (int m : c.vae.ch_mult)
    MESHNN_CHECK(m >= 1 && m <= 64, vwhere, ": ch_mult entries must be in [1, 64], got ", m);
  if (params.contains("embed_dim"))
    MESHNN_CHECK(get_field<int>(params, "embed_dim", pwhere) == c.vae.z_channels, pwhere,
                 ": embed_dim must equal ddconfig.z_channels (", c.vae.z_channels, ")");
  // Encoder-side or training-only fields: typed, and the decoder-relevant one fixed.
  require_if_present(dd, "downsample_time", false, vwhere);
  for (const char* k : {"in_channels", "resolution"})
    if (dd.contains(k)) positive_int(dd, k, vwhere);
  if (dd.contains("double_z")) get_field<bool>(dd, "double_z", vwhere);
  if (dd.contains("dropout")) get_field<double>(dd, "dropout", vwhere);

  const json& voc = config.at("vocoder");
  if (voc.contains("bwe")) {
    c.version = LtxAudioConfig::Version::ltx23;
    static const std::set<std::string> known = {"vocoder", "bwe"};
    reject_unknown(voc, known, where + " config.vocoder");
    MESHNN_CHECK(voc.contains("vocoder"), where,
                 ": config.vocoder.bwe present but config.vocoder.vocoder missing");
    const json& bwe = voc.at("bwe");
    c.vocoder = parse_ltx_generator(voc.at("vocoder"), where + " config.vocoder.vocoder", false);
    MESHNN_CHECK(c.vocoder.block == GeneratorConfig::Block::amp1, where,
                 ": LTX-2.3 main vocoder must use resblock AMP1");
    c.bwe.generator = parse_ltx_generator(bwe, where + " config.vocoder.bwe", true);
    const std::string bw = where + " config.vocoder.bwe";
    c.bwe.input_sampling_rate = get_field<int>(bwe, "input_sampling_rate", bw);
    c.bwe.output_sampling_rate = get_field<int>(bwe, "output_sampling_rate", bw);
    c.bwe.hop_length = get_field<int>(bwe, "hop_length", bw);
    c.bwe.n_fft = get_field<int>(bwe, "n_fft", bw);
    c.bwe.num_mels = get_field<int>(bwe, "num_mels", bw);
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
    require_if_present(bwe, "win_size", c.bwe.n_fft, bw);  // ltx-core windows with n_fft
    MESHNN_CHECK(c.vocoder.hop() % c.bwe.hop_length == 0, bw, ": hop_length ", c.bwe.hop_length,
                 " must divide the main vocoder's hop ", c.vocoder.hop());
  } else {
    c.version = LtxAudioConfig::Version::ltx2;
    c.vocoder = parse_ltx_generator(voc, where + " config.vocoder", false);
    MESHNN_CHECK(c.vocoder.block == GeneratorConfig::Block::hifigan1, where,
                 ": an LTX-2 (no bwe) vocoder must use resblock \"1\"");
  }
  // One mel frame must become exactly the samples the vocoder's rate implies: upsampling by
  // anything else stretches or squeezes time (320 instead of 160 doubled the audio).
  const int voc_rate = c.vocoder.sampling_rate;
  MESHNN_CHECK(voc_rate % mel_fps == 0 && c.vocoder.hop() == voc_rate / mel_fps, where,
               ": the vocoder's upsample_rates multiply to ", c.vocoder.hop(), " but its ",
               voc_rate, " Hz output from ", mel_fps,
               " mel frames per second (audio_vae sampling_rate ", vae_rate, " / STFT hop ",
               mel_hop, ") needs ", voc_rate % mel_fps == 0 ? voc_rate / mel_fps : -1,
               " samples per mel frame");
  if (c.version == LtxAudioConfig::Version::ltx2) {
    const json& v = config.at("vocoder");
    if (v.contains("sampling_rate"))
      MESHNN_CHECK(get_field<int>(v, "sampling_rate", where + " config.vocoder") == voc_rate, where,
                   ": config.vocoder.sampling_rate differs from output_sampling_rate (", voc_rate,
                   ")");
  }
  MESHNN_CHECK(c.vae.out_ch * c.vae.mel_bins == c.vocoder.in_channels, where,
               ": the decoder's out_ch × mel_bins (", c.vae.out_ch * c.vae.mel_bins,
               ") must equal the vocoder's 128 input channels");
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
