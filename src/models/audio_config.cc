#include "models/audio_config.h"

#include <set>

#include "meshnn/core/error.h"
#include "meshnn/core/log.h"

namespace meshnn::models {
namespace {

using nlohmann::json;

// Typed field access with errors that name the field and where it came from.
template <class T>
T get_field(const json& j, const char* key, const std::string& where) {
  MESHNN_CHECK(j.is_object(), where, ": expected a JSON object");
  auto it = j.find(key);
  MESHNN_CHECK(it != j.end(), where, ": missing config field '", key, "'");
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw InvalidArgument(detail::concat(where, ": config field '", key, "' has the wrong type (",
                                         it->type_name(), ")"));
  }
}
template <class T>
T get_or(const json& j, const char* key, T fallback, const std::string& where) {
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
               "' must be ", expected.dump(), " (found ", j.contains(key) ? j.at(key).dump() : "none",
               ")");
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

GeneratorConfig parse_ltx_generator(const json& j, const std::string& where, bool bwe) {
  static const std::set<std::string> known = {
      "upsample_initial_channel", "resblock", "upsample_rates", "resblock_kernel_sizes",
      "upsample_kernel_sizes", "resblock_dilation_sizes", "stereo", "use_tanh_at_final",
      "activation", "use_bias_at_final", "apply_final_activation", "input_sampling_rate",
      "output_sampling_rate", "hop_length", "n_fft", "win_size", "num_mels", "sampling_rate",
      "antialias_ratio", "antialias_kernel_size", "alpha_logscale"};
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
  } else if (rb == "1") {
    MESHNN_CHECK(!bwe, where, ": the BWE generator must use resblock AMP1");
    g.block = GeneratorConfig::Block::hifigan1;
    g.use_tanh_at_final = get_or<bool>(j, "use_tanh_at_final", true, where);
    g.use_bias_at_final = get_or<bool>(j, "use_bias_at_final", true, where);
  } else {
    throw InvalidArgument(detail::concat(where, ": unsupported resblock '", rb,
                                         "' (LTX uses \"AMP1\" for 2.3 and \"1\" for LTX-2)"));
  }
  g.apply_final_activation = bwe ? false : true;
  g.sampling_rate = get_or<int>(j, "output_sampling_rate", 24000, where);
  g.validate(where);
  return g;
}

}  // namespace

int GeneratorConfig::hop() const {
  int h = 1;
  for (int r : upsample_rates) h *= r;
  return h;
}

void GeneratorConfig::validate(const std::string& where) const {
  MESHNN_CHECK(!upsample_rates.empty(), where, ": upsample_rates is empty");
  MESHNN_CHECK(upsample_rates.size() == upsample_kernel_sizes.size(), where,
               ": upsample_rates and upsample_kernel_sizes differ in length");
  MESHNN_CHECK(!resblock_kernel_sizes.empty() &&
                   resblock_kernel_sizes.size() == resblock_dilation_sizes.size(),
               where, ": resblock_kernel_sizes and resblock_dilation_sizes differ in length");
  for (size_t i = 0; i < upsample_rates.size(); ++i) {
    const int u = upsample_rates[i], k = upsample_kernel_sizes[i];
    MESHNN_CHECK(u >= 1 && k >= u && (k - u) % 2 == 0, where, ": upsample stage ", i,
                 " has rate ", u, " and kernel ", k, "; need k ≥ u and k − u even (output exactly u·L)");
  }
  MESHNN_CHECK(upsample_initial_channel >> num_stages() >= 1, where,
               ": upsample_initial_channel ", upsample_initial_channel, " is too small for ",
               num_stages(), " stages");
  for (size_t j = 0; j < resblock_kernel_sizes.size(); ++j) {
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
  if (rb == "1") g.block = GeneratorConfig::Block::amp1;
  else if (rb == "2") g.block = GeneratorConfig::Block::amp2;
  else throw InvalidArgument(detail::concat(where, ": unsupported resblock '", rb, "'"));
  const std::string act = get_or<std::string>(j, "activation", "snakebeta", where);
  if (act == "snake") g.activation = GeneratorConfig::Act::snake;
  else if (act == "snakebeta") g.activation = GeneratorConfig::Act::snakebeta;
  else throw InvalidArgument(detail::concat(where, ": unsupported activation '", act, "'"));
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
}

LtxAudioConfig parse_ltx_audio_config(const json& config, const std::string& where) {
  LtxAudioConfig c;
  MESHNN_CHECK(config.is_object(), where, ": checkpoint config must be a JSON object");
  MESHNN_CHECK(config.contains("audio_vae"), where, ": checkpoint config has no 'audio_vae'");
  MESHNN_CHECK(config.contains("vocoder"), where, ": checkpoint config has no 'vocoder'");
  const json& vae = config.at("audio_vae");
  const std::string vwhere = where + " config.audio_vae.model.params.ddconfig";
  MESHNN_CHECK(vae.contains("model") && vae.at("model").contains("params") &&
                   vae.at("model").at("params").contains("ddconfig"),
               where, ": missing config.audio_vae.model.params.ddconfig");
  const json& dd = vae.at("model").at("params").at("ddconfig");
  static const std::set<std::string> dd_known = {
      "double_z", "mel_bins", "z_channels", "resolution", "downsample_time", "in_channels",
      "out_ch", "ch", "ch_mult", "num_res_blocks", "attn_resolutions", "dropout",
      "mid_block_add_attention", "norm_type", "causality_axis"};
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

  const json& voc = config.at("vocoder");
  if (voc.contains("bwe")) {
    c.version = LtxAudioConfig::Version::ltx23;
    static const std::set<std::string> known = {"vocoder", "bwe"};
    reject_unknown(voc, known, where + " config.vocoder");
    MESHNN_CHECK(voc.contains("vocoder"), where, ": config.vocoder.bwe present but config.vocoder.vocoder missing");
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
                 bw, ": BWE upsampling ", c.bwe.generator.hop(), " must equal hop_length × rate ratio");
    MESHNN_CHECK(c.bwe.num_mels * 2 == c.bwe.generator.in_channels, bw,
                 ": num_mels must be 64 (stereo × 64 = 128 input channels)");
  } else {
    c.version = LtxAudioConfig::Version::ltx2;
    c.vocoder = parse_ltx_generator(voc, where + " config.vocoder", false);
    MESHNN_CHECK(c.vocoder.block == GeneratorConfig::Block::hifigan1, where,
                 ": an LTX-2 (no bwe) vocoder must use resblock \"1\"");
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
  json dd = {{"double_z", true},        {"mel_bins", 64},       {"z_channels", 8},
             {"resolution", 256},       {"downsample_time", false}, {"in_channels", 2},
             {"out_ch", 2},             {"ch", 128},            {"ch_mult", {1, 2, 4}},
             {"num_res_blocks", 2},     {"attn_resolutions", json::array()}, {"dropout", 0.0},
             {"mid_block_add_attention", false}, {"norm_type", "pixel"}, {"causality_axis", "height"}};
  return {{"audio_vae", {{"model", {{"params", {{"sampling_rate", 16000}, {"embed_dim", 8}, {"ddconfig", dd}}}}}}},
          {"vocoder", {{"vocoder", main}, {"bwe", bwe}}}};
}

}  // namespace meshnn::models
