#include "models/minimax_h3/model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/layers/state_dict.h"
#include "models/bigvgan/model.h"
#include "models/common/audio_description.h"
#include "models/minimax_h3/attention.h"
#include "ops/elementwise.h"

namespace meshnn::models::minimax_h3 {

using namespace graph;

namespace {

Tensor f32(const Tensor& t) { return t.dtype() == DType::f32 ? t : t.to(DType::f32); }

Conv1d make_conv(const std::map<std::string, Tensor>& state, const std::string& key, int64_t ci,
                 int64_t co, int64_t k, int64_t stride, int64_t pad, int64_t dilation,
                 Precision p) {
  Conv1dConfig c;
  c.in_channels = ci;
  c.out_channels = co;
  c.kernel_size = k;
  c.stride = stride;
  c.dilation = dilation;
  c.padding = pad;
  c.precision = p;
  Conv1d conv(c, key);
  conv.load(state, key);  // folds an unfolded weight norm (layers::weight_norm_names) here
  return conv;
}

layers::SnakeParams snake(const std::map<std::string, Tensor>& state, const std::string& key,
                          int64_t channels) {
  const Tensor a = f32(state.at(key)).reshape({channels});  // stored (1, C, 1), linear α
  return layers::make_snake_params(layers::SnakeKind::snake, a, nullptr, false, channels, 1, key);
}

NodePtr snake_rows(const layers::SnakeParams& p) {
  return map_rows("snake1d", 1, [p](const Tensor& x) { return layers::snake_forward(x, p); });
}

NodePtr residual(NodePtr branch) {
  std::vector<NodePtr> b;
  b.push_back(identity());
  b.push_back(std::move(branch));
  return fork_join("residual_add", std::move(b), [](std::vector<Tensor>& p) {
    ops::add_(p[1], p[0]);
    return p[1];
  });
}

std::map<std::string, Tensor> subtree(const std::map<std::string, Tensor>& state,
                                      const std::string& prefix) {
  std::map<std::string, Tensor> out;
  for (const auto& [k, v] : state)
    if (k.rfind(prefix, 0) == 0) out.emplace(k.substr(prefix.size()), v);
  return out;
}

void check_finite(const Tensor& t, const char* what) {
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    MESHNN_CHECK(std::isfinite(p[i]), what, ": non-finite value at flat index ", i);
}

}  // namespace

bool is_minimax_h3_folder(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path cfg = fs::path(folder) / kConfigFile;
  if (!fs::is_directory(folder, ec) || !fs::is_regular_file(cfg, ec)) return false;
  try {
    return is_minimax_h3_config(io::read_config_json_file(cfg.string()));
  } catch (const Error&) {
    return false;
  }
}

std::unique_ptr<Model> Model::load(const std::string& folder, Precision precision, Parts parts) {
  namespace fs = std::filesystem;
  const std::string cfg_path = (fs::path(folder) / kConfigFile).string();
  const std::string w_path = (fs::path(folder) / kWeightsFile).string();
  MESHNN_CHECK(fs::is_regular_file(cfg_path), "'", folder,
               "' is not a MiniMax-H3 audio VAE folder: no ", kConfigFile);
  MESHNN_CHECK(fs::is_regular_file(w_path), "'", folder, "': no ", kWeightsFile);
  const Config cfg = parse_config(io::read_config_json_file(cfg_path), cfg_path);
  const io::SafetensorsFile file = io::SafetensorsFile::open(w_path);
  std::map<std::string, TensorInfo> info;
  for (const std::string& k : file.keys()) info[k] = {file.shape(k), file.dtype(k)};
  require_tensors(cfg, info, w_path);
  std::map<std::string, Tensor> state;
  for (const std::string& k : file.keys()) state.emplace(k, file.get(k));
  return std::make_unique<Model>(cfg, state, precision, parts);
}

Model::Model(const Config& cfg, const std::map<std::string, Tensor>& state, Precision precision,
             Parts parts)
    : cfg_(cfg), parts_(parts), precision_(precision) {
  cfg_.validate("minimax_h3 config");
  {
    std::map<std::string, TensorInfo> info;
    for (const auto& [k, v] : state) info[k] = {v.shape(), v.dtype()};
    require_tensors(cfg_, info, "minimax_h3 checkpoint");
  }
  const int64_t D = cfg_.latent_dim, C = cfg_.latent_channels;
  if (has_decoder()) {
    dec_in_proj_ = make_conv(state, keys::dec_in_proj(), C, D, 1, 1, 0, 1, precision);
    gen_ = std::make_unique<Generator>(cfg_.generator(), state, keys::decoder(), precision);
    decode_graph_ = decode_stream();
  }
  if (has_encoder()) {
    conv_in_ = make_conv(state, keys::conv_in(), 1, cfg_.encoder_dim, 7, 1, 3, 1, precision);
    const int n = static_cast<int>(cfg_.encoder_rates.size());
    for (int i = 1; i <= n; ++i) {
      const int64_t ci = cfg_.encoder_width(i - 1), s = cfg_.encoder_rates[i - 1];
      EncoderStage st;
      const int dil[3] = {1, 3, 9};
      for (int u = 0; u < 3; ++u) {
        st.snakes.push_back(snake(state, keys::unit_alpha(i, u, 0), ci));
        st.convs.push_back(make_conv(state, keys::unit_conv(i, u, 0), ci, ci, 7, 1, 3 * dil[u],
                                     dil[u], precision));
        st.snakes.push_back(snake(state, keys::unit_alpha(i, u, 1), ci));
        st.convs.push_back(
            make_conv(state, keys::unit_conv(i, u, 1), ci, ci, 1, 1, 0, 1, precision));
      }
      st.snakes.push_back(snake(state, keys::stage_alpha(i), ci));
      // k = 2s, padding ⌈s/2⌉: exactly n/s outputs for n divisible by s.
      st.convs.push_back(
          make_conv(state, keys::stage_conv(i), ci, 2 * ci, 2 * s, s, (s + 1) / 2, 1, precision));
      stages_.push_back(std::move(st));
    }
    const int64_t cf = cfg_.encoder_width(n);
    snake_out_ = snake(state, keys::final_alpha(cfg_), cf);
    conv_out_ = make_conv(state, keys::conv_out(cfg_), cf, D, 3, 1, 1, 1, precision);
    pre_block_ = std::make_unique<CausalAttentionProjection>(
        subtree(state, keys::pre_block()), D, cfg_.num_attention_heads, C, precision);
    // mean_proj and logs_proj read the same rows: one (2C, C, 1) conv, [mean | logs].
    std::map<std::string, Tensor> heads;
    const std::string mp = keys::mean_proj(), lp = keys::logs_proj(), hp = "posterior_heads";
    heads[weight_key(hp)] =
        concat({f32(state.at(weight_key(mp))), f32(state.at(weight_key(lp)))}, 0);
    heads[bias_key(hp)] = concat({f32(state.at(bias_key(mp))), f32(state.at(bias_key(lp)))}, 0);
    heads_ = make_conv(heads, hp, C, 2 * C, 1, 1, 0, 1, precision);
    encode_graph_ = encode_stream();
  }
}

NodePtr Model::decode_stream() const {
  MESHNN_CHECK_AS(InvalidArgument, has_decoder(), "minimax_h3: the decoder was not loaded");
  std::vector<NodePtr> g;
  g.push_back(conv_node(*dec_in_proj_));
  g.push_back(gen_->graph());
  return sequence(std::move(g));
}

NodePtr Model::encode_stream() const {
  MESHNN_CHECK_AS(InvalidArgument, has_encoder(), "minimax_h3: the encoder was not loaded");
  std::vector<NodePtr> g;
  g.push_back(pad_to_multiple(cfg_.hop()));
  g.push_back(conv_node(*conv_in_));
  for (const EncoderStage& st : stages_) {
    for (int u = 0; u < 3; ++u) {
      std::vector<NodePtr> br;
      br.push_back(snake_rows(st.snakes[2 * u]));
      br.push_back(conv_node(st.convs[2 * u]));
      br.push_back(snake_rows(st.snakes[2 * u + 1]));
      br.push_back(conv_node(st.convs[2 * u + 1]));
      g.push_back(residual(sequence(std::move(br))));
    }
    g.push_back(snake_rows(st.snakes[6]));
    g.push_back(conv_node(st.convs[6]));
  }
  g.push_back(snake_rows(snake_out_));
  g.push_back(conv_node(*conv_out_));
  g.push_back(pre_block_->fork());
  g.push_back(conv_node(*heads_));
  return sequence(std::move(g));
}

Tensor Model::decode(const Tensor& latents) {
  MESHNN_CHECK_AS(InvalidArgument, has_decoder(), "minimax_h3: the decoder was not loaded");
  return decode(latents, *decode_graph_, TimeShard());
}

void Model::check_latents(const Tensor& latents) const {
  MESHNN_CHECK_AS(InvalidArgument, has_decoder(), "minimax_h3: the decoder was not loaded");
  MESHNN_CHECK_AS(ShapeError, latents.defined(), "minimax_h3 decode: no latents");
  latents.check_dtype(DType::f32);
  const int64_t C = cfg_.latent_channels;
  MESHNN_CHECK_AS(
      ShapeError,
      latents.rank() == 3 && latents.dim(1) == C && latents.dim(2) >= 1 && latents.dim(0) >= 1,
      "minimax_h3 decode: expected latents (B, ", C, ", T ≥ 1), got ", shape_str(latents.shape()));
  check_finite(latents, "minimax_h3 decode: latents");
}

void Model::check_wave(const Tensor& wave) const {
  MESHNN_CHECK_AS(InvalidArgument, has_encoder(), "minimax_h3: the encoder was not loaded");
  MESHNN_CHECK_AS(ShapeError, wave.defined(), "minimax_h3 encode: no waveform");
  wave.check_dtype(DType::f32);
  MESHNN_CHECK_AS(
      ShapeError, wave.rank() == 3 && wave.dim(1) == 1 && wave.dim(2) >= 1 && wave.dim(0) >= 1,
      "minimax_h3 encode: expected a waveform (B, 1, L ≥ 1), got ", shape_str(wave.shape()));
  check_finite(wave, "minimax_h3 encode: waveform");
}

Tensor Model::decode(const Tensor& latents, Node& graph, const TimeShard& ts) const {
  check_latents(latents);
  const int64_t B = latents.dim(0), T = latents.dim(2);
  const Tensor rows = mel_rows(latents);  // (B, T, C)
  Tensor y = ts.sharded() ? ts.gather(graph.run(ts.partition(rows), ts, T), T * hop())
                          : graph.run(rows);  // (B, hop·T, 1)
  MESHNN_CHECK(y.dim(1) == T * hop(), "internal: decode produced ", y.dim(1), " samples");
  return y.reshape({B, 1, T * hop()});
}

Model::Posterior Model::encode(const Tensor& wave) {
  MESHNN_CHECK_AS(InvalidArgument, has_encoder(), "minimax_h3: the encoder was not loaded");
  return encode(wave, *encode_graph_, TimeShard());
}

Model::Posterior Model::encode(const Tensor& wave, Node& graph, const TimeShard& ts) const {
  check_wave(wave);
  const int64_t B = wave.dim(0), L = wave.dim(2), C = cfg_.latent_channels;
  const int64_t T = (L + hop() - 1) / hop();
  const Tensor rows = wave.clone().reshape({B, L, 1});
  Tensor y;  // (B, T, 2C)
  if (ts.sharded()) {
    // Whole hops per device: S latents' worth of samples, zeros past L (pad_to_multiple's rows).
    const int64_t S = ts.shard_rows(T) * hop(), start = std::min(L, ts.row0(S));
    const int64_t have = std::min(S, L - start);
    Tensor shard = rows.narrow(1, start, have);
    if (have < S) shard = concat({shard, Tensor({B, S - have, 1})}, 1);
    y = ts.gather(graph.run(shard, ts, L), T);
  } else {
    y = graph.run(rows);
  }
  MESHNN_CHECK(y.dim(1) == T, "internal: encode produced ", y.dim(1), " latents");
  Posterior p;
  p.mean = mel_rows(y.narrow(2, 0, C).clone());  // (B, T, C) → (B, C, T)
  p.logs = mel_rows(y.narrow(2, C, C).clone());
  return p;
}

int64_t Model::min_decode_frames_per_device() const {
  MESHNN_CHECK_AS(InvalidArgument, has_decoder(), "minimax_h3: the decoder was not loaded");
  return decode_graph_->min_shard_rows();  // the graph's input rows are latent frames
}

int64_t Model::min_encode_frames_per_device() const {
  MESHNN_CHECK_AS(InvalidArgument, has_encoder(), "minimax_h3: the encoder was not loaded");
  // The graph's input rows are samples; a device holds whole hops of them.
  return graph::Rows(encode_graph_->min_shard_rows(), hop()).ceil();
}

namespace {
Tensor affine_channels(const Tensor& z, const std::vector<float>& mul,
                       const std::vector<float>& add, bool normalise, int64_t C) {
  z.check_dtype(DType::f32);
  MESHNN_CHECK_AS(ShapeError, z.rank() == 3 && z.dim(1) == C, "latents: expected (B, ", C,
                  ", T), got ", shape_str(z.shape()));
  MESHNN_CHECK(!mul.empty() && !add.empty(),
               "this config carries no latents_mean / latents_std to normalise with");
  Tensor out = z.clone();
  float* p = out.data<float>();
  const int64_t T = z.dim(2);
  for (int64_t b = 0; b < z.dim(0); ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < T; ++t) {
        float& v = p[(b * C + c) * T + t];
        v = normalise ? (v - add[c]) / mul[c] : v * mul[c] + add[c];
      }
  return out;
}
}  // namespace

Tensor Model::denormalize(const Tensor& z) const {
  return affine_channels(z, cfg_.latents_std, cfg_.latents_mean, false, cfg_.latent_channels);
}
Tensor Model::normalize(const Tensor& z) const {
  return affine_channels(z, cfg_.latents_std, cfg_.latents_mean, true, cfg_.latent_channels);
}

}  // namespace meshnn::models::minimax_h3
