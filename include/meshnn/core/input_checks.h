// Checks every entry point makes on user inputs before any expensive work, one rule each, so that
// the commands and the library agree (e.g. `vocode --mel` and `audio-decode --latent` accept the
// same dtypes).
#pragma once

#include <string>

#include "meshnn/core/error.h"
#include "meshnn/core/tensor.h"

namespace meshnn {

// Float inputs (latents, mels, features): float32 or float64, converted to float32. Any other
// dtype (float16, bfloat16, integers, bool) is a ShapeError naming `name` and the dtype: a silent
// conversion would hide a wrong file.
Tensor float_input(const Tensor& t, const std::string& name);

// InvalidArgument naming the first non-finite element as "<name>: non-finite value nan at index
// (i, j, k)" (any float dtype; integer tensors are always finite).
void check_finite(const Tensor& t, const std::string& name);

// A model produced a non-finite value from finite inputs (check_model_output): a non-finite
// weight, or inputs so large that float32 overflows inside the model (a 3e38 mel). Its own type so
// that a server can answer it as the input's fault (422) with the cause, not as an internal error.
class NumericalError : public Error {
  using Error::Error;
};

// A model's f32 output, after finite inputs: a non-finite value is the model's fault (a non-finite
// weight, or inputs whose magnitude overflows float32 inside it), never the output file's. Error
// "<model>: <stage> produced a non-finite value nan at index (…) of shape (…) from finite inputs
// …" (NumericalError, a meshnn::Error: RuntimeError in Python, exit 1 in the CLI, 422 in serve).
void check_model_output(const Tensor& y, const std::string& model, const std::string& stage);

// The same check on an intermediate: the first `rows` rows (dim 1) of each batch of y (B, S, …)
// f32, the real rows of a device's time shard. Called after every stage of a model, so the error
// names the first stage whose output is non-finite, not the last one that ran.
void check_stage_output(const Tensor& y, int64_t rows, const std::string& model,
                        const std::string& stage);

// Index of the first non-finite value of p[0, n), or −1. A branch-free exponent test per block
// (the compiler vectorises it), so a pass costs about a memory read of the tensor.
int64_t first_non_finite(const float* p, int64_t n);

// Thread counts: 0 = automatic; otherwise 1 … max_threads(). InvalidArgument naming `option`.
int max_threads();  // 8 × available cores, at least 64
void check_thread_count(int threads, const std::string& option);

}  // namespace meshnn
