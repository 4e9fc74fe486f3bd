#include "serve/models.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "meshnn/core/error.h"

namespace meshnn::serve {

std::shared_ptr<const ServedModel> ServedModel::load(const std::string& spec,
                                                     const StagePrecision& precision) {
  const size_t eq = spec.find('=');
  MESHNN_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size(), "--model '", spec,
               "': expected NAME=PATH");
  const std::string name = spec.substr(0, eq), path = spec.substr(eq + 1);
  for (char c : name)
    MESHNN_CHECK(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.',
                 "--model '", spec, "': a name is letters, digits, '-', '_' and '.'");
  MESHNN_CHECK(std::filesystem::exists(path), "--model ", name, ": ", path,
               ": no such file or folder");
  AudioModelOptions options;
  options.precision = precision;
  std::shared_ptr<ServedModel> m;
  try {
    m = std::make_shared<ServedModel>(AudioModel::load(path, options));
  } catch (const Error& e) {
    // The registry's message (each model's reason) under the option that named the path.
    throw FormatError(detail::concat("--model ", name, ": ", e.what()));
  }
  m->name_ = name;
  m->path_ = path;
  m->precision_ = precision.str();
  // The stream frame (cli/stream_frame.h) must describe the model's input.
  if (m->has_stream()) (void)m->stream_frame(1);
  return m;
}

int64_t ServedModel::frame_size() const { return stream_frame(1).per_item; }

cli::StreamFrame ServedModel::stream_frame(int64_t items) const {
  return cli::stream_frame(model_.input_spec(), items, "stream items");
}

double ServedModel::frames_per_second() const { return model_.input_spec().frames_per_second; }

int64_t ServedModel::push_group() const {
  return std::max<int64_t>(1, std::llround(frames_per_second() / 3.0));
}

std::string ServedModel::info_json() const {
  const AudioIoSpec& in = model_.input_spec();
  nlohmann::json j;
  j["name"] = name_;
  j["kind"] = kind_name();
  j["registry_name"] = model_.model();
  j["description"] = model_.description();
  j["precision"] = precision_;
  nlohmann::json endpoints = nlohmann::json::array({"decode"});
  if (is_vocoder()) endpoints.push_back("vocode");
  if (has_encoder()) endpoints.push_back("encode");
  if (has_stream()) endpoints.push_back("stream");
  j["endpoints"] = endpoints;
  j["input"] = {{"what", in.what},
                {"layout", accepted_layouts(in) +
                               (in.shape[0] < 0 ? detail::concat(", B ≤ ", kMaxBatchItems,
                                                                 " (one output channel each)")
                                                : "") +
                               (takes_wave() ? "; or a mono WAV" : "")},
                {in.what == "mel" ? "num_mels" : "latent_channels", in.shape[1]},
                {"shape", in.shape},  // −1: any size (T; B where the batch is free)
                {"time_axis", in.time_axis},
                {"frame_size", frame_size()},
                {"stream_items", in.shape[0] < 0 ? kMaxBatchItems : 1},
                {"frames_per_second", frames_per_second()}};
  if (has_encoder()) {
    const int64_t hop = model_.output_samples(1);
    j["encode"] = {
        {"input", "WAV at sample_rate, one batch item per channel"},
        {"output", "application/x-npy " + in.layout() + " float32, T = ceil(samples / hop)"},
        {"hop_length", hop}};
  }
  j["output"] = {{"sample_rate", sample_rate()}, {"channels", channels()}};
  if (in.shape[0] < 0) j["output"]["channels_per_batch_item"] = true;
  return j.dump();
}

Tensor ServedModel::parse_body(std::string_view body, BodyType type) const {
  if (type == BodyType::wav) {
    MESHNN_CHECK(takes_wave(), "serve: ", name_, " takes an .npy ", model_.input_spec().what);
    return mono_wav_from_body(body, sample_rate());
  }
  return input_from_npy(body, model_.input_spec());
}

double ServedModel::output_seconds(const Tensor& input) const {
  if (input.rank() == 1) return static_cast<double>(input.dim(0)) / sample_rate();  // a wave
  const int64_t frames = input.dim(model_.input_spec().time_axis);
  const double items = static_cast<double>(input.dim(0));  // one output per batch item
  return items * channels() * static_cast<double>(model_.output_samples(frames)) / sample_rate();
}

Tensor ServedModel::as_planar(Tensor y) const {
  if (y.dim(0) == 1) return y;
  MESHNN_CHECK(y.rank() == 3 && y.dim(1) == 1, "serve: ", name_, ": output ", shape_str(y.shape()),
               " is neither one item nor one channel per item");
  return y.reshape({1, y.dim(0), y.dim(2)});
}

Tensor ServedModel::run(const Tensor& input, int threads, const ProgressFn& progress) const {
  RunOptions run;
  run.threads = threads;
  run.progress = progress;
  run.mesh = "auto";
  if (progress) progress(0, 1, "decode");  // a cancelled request stops before it starts
  return run_on_backend(input, run);
}

Tensor ServedModel::run_on_backend(const Tensor& input, const RunOptions& run) const {
  const Tensor x = input.rank() == 1 ? model_.input_from_wave(input) : input;
  return as_planar(model_.run(x, run));
}

Tensor ServedModel::parse_encode_body(std::string_view body) const {
  MESHNN_CHECK(has_encoder(), "serve: ", name_, " has no encoder");
  return batch_wav_from_body(body, sample_rate());
}

Tensor ServedModel::encode(const Tensor& wave, int threads) const {
  MESHNN_CHECK(has_encoder(), "serve: ", name_, " has no encoder");
  RunOptions run;
  run.threads = threads;
  return model_.encode(wave, run);
}

std::shared_ptr<AudioStream> ServedModel::open_stream(int threads, bool batched) const {
  MESHNN_CHECK(has_stream(), "serve: ", name_, " has no stream");
  StreamOptions o;
  o.mesh = "1x1";
  o.threads = threads;
  if (batched) o.group = group_;
  return std::make_shared<AudioStream>(model_.stream(o));
}

double ServedModel::stream_seconds(int64_t frames, int64_t items) const {
  return static_cast<double>(frames) * static_cast<double>(items) * channels() /
         frames_per_second();
}

}  // namespace meshnn::serve
