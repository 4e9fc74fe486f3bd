#include "models/minimax_h3/config.h"

#include <set>

#include "meshnn/core/error.h"

namespace meshnn::models::minimax_h3 {

using nlohmann::json;

namespace {

const json& field(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  MESHNN_CHECK(it != j.end(), where, ": missing config field '", key, "'");
  return *it;
}

int int_field(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  MESHNN_CHECK(v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= (1 << 20),
               where, ": config field '", key, "' must be an integer in [1, 2^20], got ", v.dump());
  return v.get<int>();
}

std::vector<int> int_list(const json& v, const char* key, const std::string& where) {
  MESHNN_CHECK(v.is_array() && !v.empty() && v.size() <= 16, where, ": config field '", key,
               "' must be a list of 1 to 16 integers, got ", v.dump());
  std::vector<int> out;
  for (const json& e : v) {
    MESHNN_CHECK(e.is_number_integer() && e.get<int64_t>() >= 1 && e.get<int64_t>() <= 64, where,
                 ": config field '", key, "' must hold integers in [1, 64], got ", v.dump());
    out.push_back(e.get<int>());
  }
  return out;
}

std::vector<float> float_list(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  MESHNN_CHECK(v.is_array(), where, ": config field '", key, "' must be a list of numbers");
  std::vector<float> out;
  for (const json& e : v) {
    MESHNN_CHECK(e.is_number(), where, ": config field '", key, "' must hold numbers, got ",
                 e.dump());
    out.push_back(static_cast<float>(e.get<double>()));
  }
  return out;
}

}  // namespace

int Config::hop() const {
  int h = 1;
  for (int r : encoder_rates) h *= r;
  return h;
}

void Config::validate(const std::string& where) const {
  int dh = 1;
  for (int r : decoder_rates) dh *= r;
  MESHNN_CHECK(dh == hop(), where, ": the product of decoder_rates (", dh,
               ") must equal the product of encoder_rates (", hop(), ")");
  MESHNN_CHECK(decoder_rates.size() == decoder_kernel_sizes.size(), where,
               ": decoder_rates and decoder_kernel_sizes differ in length");
  for (size_t i = 0; i < decoder_rates.size(); ++i)
    MESHNN_CHECK(decoder_kernel_sizes[i] >= decoder_rates[i] &&
                     (decoder_kernel_sizes[i] - decoder_rates[i]) % 2 == 0,
                 where, ": upsampler ", i, " needs kernel ≥ rate with an even difference, got (",
                 decoder_kernel_sizes[i], ", ", decoder_rates[i], ")");
  MESHNN_CHECK((decoder_dim >> decoder_rates.size()) >= 1, where, ": decoder_dim ", decoder_dim,
               " leaves no channel after ", decoder_rates.size(), " halvings");
  MESHNN_CHECK(encoder_dim <= (1 << 14) && (encoder_dim << encoder_rates.size()) <= (1 << 16),
               where, ": encoder_dim ", encoder_dim, " too wide");
  MESHNN_CHECK(latent_dim % num_attention_heads == 0, where, ": latent_dim ", latent_dim,
               " is not a multiple of num_attention_heads ", num_attention_heads);
  MESHNN_CHECK(latent_dim % latent_channels == 0, where, ": latent_dim ", latent_dim,
               " is not a multiple of latent_channels ", latent_channels);
  MESHNN_CHECK(resblock_kernel_sizes.size() == resblock_dilation_sizes.size(), where,
               ": resblock_kernel_sizes and resblock_dilation_sizes differ in length");
  for (int k : resblock_kernel_sizes)
    MESHNN_CHECK(k % 2 == 1, where, ": resblock kernel ", k, " must be odd");
  MESHNN_CHECK(latents_mean.empty() || static_cast<int>(latents_mean.size()) == latent_channels,
               where, ": latents_mean has ", latents_mean.size(), " values, expected ",
               latent_channels);
  MESHNN_CHECK(latents_std.empty() || static_cast<int>(latents_std.size()) == latent_channels,
               where, ": latents_std has ", latents_std.size(), " values, expected ",
               latent_channels);
  generator().validate(where);
}

GeneratorConfig Config::generator() const {
  GeneratorConfig g;
  g.keys = GeneratorConfig::KeyStyle::nvidia;
  g.in_channels = latent_dim;
  g.out_channels = 1;
  g.upsample_initial_channel = decoder_dim;
  g.upsample_rates = decoder_rates;
  g.upsample_kernel_sizes = decoder_kernel_sizes;
  g.resblock_kernel_sizes = resblock_kernel_sizes;
  g.resblock_dilation_sizes = resblock_dilation_sizes;
  g.block = GeneratorConfig::Block::amp1;
  g.activation = GeneratorConfig::Act::snakebeta;
  g.snake_logscale = true;  // always log scale in this model
  g.use_tanh_at_final = false;
  g.use_bias_at_final = false;
  g.apply_final_activation = true;  // clamp to [-1, 1]
  g.sampling_rate = sampling_rate;
  return g;
}

bool is_minimax_h3_config(const json& j) {
  if (!j.is_object()) return false;
  auto it = j.find("_class_name");
  return it != j.end() && it->is_string() && it->get<std::string>() == kClassName;
}

Config parse_config(const json& j, const std::string& where) {
  MESHNN_CHECK(j.is_object(), where, ": expected a JSON object");
  MESHNN_CHECK(is_minimax_h3_config(j), where, ": _class_name must be '", kClassName, "'");
  static const std::set<std::string> known = {"encoder_dim",
                                              "encoder_rates",
                                              "latent_dim",
                                              "latent_channels",
                                              "num_attention_heads",
                                              "decoder_dim",
                                              "decoder_rates",
                                              "decoder_kernel_sizes",
                                              "resblock_kernel_sizes",
                                              "resblock_dilation_sizes",
                                              "sampling_rate",
                                              "latents_mean",
                                              "latents_std"};
  for (auto it = j.begin(); it != j.end(); ++it)
    MESHNN_CHECK(it.key().rfind('_', 0) == 0 || known.count(it.key()), where,
                 ": unknown config field '", it.key(),
                 "' (it may change the architecture; meshnn does not know it)");
  Config c;
  c.encoder_dim = int_field(j, "encoder_dim", where);
  c.encoder_rates = int_list(field(j, "encoder_rates", where), "encoder_rates", where);
  c.latent_dim = int_field(j, "latent_dim", where);
  c.latent_channels = int_field(j, "latent_channels", where);
  c.num_attention_heads = int_field(j, "num_attention_heads", where);
  c.decoder_dim = int_field(j, "decoder_dim", where);
  c.decoder_rates = int_list(field(j, "decoder_rates", where), "decoder_rates", where);
  c.decoder_kernel_sizes =
      int_list(field(j, "decoder_kernel_sizes", where), "decoder_kernel_sizes", where);
  if (j.contains("resblock_kernel_sizes"))
    c.resblock_kernel_sizes =
        int_list(j.at("resblock_kernel_sizes"), "resblock_kernel_sizes", where);
  if (j.contains("resblock_dilation_sizes")) {
    const json& v = j.at("resblock_dilation_sizes");
    MESHNN_CHECK(v.is_array() && !v.empty() && v.size() <= 8, where,
                 ": config field 'resblock_dilation_sizes' must be a list of lists");
    c.resblock_dilation_sizes.clear();
    for (const json& e : v)
      c.resblock_dilation_sizes.push_back(int_list(e, "resblock_dilation_sizes", where));
  }
  if (j.contains("sampling_rate")) c.sampling_rate = int_field(j, "sampling_rate", where);
  if (j.contains("latents_mean")) c.latents_mean = float_list(j, "latents_mean", where);
  if (j.contains("latents_std")) c.latents_std = float_list(j, "latents_std", where);
  c.validate(where);
  return c;
}

}  // namespace meshnn::models::minimax_h3
