// NVIDIA's BigVGAN folder (config.json beside bigvgan_generator.pt as NVIDIA publishes it, or
// bigvgan_generator.safetensors converted): how a path names a BigVGAN checkpoint's files, shared
// by the registry entry's recognition and its load (entry.cc).
#pragma once

#include <string>
#include <utility>

namespace meshnn::models {

// "" when `dir` is a BigVGAN folder, else why not, naming what was looked for and the converter.
std::string bigvgan_folder_refusal(const std::string& dir);

// A BigVGAN checkpoint path → the weights file and the config.json to read ("" = the weights'
// `config` metadata). A folder gives its weights (the converted safetensors first) and its
// config.json; InvalidArgument for a folder that is not a BigVGAN one.
std::pair<std::string, std::string> bigvgan_files(const std::string& checkpoint,
                                                  const std::string& config_path);

}  // namespace meshnn::models
