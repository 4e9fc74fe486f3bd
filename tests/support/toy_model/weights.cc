#include "support/toy_model/weights.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "meshnn/core/error.h"
#include "meshnn/io/safetensors.h"
#include "models/common/checkpoint_check.h"

namespace meshnn::test::toy {

using models::LayerDesc;
using Kind = models::LayerDesc::Kind;

namespace {

LayerDesc layer(Kind kind, const char* key, int64_t ci, int64_t co, int64_t k, int64_t stride) {
  LayerDesc d{kind, key};
  d.c_in = ci;
  d.c_out = co;
  d.kernel = k;
  d.stride = stride;
  d.init_std = 1.0 / std::sqrt(static_cast<double>(ci * k));
  return d;
}

}  // namespace

Weights weights(const Config& cfg) {
  const int64_t C = cfg.latent_channels, H = cfg.hidden_channels, s = cfg.hop;
  Weights w;
  w.dec_pre = layer(Kind::conv1d, "toy_decoder.pre", C, H, 3, 1);
  w.dec_up = layer(Kind::conv_transpose1d, "toy_decoder.up", H, H, 2 * s, s);
  w.dec_act = layer(Kind::activation, "toy_decoder.antialiased", H, H, 1, 1);
  w.dec_post = layer(Kind::conv1d, "toy_decoder.post", H, 1, 3, 1);
  w.enc_pre = layer(Kind::conv1d, "toy_encoder.pre", 1, H, 3, 1);
  w.enc_down = layer(Kind::conv1d, "toy_encoder.down", H, H, 2 * s, s);
  w.enc_heads = layer(Kind::conv1d, "toy_encoder.heads", H, 2 * C, 1, 1);
  return w;
}

void require_tensors(const Config& cfg, const std::map<std::string, Shape>& tensors,
                     const std::string& where) {
  const models::ModelDesc desc = models::flatten(weights(cfg));
  const std::map<std::string, Shape> required = models::required_shapes(desc);
  models::TensorSetRules rules;
  rules.optional = [&](const std::string& k) { return !required.count(k); };  // the filters
  const models::TensorSetReport r =
      models::check_tensor_set(models::required_shapes(desc, true), tensors, rules);
  const size_t n = r.missing.size() + r.wrong_shape.size() + r.unknown.size() + r.invalid.size();
  if (n == 0) return;
  std::string msg = detail::concat(where, ": ", n, " checkpoint key problem(s) for this config:");
  models::append_problem_list(msg, "missing", r.missing);
  models::append_problem_list(msg, "with the wrong shape", r.wrong_shape);
  models::append_problem_list(msg, "unused by every layer", r.unknown);
  models::append_problem_list(msg, "invalid", r.invalid);
  throw WeightError(msg);
}

void write_random_folder(const std::string& dir, const Config& cfg, uint64_t seed) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::ofstream(fs::path(dir) / kConfigFile) << config_json(cfg);
  std::mt19937_64 rng(seed);
  std::map<std::string, Tensor> state;
  weights(cfg).for_each_layer([&](const LayerDesc& d) {
    for (const auto& [key, shape] : d.tensors()) {
      if (d.kind == Kind::activation && shape.size() == 3) continue;  // filters: computed
      Tensor t = Tensor::empty(shape);
      // Conv weights (rank 3) N(0, init_std²); biases and the activation's log α / log β
      // N(0, 0.1²).
      const bool weight = shape.size() == 3;
      std::normal_distribution<float> nd(0.f, weight ? static_cast<float>(d.init_std) : 0.1f);
      for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = nd(rng);
      state.emplace(key, t);
    }
  });
  io::save_safetensors((fs::path(dir) / kWeightsFile).string(), state);
}

}  // namespace meshnn::test::toy
