// One model family's entry in the registry behind meshnn::AudioModel (a ModelSpec): its name, its
// place in the load order, how it recognises a path, what it loads and which files it reads. Each
// family's folder defines its entry in its entry.cc (models/<family>/entry.cc); models/registry.cc
// lists every family's entry by name, so a static link cannot drop one and a new model adds one
// line there. The loaded model answers AudioModel's calls through an AudioModel::Impl (below).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "meshnn/audio_model.h"

namespace meshnn {

// A loaded model behind AudioModel: one subclass per registry entry (the calls a model lacks
// throw InvalidArgument naming it).
struct AudioModel::Impl {
  virtual ~Impl() = default;
  std::string model, variant, description;
  AudioIoSpec input, output;
  bool has_encoder = false, can_stream = false, has_wave_input = false;
  bool has_latent_statistics = false;
  std::string config_json;                                    // as loaded
  std::vector<std::pair<std::string, Precision>> precisions;  // per stage, chain order
  int64_t parameters = -1;                                    // −1: not counted
  std::vector<float> latents_mean, latents_std;               // with has_latent_statistics
  virtual int64_t output_samples(int64_t frames) const = 0;
  // Input frames per chunk run() uses (0 = one shot); models that never chunk keep this one,
  // which refuses run.chunk_frames > 0.
  virtual int64_t chunk_frames(int64_t frames, const RunOptions& run) const;
  virtual Tensor run(const Tensor& input, const RunOptions& options) const = 0;
  virtual Tensor encode(const Tensor& wave, const RunOptions& options,
                        Tensor* log_std) const;                              // throws
  virtual AudioEncodeStream encode_stream(const RunOptions& options) const;  // throws
  virtual Tensor normalize_latents(const Tensor& z, bool inverse) const;     // throws
  virtual AudioStream stream(const StreamOptions& options) const;            // throws
  virtual Tensor input_from_wave(const Tensor& samples) const;               // throws
  virtual AudioStream stage_stream(const std::string& stage,
                                   const StreamOptions& options) const;  // throws
};

// An encode stream behind AudioEncodeStream: one subclass per model with an encoder.
struct AudioEncodeStream::Impl {
  virtual ~Impl() = default;
  virtual Tensor push(const Tensor& wave, Tensor* log_std) = 0;
  virtual Tensor flush(Tensor* log_std) = 0;
  virtual void reset() = 0;
  virtual bool returns_output() const = 0;
  virtual int64_t lookahead_samples() const = 0;
  virtual double lookahead_ms() const = 0;
  virtual int sample_rate() const = 0;
  virtual int64_t samples_per_frame() const = 0;
  virtual std::string mesh() const = 0;
};

namespace models {

struct ModelSpec {
  std::string name;
  bool has_encoder = false;  // (for AudioModelOptions::encoder_only, checked before loading)
  std::string input;         // what run() takes (AudioIoSpec::what): "latent" | "mel"
  std::string path;          // what a path of it is, in a few words (AudioModelEntry::path)
  // Place in load() order, lowest first: a path that several entries would take goes to the one
  // that recognises it most specifically (a diffusers folder's class name before file metadata).
  int rank = 0;
  // "" when `path` is this model's (it will load it), else why not, in a few words.
  std::function<std::string(const std::string& path, const AudioModelOptions&)> refusal;
  std::function<std::shared_ptr<const AudioModel::Impl>(const std::string& path,
                                                        const AudioModelOptions&)>
      load;
  // The files load() reads for a path refusal() takes (config.json, the weights, an index and its
  // shards, a config given in the options), listed from names only (nothing is read; they need not
  // exist): what no output may be written over. Unset: {path}.
  std::function<std::vector<std::string>(const std::string& path, const AudioModelOptions&)> files;
  // AudioModel::check_input: the checks of run() that need no weights (shape, mesh, chunking) on
  // the input shape run() would get. Unset: none before the load (run() checks everything).
  std::function<void(const std::vector<int64_t>& input, const RunOptions&)> check_input;
  // Seeded random weights at the released size (AudioModel::random); unset: the model has none.
  std::function<std::shared_ptr<const AudioModel::Impl>(uint64_t seed, const AudioModelOptions&)>
      random;
  // With random: the input spec of what it builds (AudioModelEntry::random_input).
  AudioIoSpec random_input;
};

// The registered entries in load order (rank, then name): every family's of models/registry.cc,
// then any added by register_model_spec. Built on first use (thread-safe); read-only after.
const std::vector<ModelSpec>& model_specs();

// Adds an entry beside the built-in ones (a model defined outside src/models, e.g. a test's toy
// model), from a namespace-scope initialiser (`const bool registered = register_model_spec(...)`)
// so that it happens before main(). Returns true. A name registered twice is a programming error
// (std::logic_error).
bool register_model_spec(ModelSpec spec);

// The `config` metadata of a safetensors file, or why there is none (what several entries'
// refusal() read to recognise a checkpoint).
struct ConfigMetadata {
  nlohmann::json config;  // null when absent
  std::string problem;    // why it could not be read ("" when read or absent)
};
ConfigMetadata config_metadata(const std::string& path);

}  // namespace models
}  // namespace meshnn
