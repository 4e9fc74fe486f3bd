#include "models/bigvgan/model.h"

#include <cmath>

#include "graph/graph.h"
#include "io/json.h"
#include "models/common/audio_description.h"
#include "models/common/checkpoint_check.h"
#include "ops/permute.h"

namespace meshnn::models {

BigVgan::BigVgan(const BigVganConfig& config, const std::map<std::string, Tensor>& state,
                 Precision precision, const std::string& where)
    : cfg_(config) {
  const std::string prefix = nvidia_generator_prefix(state, cfg_.generator);
  // Every key problem of the file at once, before any layer reads a weight.
  std::map<std::string, Shape> shapes;
  for (const auto& [k, t] : state) shapes.emplace(k, t.shape());
  require_bigvgan_checkpoint(cfg_.generator, prefix, shapes, where);
  gen_ = std::make_unique<Generator>(cfg_.generator, state, prefix, precision);
}

std::unique_ptr<BigVgan> BigVgan::load(const io::WeightFile& file, const std::string& config_path,
                                       Precision precision) {
  nlohmann::json j;
  if (!config_path.empty()) {
    j = io::read_config_json_file(config_path);
  } else {
    auto it = file.metadata.find("config");
    if (it == file.metadata.end())
      throw InvalidArgument("checkpoint '" + file.path +
                            "' carries no 'config' metadata; pass the model's config.json with "
                            "--config (or put it beside the checkpoint)");
    j = io::parse_config_json(it->second, file.path + " config");
  }
  const BigVganConfig cfg = parse_bigvgan_config(j, config_path.empty() ? file.path : config_path);
  return std::make_unique<BigVgan>(cfg, file.tensors, precision, file.path);
}

std::unique_ptr<BigVgan> BigVgan::load(const io::SafetensorsFile& file,
                                       const std::string& config_path, Precision precision) {
  io::WeightFile w{file.path(), "safetensors", {}, file.metadata()};
  for (const std::string& k : file.keys()) w.tensors.emplace(k, file.get(k));
  return load(w, config_path, precision);
}

// mel (B, C, T) → (B, T, C)
Tensor mel_rows(const Tensor& mel) { return ops::permute(mel, {0, 2, 1}); }

ops::MelConfig mel_config_of(const BigVganConfig& c) {
  ops::MelConfig m;
  m.sampling_rate = c.generator.sampling_rate;
  m.n_fft = c.n_fft;
  m.num_mels = c.num_mels;
  m.hop_size = c.hop_size;
  m.win_size = c.win_size;
  m.fmin = c.fmin;
  m.fmax = c.fmax;
  return m;
}

Tensor BigVgan::vocode_mel(const Tensor& mel, const TimeShard& ts) {
  mel.check_dtype(DType::f32);
  MESHNN_CHECK_AS(ShapeError, mel.rank() == 3 && mel.dim(1) == cfg_.num_mels && mel.dim(2) >= 1,
                  "mel: expected (B, ", cfg_.num_mels, ", frames), got ", shape_str(mel.shape()));
  const float* s = mel.data<float>();
  for (int64_t i = 0; i < mel.numel(); ++i)
    MESHNN_CHECK(std::isfinite(s[i]), "mel: non-finite value at flat index ", i);
  const int64_t T = mel.dim(2);
  check_time_split(T, ts.parts(), min_frames_per_device(), "mel");
  const Tensor x = mel_rows(mel);
  Tensor y = gen_->forward(ts.partition(x), ts, T);
  return ts.gather(y, T * cfg_.generator.hop());
}

Tensor BigVgan::mel_of(const Tensor& wav) const {
  return ops::bigvgan_mel_spectrogram(wav, mel_config());
}

graph::NodePtr BigVgan::graph() const { return gen_->graph(); }

}  // namespace meshnn::models
