// GET /v1/models/{name}/example: a seeded random input in a model's input layout, so that the page
// (or curl) can try a model without data of its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "meshnn/audio_model.h"

namespace meshnn::serve {

struct ExampleQuery {
  double seconds = 1;  // audio seconds the input gives (0 < seconds ≤ 60)
  uint64_t seed = 0;
  int64_t items = 1;  // batch items, where the model's batch axis is free
};
// "seconds=2&seed=7&items=1" → the query; InvalidArgument naming the parameter when one is out of
// range or unknown.
ExampleQuery parse_example_query(std::string_view query);

// spec.example(seconds, seed, items) (meshnn/audio_model.h: B = items, T = max(1, round(seconds ·
// frames_per_second)), seeded standard normal values) → .npy bytes.
std::string example_input_npy(const AudioIoSpec& spec, const ExampleQuery& q);

}  // namespace meshnn::serve
