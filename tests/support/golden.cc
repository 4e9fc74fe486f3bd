#include "support/golden.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace meshnn::test {

namespace {
std::vector<double> as_f64(const Tensor& t) {
  Tensor d = t.to(DType::f64);
  const double* p = d.data<double>();
  return std::vector<double>(p, p + d.numel());
}

std::string coords(const Shape& s, int64_t flat) {
  std::vector<int64_t> c(s.size());
  for (int i = static_cast<int>(s.size()) - 1; i >= 0; --i) {
    c[i] = s[i] ? flat % s[i] : 0;
    flat = s[i] ? flat / s[i] : 0;
  }
  return shape_str(c);
}
}  // namespace

CompareStats compare(const Tensor& actual, const Tensor& expected) {
  CompareStats st;
  const std::vector<double> a = as_f64(actual), b = as_f64(expected);
  double num = 0, den = 0, peak = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double d = a[i] - b[i];
    num += d * d;
    den += b[i] * b[i];
    peak = std::max(peak, std::abs(b[i]));
    const double ad = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::abs(d);
    if (ad > st.max_abs || st.worst < 0) {
      st.max_abs = ad;
      st.worst = static_cast<int64_t>(i);
    }
  }
  st.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  const double rms = a.empty() ? 0 : std::sqrt(num / static_cast<double>(a.size()));
  st.psnr_db = rms > 0 ? 20 * std::log10(peak / rms) : std::numeric_limits<double>::infinity();
  if (std::isnan(num)) st.rel_l2 = std::numeric_limits<double>::infinity();
  return st;
}

::testing::AssertionResult close_rel_l2(const Tensor& actual, const Tensor& expected, double tol,
                                        const std::string& what) {
  if (actual.shape() != expected.shape())
    return ::testing::AssertionFailure() << what << ": shape " << shape_str(actual.shape())
                                         << " != expected " << shape_str(expected.shape());
  const CompareStats st = compare(actual, expected);
  if (st.rel_l2 <= tol) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os << what << ": rel_l2 " << st.rel_l2 << " > tol " << tol << " (max_abs " << st.max_abs
     << ", psnr " << st.psnr_db << " dB), worst at " << coords(actual.shape(), st.worst) << "\n";
  const std::vector<double> a = as_f64(actual), b = as_f64(expected);
  const int64_t last = actual.shape().empty() ? 1 : actual.shape().back();
  const int64_t row0 = st.worst - st.worst % std::max<int64_t>(last, 1);
  for (int64_t i = std::max(row0, st.worst - 3); i <= std::min(row0 + last - 1, st.worst + 3); ++i)
    os << "  [" << coords(actual.shape(), i) << "] actual " << a[i] << "  expected " << b[i]
       << (i == st.worst ? "   <== worst" : "") << "\n";
  return ::testing::AssertionFailure() << os.str();
}

::testing::AssertionResult bit_equal(const Tensor& actual, const Tensor& expected,
                                     const std::string& what) {
  if (actual.shape() != expected.shape() || actual.dtype() != expected.dtype())
    return ::testing::AssertionFailure()
           << what << ": " << shape_str(actual.shape()) << " " << dtype_name(actual.dtype())
           << " vs " << shape_str(expected.shape()) << " " << dtype_name(expected.dtype());
  if (actual.nbytes() == 0 || std::memcmp(actual.raw(), expected.raw(), actual.nbytes()) == 0)
    return ::testing::AssertionSuccess();
  const CompareStats st = compare(actual, expected);
  return ::testing::AssertionFailure() << what << ": not bit-equal; max_abs " << st.max_abs
                                       << " at " << coords(actual.shape(), st.worst);
}

Tensor random_uniform(const Shape& shape, uint64_t seed, float lo, float hi) {
  Tensor t(shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

Tensor random_normal(const Shape& shape, uint64_t seed, float stddev) {
  Tensor t(shape);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.f, stddev);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

std::string fixture_path(const std::string& name) {
  return std::string(MESHNN_FIXTURE_DIR) + "/" + name;
}

double rel_l2_to_f64(const Tensor& y, const std::vector<double>& ref) {
  double num = 0, den = 0;
  const float* p = y.data<float>();
  for (size_t i = 0; i < ref.size(); ++i) {
    num += (p[i] - ref[i]) * (p[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / den);
}

}  // namespace meshnn::test
