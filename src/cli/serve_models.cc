#include "cli/serve_models.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "meshnn/core/error.h"
#include "meshnn/io/stream_io.h"

namespace meshnn::serve {
namespace {

namespace fs = std::filesystem;

// The generator file of a BigVGAN folder as NVIDIA publishes it (our safetensors conversion).
std::string folder_checkpoint(const std::string& dir) {
  const fs::path p = fs::path(dir) / "bigvgan_generator.safetensors";
  return fs::is_regular_file(p) ? p.string() : "";
}

}  // namespace

std::shared_ptr<const ServedModel> ServedModel::load(const std::string& spec,
                                                     const StagePrecision& precision) {
  const size_t eq = spec.find('=');
  MESHNN_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size(), "--model '", spec,
               "': expected NAME=PATH");
  auto m = std::make_shared<ServedModel>();
  m->name_ = spec.substr(0, eq);
  for (char c : m->name_)
    MESHNN_CHECK(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.',
                 "--model '", spec, "': a name is letters, digits, '-', '_' and '.'");
  m->path_ = spec.substr(eq + 1);
  m->precision_ = precision.str();
  MESHNN_CHECK(fs::exists(m->path_), "--model ", m->name_, ": ", m->path_,
               ": no such file or folder");
  // A MiniMax-H3 audio VAE: a diffusers folder (the decoder and the encoder).
  if (MiniMaxH3AudioVae::is_folder(m->path_)) {
    m->h3_ = MiniMaxH3AudioVae::load(m->path_, precision.uniform("the MiniMax-H3 audio VAE"));
    m->kind_ = ModelKind::minimax_h3;
    m->sample_rate_ = m->h3_->sample_rate();
    return m;
  }
  // A folder as NVIDIA publishes BigVGAN: config.json beside the generator weights.
  std::string ckpt = m->path_;
  if (fs::is_directory(m->path_)) {
    ckpt = folder_checkpoint(m->path_);
    MESHNN_CHECK(!ckpt.empty(), "--model ", m->name_, ": ", m->path_,
                 ": neither a MiniMax-H3 folder (config.json naming AutoencoderKLMiniMaxH3Audio) "
                 "nor a BigVGAN one (no bigvgan_generator.safetensors)");
  }
  const fs::path beside = fs::path(ckpt).parent_path() / "config.json";
  const std::string config = fs::is_regular_file(beside) ? beside.string() : "";
  // The kind is whatever loader accepts the file: an LTX checkpoint carries its audio config in
  // the metadata (checked before any tensor is read), a BigVGAN one its generator tensors.
  std::string ltx_error;
  if (config.empty()) {
    try {
      m->ltx_ = LtxAudioDecoder::load(ckpt, precision);
      m->kind_ = ModelKind::ltx;
      m->sample_rate_ = m->ltx_->sample_rate();
      return m;
    } catch (const Error& e) {
      ltx_error = e.what();
    }
  }
  try {
    m->bigvgan_ = BigVganVocoder::load(ckpt, config, precision);
  } catch (const Error& e) {
    if (ltx_error.empty()) throw;
    throw FormatError(detail::concat("--model ", m->name_, ": ", ckpt,
                                     " loads neither as an LTX decoder (", ltx_error,
                                     ") nor as BigVGAN (", e.what(), ")"));
  }
  m->kind_ = ModelKind::bigvgan;
  m->sample_rate_ = m->bigvgan_->sample_rate();
  return m;
}

std::string ServedModel::kind_name() const {
  switch (kind_) {
    case ModelKind::ltx:
      return ltx_->version();
    case ModelKind::bigvgan:
      return "bigvgan";
    case ModelKind::minimax_h3:
      return "minimax-h3";
  }
  return "";
}

int64_t ServedModel::frame_size() const {
  switch (kind_) {
    case ModelKind::ltx:
      return 8 * 16;
    case ModelKind::bigvgan:
      return bigvgan_->num_mels();
    case ModelKind::minimax_h3:
      return h3_->latent_channels();
  }
  return 0;
}

double ServedModel::frames_per_second() const {
  switch (kind_) {
    case ModelKind::ltx:
      return 25.0;
    case ModelKind::bigvgan:
      return static_cast<double>(sample_rate_) / bigvgan_->hop_length();
    case ModelKind::minimax_h3:
      return static_cast<double>(sample_rate_) / h3_->hop_length();
  }
  return 0;
}

std::string ServedModel::info_json() const {
  nlohmann::json j;
  j["name"] = name_;
  j["kind"] = kind_name();
  j["precision"] = precision_;
  j["endpoints"] = kind_ == ModelKind::ltx ? nlohmann::json::array({"decode", "stream"})
                   : kind_ == ModelKind::bigvgan
                       ? nlohmann::json::array({"decode", "vocode", "stream"})
                       : nlohmann::json::array({"decode", "encode"});
  if (kind_ == ModelKind::minimax_h3) {
    j["input"] = {{"what", "latents (denormalised)"},
                  {"layout", "(B, C, T) or (C, T), B ≤ 64 output channels"},
                  {"latent_channels", h3_->latent_channels()},
                  {"frames_per_second", frames_per_second()}};
    j["encode"] = {{"input", "WAV at sample_rate, one batch item per channel"},
                   {"output", "application/x-npy (B, C, ceil(samples / hop)) float32"},
                   {"hop_length", h3_->hop_length()}};
    j["output"] = {{"sample_rate", sample_rate_}, {"channels", "B (one per latent batch item)"}};
    return j.dump();
  }
  if (kind_ == ModelKind::ltx) {
    j["input"] = {{"what", "latent"},
                  {"layout", "(1, 8, T, 16) or (8, T, 16)"},
                  {"frame_size", frame_size()},
                  {"frames_per_second", frames_per_second()}};
  } else {
    j["input"] = {{"what", "mel"},
                  {"layout", "(1, num_mels, T) or (num_mels, T); or a mono WAV"},
                  {"num_mels", bigvgan_->num_mels()},
                  {"frame_size", frame_size()},
                  {"frames_per_second", frames_per_second()}};
  }
  j["output"] = {{"sample_rate", sample_rate_}, {"channels", channels()}};
  return j.dump();
}

Tensor ServedModel::parse_body(std::string_view body, BodyType type) const {
  if (kind_ == ModelKind::minimax_h3) {
    MESHNN_CHECK(type == BodyType::npy,
                 "the MiniMax-H3 decoder takes .npy latents (application/x-npy)");
    return h3_latents_from_npy(body);
  }
  if (kind_ == ModelKind::ltx) {
    MESHNN_CHECK(type == BodyType::npy, "an LTX decoder takes an .npy latent (application/x-npy)");
    Tensor latent = ltx_latent_from_npy(body);
    RunOptions run;
    LtxAudioDecoder::check_run(latent, run);  // shape, dtype, finiteness: as audio-decode
    return latent;
  }
  if (type == BodyType::wav) return mono_wav_from_body(body, sample_rate_);
  return mel_from_npy(body);
}

double ServedModel::output_seconds(const Tensor& input) const {
  if (kind_ == ModelKind::minimax_h3)
    return static_cast<double>(input.dim(2)) * h3_->hop_length() / sample_rate_;
  if (kind_ == ModelKind::ltx)
    return static_cast<double>(ltx_->output_samples(input.dim(2))) / sample_rate_;
  if (input.rank() == 1) return static_cast<double>(input.dim(0)) / sample_rate_;  // copy synthesis
  return static_cast<double>(input.dim(2)) * bigvgan_->hop_length() / sample_rate_;
}

Tensor ServedModel::run(const Tensor& input, int threads, const ProgressFn& progress) const {
  RunOptions run;
  run.threads = threads;
  run.progress = progress;
  if (kind_ == ModelKind::minimax_h3) {
    // audio-decode's call (mesh auto = one device for this model); one channel per item.
    if (progress) progress(0, 1, "decode");       // a cancelled request stops before it starts
    const Tensor wave = h3_->decode(input, run);  // (B, 1, S)
    return wave.reshape({1, wave.dim(0), wave.dim(2)});
  }
  if (kind_ == ModelKind::ltx) {
    // audio-decode's memory rule with --mesh auto: one shot up to 10 s, chunked above.
    const int64_t chunk = LtxAudioDecoder::auto_chunk_frames(input.dim(2));
    if (chunk > 0) {
      run.mesh = "1x1";
      return ltx_->decode_chunked(input, chunk, run);
    }
    return ltx_->decode(input, run);
  }
  run.mesh = "1x1";  // vocode's default mesh
  if (input.rank() == 1) {
    const Tensor m = bigvgan_->mel_spectrogram(input);
    return bigvgan_->vocode(m.reshape({1, m.dim(0), m.dim(1)}), run);
  }
  return bigvgan_->vocode(input, run);
}

Tensor ServedModel::parse_encode_body(std::string_view body) const {
  MESHNN_CHECK(kind_ == ModelKind::minimax_h3, "serve: ", name_, " has no encoder");
  return batch_wav_from_body(body, sample_rate_);
}

Tensor ServedModel::encode(const Tensor& wave, int threads) const {
  MESHNN_CHECK(kind_ == ModelKind::minimax_h3, "serve: ", name_, " has no encoder");
  RunOptions run;
  run.threads = threads;
  return h3_->encode(wave, nullptr, run);
}

Tensor ServedModel::run_on_mesh(const Tensor& input, const RunOptions& run) const {
  if (kind_ == ModelKind::ltx) return ltx_->decode(input, run);
  if (kind_ == ModelKind::minimax_h3) return h3_->decode(input, run);
  if (input.rank() == 1) {
    const Tensor m = bigvgan_->mel_spectrogram(input);
    return bigvgan_->vocode(m.reshape({1, m.dim(0), m.dim(1)}), run);
  }
  return bigvgan_->vocode(input, run);
}

std::shared_ptr<AudioStream> ServedModel::open_stream(int threads) const {
  MESHNN_CHECK(has_stream(), "serve: ", name_, " has no stream");
  StreamOptions o;
  o.mesh = "1x1";
  o.threads = threads;
  if (kind_ == ModelKind::ltx) return std::make_shared<StreamingLtxDecoder>(*ltx_, o);
  return std::make_shared<StreamingVocoder>(*bigvgan_, o);
}

Tensor ServedModel::frames_to_input(const Tensor& frames) const {
  return kind_ == ModelKind::ltx ? io::frames_to_latent(frames) : io::frames_to_mel(frames);
}

double ServedModel::stream_seconds(int64_t frames) const {
  return static_cast<double>(frames) / frames_per_second();
}

}  // namespace meshnn::serve
