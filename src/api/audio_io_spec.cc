// meshnn::AudioIoSpec's printed layout and seeded example input (the demo's, preflight's and
// serve's GET …/example). Its own file: serve's body parser (and its fuzz target, which links only
// the core and io) needs it without the model registry.
#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"

namespace meshnn {

std::string AudioIoSpec::layout() const {
  std::ostringstream s;
  s << '(';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s << ", ";
    if (static_cast<int>(i) == time_axis)
      s << 'T';
    else if (shape[i] < 0)
      s << 'B';
    else
      s << shape[i];
  }
  s << ')';
  return s.str();
}

std::vector<int64_t> AudioIoSpec::example_shape(double seconds, int64_t items) const {
  MESHNN_CHECK_AS(InvalidArgument, items == 1 || shape.empty() || shape[0] < 0, "example items ",
                  items, ": this model's batch is fixed at 1");
  // round(seconds · frames per second) (round-half-even, as Python's round in the reference
  // pipelines), at least one frame.
  const int64_t T =
      std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(seconds * frames_per_second)));
  std::vector<int64_t> out = shape;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] < 0) out[i] = i == 0 ? items : 1;
  if (time_axis >= 0 && time_axis < static_cast<int>(out.size())) out[time_axis] = T;
  return out;
}

// (…, T, …) → the same shape of N(0, 1) f32 values, in generation order.
Tensor AudioIoSpec::example(double seconds, uint64_t seed, int64_t items) const {
  Tensor t = Tensor::empty(example_shape(seconds, items));
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = normal(gen);
  return t;
}

}  // namespace meshnn
