// NVIDIA's BigVGAN folder: which files a checkpoint path names (folder.h).
#include "models/bigvgan/folder.h"

#include <filesystem>

#include "meshnn/core/error.h"

namespace meshnn::models {

namespace fs = std::filesystem;

std::string bigvgan_folder_refusal(const std::string& dir) {
  const fs::path d(dir);
  if (!fs::is_regular_file(d / "bigvgan_generator.safetensors") &&
      !fs::is_regular_file(d / "bigvgan_generator.pt"))
    return "a folder without bigvgan_generator.pt or bigvgan_generator.safetensors (a BigVGAN "
           "folder holds config.json and bigvgan_generator.pt as NVIDIA publishes it; a "
           "checkpoint in another form converts with tools/convert_checkpoint.py IN "
           "OUT.safetensors --kind bigvgan)";
  if (!fs::is_regular_file(d / "config.json"))
    return "a folder with BigVGAN weights but no config.json beside them";
  return "";
}

std::pair<std::string, std::string> bigvgan_files(const std::string& checkpoint,
                                                  const std::string& config_path) {
  if (!fs::is_directory(checkpoint)) return {checkpoint, config_path};
  const std::string why = bigvgan_folder_refusal(checkpoint);
  MESHNN_CHECK_AS(InvalidArgument, why.empty(), checkpoint, ": ", why);
  const fs::path d(checkpoint);
  const fs::path st = d / "bigvgan_generator.safetensors";
  return {fs::is_regular_file(st) ? st.string() : (d / "bigvgan_generator.pt").string(),
          config_path.empty() ? (d / "config.json").string() : config_path};
}

}  // namespace meshnn::models
