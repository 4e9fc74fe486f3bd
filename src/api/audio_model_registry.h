// The model registry behind meshnn::AudioModel: each model the public API loads contributes one
// entry (its name, its place in the load order, how it recognises a path, how it loads), defined
// and registered beside its typed API class, so a new model adds no line here.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/audio_model.h"

namespace meshnn {

// A loaded model behind AudioModel: one subclass per registry entry.
struct AudioModel::Impl {
  virtual ~Impl() = default;
  std::string model, variant, description;
  AudioIoSpec input, output;
  bool has_encoder = false, can_stream = false, has_wave_input = false;
  bool has_latent_statistics = false;
  virtual int64_t output_samples(int64_t frames) const = 0;
  virtual Tensor run(const Tensor& input, const RunOptions& options) const = 0;
  virtual Tensor encode(const Tensor& wave, const RunOptions& options,
                        Tensor* log_std) const;                              // throws
  virtual AudioEncodeStream encode_stream(const RunOptions& options) const;  // throws
  virtual Tensor normalize_latents(const Tensor& z, bool inverse) const;     // throws
  virtual AudioStream stream(const StreamOptions& options) const;            // throws
  virtual Tensor input_from_wave(const Tensor& samples) const;               // throws
};

// An encode stream behind AudioEncodeStream: one subclass per model with an encoder.
struct AudioEncodeStream::Impl {
  virtual ~Impl() = default;
  virtual Tensor push(const Tensor& wave, Tensor* log_std) = 0;
  virtual Tensor flush(Tensor* log_std) = 0;
  virtual bool returns_output() const = 0;
  virtual int64_t lookahead_samples() const = 0;
  virtual double lookahead_ms() const = 0;
};

namespace api {

struct AudioModelEntry {
  std::string name;
  bool has_encoder = false;  // (for AudioModelOptions::encoder_only, checked before loading)
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
};

// Adds an entry to the registry; each model's API file calls it from a namespace-scope initialiser
// (`const bool registered = register_audio_model(...)`), so registration happens once, before
// main(). Returns true. A name registered twice is a programming error (std::logic_error).
bool register_audio_model(AudioModelEntry entry);

}  // namespace api
}  // namespace meshnn
