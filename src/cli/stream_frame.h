// The one definition of a stream frame, per model, shared by every way a stream is fed: the raw
// float32 frames of `--frames-from` (audio-decode, vocode) and the binary messages of serve's
// WebSocket `/stream`. A frame is one time step of the model's input for `items` batch items,
// item-major: items × (the input's fixed dims, in order) float32 values. From the input spec:
//   a latent (1, C, T, F) with a fixed batch: items 1, frame = latent[:, t, :], C·F values;
//   a mel (B, num_mels, T): frame = mel[b, :, t] for b = 0 … items − 1;
//   latents (B, C, T): frame = z[b, :, t] for each item (stereo: items 2, 2·C values).
// `items` is chosen by the caller (`--items N`, `?items=N`; default 1): raw frames carry no shape,
// so a stereo stream read as mono (or the reverse) would decode silently wrong.
#pragma once

#include <cstdint>
#include <string>

#include "cli/batch_limit.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/tensor.h"

namespace meshnn::cli {

struct StreamFrame {
  int64_t items = 1;     // batch items per frame
  int64_t per_item = 0;  // float32 values of one item's frame (C, or C·F)
  int64_t size() const { return items * per_item; }
  // frames (n, size()) → the model's input layout with `items` as its batch: (items, C, n) or
  // (items, C, n, F).
  Tensor to_input(const Tensor& frames) const;
  // A stream's output (items, C, m) → (1, items·C, m), one channel per item (item 0 first).
  static Tensor as_planar(const Tensor& y);
  // E.g. "2 items × 32 values (128 bytes)".
  std::string describe() const;

  int64_t channels = 0, freq = 1;  // the input's fixed dims: C, and F for a 4-D input
};

// The frame of `spec` for `items` items (1 … kMaxBatchItems where the batch axis is free, 1 where
// it is fixed). InvalidArgument naming `option` otherwise, or when the input has no time axis at 2
// (a layout the frame cannot describe).
StreamFrame stream_frame(const AudioIoSpec& spec, int64_t items, const std::string& option);

}  // namespace meshnn::cli
