#include "cli/preflight.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"

namespace meshnn::cli {

std::vector<int64_t> demo_input_shape(double seconds, const AudioModelEntry& model,
                                      const std::string& mesh) {
  MESHNN_CHECK(std::isfinite(seconds) && seconds >= 0.08 && seconds <= 60, "--seconds ", seconds,
               ": must be in [0.08, 60]");
  const std::vector<int64_t> shape = model.random_input.example_shape(seconds);
  RunOptions run;
  run.mesh = mesh;
  run.chunk_frames = 0;
  AudioModelOptions named;
  named.model = model.name;
  AudioModel::check_input("", shape, run, named);
  return shape;
}

std::vector<std::string> files_read_for(const std::string& value, bool model_path) {
  namespace fs = std::filesystem;
  std::vector<std::string> files{value};
  struct stat st {};
  if (value.empty() || value == "-" || ::stat(value.c_str(), &st) != 0) return files;
  if (S_ISDIR(st.st_mode)) {
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(value, ec))
      if (e.is_regular_file(ec)) files.push_back(e.path().string());
  }
  // Only regular files and folders are asked about: identifying a FIFO would block on it.
  if (model_path && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
    try {
      for (const std::string& f : AudioModel::files(value)) files.push_back(f);
    } catch (const Error&) {
      // Not a model of the registry (a policy model's checkpoint, a broken file): the command's
      // load says why.
    }
  }
  return files;
}

}  // namespace meshnn::cli
