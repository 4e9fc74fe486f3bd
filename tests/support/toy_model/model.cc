#include "support/toy_model/model.h"

#include <algorithm>
#include <filesystem>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/safetensors.h"
#include "models/common/audio_description.h"
#include "ops/permute.h"
#include "support/toy_model/weights.h"

namespace meshnn::test::toy {

using namespace graph;

namespace {

// The checkpoint against the config, before any layer is built.
Config checked(const Config& cfg, const std::map<std::string, Tensor>& state,
               const std::string& where) {
  std::map<std::string, Shape> shapes;
  for (const auto& [k, v] : state) shapes.emplace(k, v.shape());
  require_tensors(cfg, shapes, where);
  return cfg;
}

// The strided encoder conv: k = 2·hop, stride hop, pad hop/2 each side (n/hop outputs for n
// divisible by hop).
Conv1d strided_conv(const models::LayerDesc& d, const std::map<std::string, Tensor>& state,
                    Precision p) {
  Conv1dConfig c;
  c.in_channels = d.c_in;
  c.out_channels = d.c_out;
  c.kernel_size = d.kernel;
  c.stride = d.stride;
  c.padding = d.stride / 2;
  c.precision = p;
  Conv1d conv(c, d.key);
  conv.load(state, d.key);
  return conv;
}

}  // namespace

Model::Model(const Config& cfg, const std::map<std::string, Tensor>& state, Precision precision,
             const std::string& where)
    : cfg_(checked(cfg, state, where)),
      dec_pre_(models::build_conv1d(weights(cfg).dec_pre, state, precision)),
      dec_post_(models::build_conv1d(weights(cfg).dec_post, state, precision)),
      enc_pre_(models::build_conv1d(weights(cfg).enc_pre, state, precision)),
      enc_down_(strided_conv(weights(cfg).enc_down, state, precision)),
      enc_heads_(models::build_conv1d(weights(cfg).enc_heads, state, precision)),
      dec_up_(models::build_conv_transpose1d(weights(cfg).dec_up, state, precision)),
      dec_act_(models::build_activation(weights(cfg).dec_act, state)) {}

bool Model::is_folder(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path cfg = fs::path(path) / kConfigFile;
  if (!fs::is_directory(path, ec) || !fs::is_regular_file(cfg, ec)) return false;
  try {
    const nlohmann::json j = io::read_config_json_file(cfg.string());
    return j.is_object() && j.value("_class_name", std::string()) == kClassName;
  } catch (const Error&) {
    return false;
  }
}

std::shared_ptr<const Model> Model::load(const std::string& folder, Precision precision) {
  namespace fs = std::filesystem;
  const std::string cfg_path = (fs::path(folder) / kConfigFile).string();
  const std::string w_path = (fs::path(folder) / kWeightsFile).string();
  MESHNN_CHECK_AS(InvalidArgument, is_folder(folder), "'", folder, "' is not a toy model folder");
  MESHNN_CHECK(fs::is_regular_file(w_path), "'", folder, "': no ", kWeightsFile);
  const Config cfg = parse_config(io::read_config_json_file(cfg_path), cfg_path);
  const io::SafetensorsFile file = io::SafetensorsFile::open(w_path);
  std::map<std::string, Tensor> state;
  for (const std::string& k : file.keys()) state.emplace(k, file.get(k));
  return std::make_shared<const Model>(cfg, state, precision, w_path);
}

NodePtr Model::decode_graph() const {
  std::vector<NodePtr> g;
  g.push_back(conv_node(dec_pre_));
  g.push_back(conv_transpose_node(dec_up_));
  g.push_back(activation_node(dec_act_));
  g.push_back(conv_node(dec_post_));
  return sequence(std::move(g));
}

NodePtr Model::encode_graph() const {
  std::vector<NodePtr> g;
  g.push_back(pad_to_multiple(hop()));
  g.push_back(conv_node(enc_pre_));
  g.push_back(conv_node(enc_down_));
  g.push_back(conv_node(enc_heads_));
  return sequence(std::move(g));
}

void Model::check_latents(const Tensor& z) const {
  MESHNN_CHECK_AS(ShapeError, z.defined(), "toy decode: no latents");
  z.check_dtype(DType::f32);
  const int64_t C = cfg_.latent_channels;
  MESHNN_CHECK_AS(ShapeError, z.rank() == 3 && z.dim(0) >= 1 && z.dim(1) == C && z.dim(2) >= 1,
                  "toy decode: expected latents (B, ", C, ", T ≥ 1), got ", shape_str(z.shape()));
  check_finite(z, "toy decode: latents");
}

void Model::check_wave(const Tensor& w) const {
  MESHNN_CHECK_AS(ShapeError, w.defined(), "toy encode: no waveform");
  w.check_dtype(DType::f32);
  MESHNN_CHECK_AS(ShapeError, w.rank() == 3 && w.dim(0) >= 1 && w.dim(1) == 1 && w.dim(2) >= 1,
                  "toy encode: expected a waveform (B, 1, L ≥ 1), got ", shape_str(w.shape()));
  check_finite(w, "toy encode: waveform");
}

Tensor Model::decode(const Tensor& z, Node& g, const TimeShard& ts) const {
  check_latents(z);
  const int64_t B = z.dim(0), T = z.dim(2);
  const Tensor rows = ops::permute(z, {0, 2, 1});  // (B, T, C)
  const Tensor y =
      ts.sharded() ? ts.gather(g.run(ts.partition(rows), ts, T), T * hop()) : g.run(rows);
  MESHNN_CHECK(y.dim(1) == T * hop(), "internal: toy decode produced ", y.dim(1), " samples");
  return y.reshape({B, 1, T * hop()});
}

Tensor Model::encode(const Tensor& wave, Node& g, const TimeShard& ts) const {
  check_wave(wave);
  const int64_t B = wave.dim(0), L = wave.dim(2), T = (L + hop() - 1) / hop();
  const Tensor rows = wave.clone().reshape({B, L, 1});
  Tensor y;  // (B, T, 2C)
  if (ts.sharded()) {
    // Whole hops per device: S frames' worth of samples, zeros past L.
    const int64_t S = ts.shard_rows(T) * hop(), start = std::min(L, ts.row0(S));
    const int64_t have = std::min(S, L - start);
    Tensor shard = rows.narrow(1, start, have);
    if (have < S) shard = concat({shard, Tensor({B, S - have, 1})}, 1);
    y = ts.gather(g.run(shard, ts, T * hop()), T);
  } else {
    y = g.run(rows);
  }
  MESHNN_CHECK(y.dim(1) == T, "internal: toy encode produced ", y.dim(1), " frames");
  return ops::permute(y, {0, 2, 1});
}

int64_t Model::min_decode_frames() const { return decode_graph()->min_shard_rows(); }

int64_t Model::min_encode_frames() const {
  return Rows(encode_graph()->min_shard_rows(), hop()).ceil();  // samples → whole hops
}

}  // namespace meshnn::test::toy
