#include "cli/preflight.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/mesh/mesh.h"
#include "models/ltx/typed_model.h"

namespace meshnn::cli {

int64_t demo_latent_frames(double seconds, const std::string& mesh) {
  MESHNN_CHECK(std::isfinite(seconds) && seconds >= 0.08 && seconds <= 60, "--seconds ", seconds,
               ": must be in [0.08, 60] (0.08 s = 2 latent frames, the shortest decodable latent)");
  // round(seconds · 25) (Python's round-half-even, as the reference pipeline).
  const int64_t T = std::max<int64_t>(2, static_cast<int64_t>(std::nearbyint(seconds * 25)));
  const MeshConfig mc = parse_mesh(mesh);
  LtxAudioDecoder::check_mesh_fits(T, mc.rows * mc.cols);
  return T;
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
      // Not a model of the registry (a GR00T head, a broken file): the command's load says why.
    }
  }
  return files;
}

}  // namespace meshnn::cli
