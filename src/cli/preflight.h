// Checks the commands make before loading weights or decoding, each called from one line of its
// command (the generic ones live in the public API: io::check_output_path, check_thread_count,
// float_input, AudioModel::check_input).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshnn::cli {

// demo --seconds → latent frames round(seconds · 25): InvalidArgument unless 0.08 s (2 frames,
// the shortest decodable latent) ≤ seconds ≤ 60; ShapeError when `mesh` ("RxC") cannot split it.
int64_t demo_latent_frames(double seconds, const std::string& mesh);

// The files a command reads for one input option's value, for the output rule (no output may be
// written over any of them): the value itself; for a folder every regular file directly in it (a
// model folder's files are never outputs, whichever loader opens them: weights, shards, index,
// config); for a model path (`model_path`: a --checkpoint) also the files AudioModel::files lists
// (a config.json beside a checkpoint file). Reads no weights; a FIFO or device is only named.
std::vector<std::string> files_read_for(const std::string& value, bool model_path);

}  // namespace meshnn::cli
