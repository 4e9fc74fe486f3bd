#include "models/minimax_h3/config.h"

#include "io/config_reader.h"
#include "meshnn/core/error.h"

namespace meshnn::models::minimax_h3 {

using nlohmann::json;

namespace {

using io::ConfigReader;

int int_field(ConfigReader& r, const char* key) {
  const int v = r.get<int>(key);
  MESHNN_CHECK(v >= 1 && v <= (1 << 20), r.where(), ": config field '", key,
               "' must be an integer in [1, 2^20], got ", v);
  return v;
}

void check_int_list(const std::vector<int>& v, const std::string& key, const std::string& where) {
  MESHNN_CHECK(!v.empty() && v.size() <= 16, where, ": config field '", key,
               "' must be a list of 1 to 16 integers");
  for (int e : v)
    MESHNN_CHECK(e >= 1 && e <= 64, where, ": config field '", key,
                 "' must hold integers in [1, 64], got ", e);
}

std::vector<int> int_list(ConfigReader& r, const char* key) {
  std::vector<int> v = r.get<std::vector<int>>(key);
  check_int_list(v, key, r.where());
  return v;
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
  ConfigReader r(j, where);
  r.allow_prefix("_");  // diffusers' bookkeeping (_class_name, _diffusers_version, …)
  Config c;
  c.encoder_dim = int_field(r, "encoder_dim");
  c.encoder_rates = int_list(r, "encoder_rates");
  c.latent_dim = int_field(r, "latent_dim");
  c.latent_channels = int_field(r, "latent_channels");
  c.num_attention_heads = int_field(r, "num_attention_heads");
  c.decoder_dim = int_field(r, "decoder_dim");
  c.decoder_rates = int_list(r, "decoder_rates");
  c.decoder_kernel_sizes = int_list(r, "decoder_kernel_sizes");
  if (r.has("resblock_kernel_sizes"))
    c.resblock_kernel_sizes = int_list(r, "resblock_kernel_sizes");
  if (r.take("resblock_dilation_sizes", c.resblock_dilation_sizes)) {
    MESHNN_CHECK(!c.resblock_dilation_sizes.empty() && c.resblock_dilation_sizes.size() <= 8, where,
                 ": config field 'resblock_dilation_sizes' must be a list of 1 to 8 lists");
    for (const std::vector<int>& d : c.resblock_dilation_sizes)
      check_int_list(d, "resblock_dilation_sizes", where);
  }
  if (r.has("sampling_rate")) c.sampling_rate = int_field(r, "sampling_rate");
  r.take("latents_mean", c.latents_mean);
  r.take("latents_std", c.latents_std);
  r.finish();
  c.validate(where);
  return c;
}

}  // namespace meshnn::models::minimax_h3
