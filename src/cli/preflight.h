// Checks the commands make before loading weights or decoding, each called from one line of its
// command (the generic ones live in the public API: io::check_output_path, check_thread_count,
// float_input, AudioModel::check_input).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meshnn/audio_model.h"

namespace meshnn::cli {

// demo --seconds → the input of `model`'s random() model for that long (batch 1, free axes 1, the
// time axis round(seconds · its frames per second), at least 1), before it is built:
// InvalidArgument unless 0.08 ≤ seconds ≤ 60; the model's own refusal (AudioModel::check_input,
// e.g. a ShapeError) when it cannot run that input one shot on `mesh` ("RxC").
std::vector<int64_t> demo_input_shape(double seconds, const AudioModelEntry& model,
                                      const std::string& mesh);

// The files a command reads for one input option's value, for the output rule (no output may be
// written over any of them): the value itself; for a folder every regular file directly in it (a
// model folder's files are never outputs, whichever loader opens them: weights, shards, index,
// config); for a model path (`model_path`: a --checkpoint) also the files AudioModel::files lists
// (a config.json beside a checkpoint file). Reads no weights; a FIFO or device is only named.
std::vector<std::string> files_read_for(const std::string& value, bool model_path);

}  // namespace meshnn::cli
