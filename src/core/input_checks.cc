#include "meshnn/core/input_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "meshnn/core/cpu.h"
#include "meshnn/core/error.h"

namespace meshnn {

Tensor float_input(const Tensor& t, const std::string& name) {
  MESHNN_CHECK_AS(ShapeError, t.defined(), name, ": no data");
  MESHNN_CHECK_AS(ShapeError, t.dtype() == DType::f32 || t.dtype() == DType::f64, name,
                  ": must be float32 or float64, got ", dtype_name(t.dtype()),
                  " (convert it explicitly, e.g. numpy .astype(np.float32))");
  return t.dtype() == DType::f32 ? t : t.to(DType::f32);
}

namespace {
template <class T>
void check_finite_of(const T* p, const Tensor& t, const std::string& name) {
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(static_cast<double>(p[i]))) continue;
    // Flat → (i, j, k) index, row-major.
    std::string idx;
    int64_t r = i;
    for (int d = t.rank() - 1; d >= 0; --d) {
      idx = detail::concat(r % t.dim(d), d == t.rank() - 1 ? "" : ", ", idx);
      r /= t.dim(d);
    }
    throw InvalidArgument(detail::concat(name, ": non-finite value ", static_cast<double>(p[i]),
                                         " at index (", idx, ") of shape ", shape_str(t.shape())));
  }
}
}  // namespace

int64_t first_non_finite(const float* p, int64_t n) {
  constexpr int64_t kBlock = 1024;
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int64_t b1 = std::min(n, b0 + kBlock);
    // Inf and NaN are the values whose exponent bits are all ones.
    uint32_t bad = 0;
    for (int64_t i = b0; i < b1; ++i) {
      uint32_t bits;
      std::memcpy(&bits, p + i, sizeof bits);
      bad |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    }
    if (!bad) continue;
    for (int64_t i = b0; i < b1; ++i)
      if (!std::isfinite(p[i])) return i;
  }
  return -1;
}

void check_model_output(const Tensor& y, const std::string& model, const std::string& stage) {
  if (!y.defined() || y.dtype() != DType::f32) return;
  if (first_non_finite(y.data<float>(), y.numel()) < 0) return;
  try {
    check_finite(y, "");
  } catch (const InvalidArgument& e) {
    // Reuse check_finite's "(i, j, k)" formatting of the first bad element.
    std::string where = e.what();
    if (where.rfind(": ", 0) == 0) where = where.substr(2);
    throw NumericalError(
        detail::concat(model, ": ", stage, " produced a ", where,
                       " from finite inputs: the model is at fault (a non-finite weight, "
                       "or inputs so large that float32 overflows inside it)"));
  }
}

void check_stage_output(const Tensor& y, int64_t rows, const std::string& model,
                        const std::string& stage) {
  if (!y.defined() || y.dtype() != DType::f32 || y.rank() < 2) return;
  const int64_t B = y.dim(0), S = y.dim(1);
  rows = std::clamp<int64_t>(rows, 0, S);
  const int64_t per_row = S > 0 ? y.numel() / (B * S) : 0;
  bool bad = false;
  for (int64_t b = 0; b < B && !bad; ++b)
    bad = first_non_finite(y.data<float>() + b * S * per_row, rows * per_row) >= 0;
  if (bad) check_model_output(y.narrow(1, 0, rows), model, stage);
}

void check_finite(const Tensor& t, const std::string& name) {
  if (!t.defined()) return;
  switch (t.dtype()) {
    case DType::f32:
      return check_finite_of(t.data<float>(), t, name);
    case DType::f64:
      return check_finite_of(t.data<double>(), t, name);
    case DType::bf16:
    case DType::f16: {
      const Tensor f = t.to(DType::f32);
      return check_finite_of(f.data<float>(), f, name);
    }
    default:
      return;
  }
}

int max_threads() { return std::max(64, 8 * available_cores()); }

void check_thread_count(int threads, const std::string& option) {
  MESHNN_CHECK(threads >= 0, option, " ", threads, ": must be ≥ 0 (0 = automatic)");
  MESHNN_CHECK(threads <= max_threads(), option, " ", threads, ": above the bound ", max_threads(),
               " (8 × the ", available_cores(), " available cores, at least 64)");
}

}  // namespace meshnn
