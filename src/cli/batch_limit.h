// The one bound on batch items (= output channels, one per item, or input channels of an encode)
// of every route: serve's /decode, /encode and /stream, and the CLI's audio-decode, audio-encode
// and `--items`. A larger batch would only multiply the memory of one call (a 1024-channel WAV
// took a server from 48 MB to 1.9 GB).
#pragma once

#include <cstdint>

namespace meshnn {

constexpr int64_t kMaxBatchItems = 64;

}  // namespace meshnn
