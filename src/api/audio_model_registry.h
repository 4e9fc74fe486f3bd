// The model registry behind meshnn::AudioModel: each model the public API loads contributes one
// entry (its name, how it recognises a path, how it loads), defined beside its typed API class.
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
  std::string model, description;
  AudioIoSpec input, output;
  bool has_encoder = false, can_stream = false;
  virtual int64_t output_samples(int64_t frames) const = 0;
  virtual Tensor run(const Tensor& input, const RunOptions& options) const = 0;
  virtual Tensor encode(const Tensor& wave, const RunOptions& options) const;  // throws
  virtual AudioStream stream(const StreamOptions& options) const;              // throws
};

namespace api {

struct AudioModelEntry {
  std::string name;
  // "" when `path` is this model's (it will load it), else why not, in a few words.
  std::function<std::string(const std::string& path, const AudioModelOptions&)> refusal;
  std::function<std::shared_ptr<const AudioModel::Impl>(const std::string& path,
                                                        const AudioModelOptions&)>
      load;
};

// The entries, each defined in its model's API file; the registry lists them in load order.
AudioModelEntry minimax_h3_audio_entry();
AudioModelEntry ltx_audio_decoder_entry();
AudioModelEntry nvidia_bigvgan_entry();

}  // namespace api
}  // namespace meshnn
