// What a model contributes to its meshnn::AudioStream (its graph, how a checked push becomes graph
// rows, the output's rate and channels); make_audio_stream builds the rest (the engine on one
// device or a pipeline, the look-ahead from the graph's reach, the batch and thread rules). Every
// model's stream is made this way, so a new model's stream adds no line to streaming.cc. Also the
// helpers the registry entries share at the API edge (input checks, the output layout).
#pragma once

#include <functional>
#include <string>

#include "graph/graph.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/tensor.h"

namespace meshnn::api {

struct StreamSpec {
  std::function<graph::NodePtr()> graph;         // the model's stream graph
  std::function<Tensor(const Tensor&)> to_rows;  // public frames → checked rows (B, n, …)
  Shape calibration;                             // the row shape of a typical push
  float lo = 0, hi = 0;                          // the calibration values' range (uniform)
  int sample_rate = 0;
  int64_t channels = 0, samples_per_frame = 0;  // output (B, channels, m)
  // The weights and graph the stream runs (batch_key()): streams of a StreamGroup must agree;
  // empty = the stream cannot join one.
  std::string batch_key;
};

// "<graph>@<weights' address>": equal for the streams of one loaded model and graph.
std::string batch_key(const void* weights, const char* graph);

// The stream of `spec` on options' mesh ("1x1" or a 1xN pipeline), backend and threads.
AudioStream make_audio_stream(const StreamSpec& spec, const StreamOptions& options);

// f32 frames of rank want.size() with the given fixed dims (−1: any), finite; ShapeError
// naming `what` otherwise.
void check_stream_frames(const Tensor& t, const Shape& want, const char* what);

// Frames of a typical push: options.push_frames, else `fallback`.
int64_t push_frames_or(const StreamOptions& options, int64_t fallback);

// (B, S, C) interleaved → (B, C, S) planar, as PyTorch audio models return waveforms (a model's
// run() and every stream's output). Mono needs no copy: (B, S, 1) and (B, 1, S) are the same bytes.
Tensor to_planar(const Tensor& x);

}  // namespace meshnn::api
