#include "cli/spectrogram_image.h"

#include <png.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <csetjmp>
#include <fstream>

#include "meshnn/core/error.h"
#include "meshnn/ops/fft.h"

namespace meshnn::cli {
namespace {

// The rows of a `bins`-bin spectrogram shown as at most `max_height` rows: row r (from the
// bottom) covers bins [lo, hi).
struct Bands {
  int height;
  int64_t bins;
  int64_t lo(int r) const { return r * bins / height; }
  int64_t hi(int r) const { return std::max(lo(r) + 1, (r + 1) * bins / height); }
};
Bands bands(int64_t bins, int max_height) {
  return {static_cast<int>(std::clamp<int64_t>(bins, 1, std::max(1, max_height))), bins};
}

// Mean power of a band, in dB.
double band_db(const Spectrogram& s, int64_t f, int64_t lo, int64_t hi) {
  double p = 0;
  for (int64_t k = lo; k < hi; ++k) p += std::pow(10.0, s.at(f, k) / 10.0);
  return 10.0 * std::log10(p / static_cast<double>(hi - lo) + 1e-20);
}

void put(RgbImage& img, int x, int y, double r, double g, double b) {
  const size_t p = 3 * (static_cast<size_t>(y) * img.width + x);
  img.rgb[p] = static_cast<uint8_t>(std::lround(255 * std::clamp(r, 0.0, 1.0)));
  img.rgb[p + 1] = static_cast<uint8_t>(std::lround(255 * std::clamp(g, 0.0, 1.0)));
  img.rgb[p + 2] = static_cast<uint8_t>(std::lround(255 * std::clamp(b, 0.0, 1.0)));
}

// A magma-like ramp through five stops: black, purple, magenta, orange, pale yellow (t in 0 … 1),
// the same as the page's spectrogram (web/app.js).
std::array<double, 3> magma(double t) {
  static constexpr double stops[5][3] = {{0.0, 0.0, 0.016},
                                         {0.314, 0.071, 0.482},
                                         {0.718, 0.216, 0.475},
                                         {0.988, 0.537, 0.380},
                                         {0.988, 0.992, 0.749}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double u = t - i;
  return {stops[i][0] + u * (stops[i + 1][0] - stops[i][0]),
          stops[i][1] + u * (stops[i + 1][1] - stops[i][1]),
          stops[i][2] + u * (stops[i + 1][2] - stops[i][2])};
}

RgbImage blank(int64_t frames, const Bands& bd) {
  RgbImage img;
  img.width = static_cast<int>(std::max<int64_t>(frames, 1));
  img.height = bd.height;
  img.rgb.assign(static_cast<size_t>(img.width) * img.height * 3, 0);
  return img;
}

}  // namespace

float Spectrogram::peak() const {
  float p = -INFINITY;
  for (float v : db) p = std::max(p, v);
  return p;
}

Spectrogram power_spectrogram(const float* x, int64_t frames, int64_t channels, int n_fft,
                              int64_t hop) {
  Spectrogram s;
  s.hop = std::max<int64_t>(hop, 1);
  s.bins = n_fft / 2 + 1;
  s.frames = frames <= n_fft ? 1 : (frames - n_fft + s.hop - 1) / s.hop + 1;
  s.db.assign(static_cast<size_t>(s.frames * s.bins), 0.f);
  std::vector<double> win(static_cast<size_t>(n_fft)), power(static_cast<size_t>(s.bins));
  for (int i = 0; i < n_fft; ++i) win[i] = 0.5 - 0.5 * std::cos(2.0 * M_PI * i / n_fft);
  std::vector<std::complex<double>> a(static_cast<size_t>(n_fft));
  for (int64_t f = 0; f < s.frames; ++f) {
    std::fill(power.begin(), power.end(), 0.0);
    for (int64_t c = 0; c < channels; ++c) {
      for (int i = 0; i < n_fft; ++i) {
        const int64_t t = f * s.hop + i;
        const float v = t < frames ? x[c * frames + t] : 0.f;
        a[i] = std::isfinite(v) ? v * win[i] : 0.0;
      }
      ops::fft_pow2(a);
      for (int64_t k = 0; k < s.bins; ++k) power[k] += std::norm(a[k]);
    }
    for (int64_t k = 0; k < s.bins; ++k)
      s.db[static_cast<size_t>(f * s.bins + k)] =
          static_cast<float>(10.0 * std::log10(power[k] / channels + 1e-20));
  }
  return s;
}

RgbImage level_image(const Spectrogram& s, double top_db, double range_db, int max_height) {
  const Bands bd = bands(s.bins, max_height);
  RgbImage img = blank(s.frames, bd);
  for (int64_t f = 0; f < s.frames; ++f)
    for (int r = 0; r < bd.height; ++r) {
      const double t = 1.0 + (band_db(s, f, bd.lo(r), bd.hi(r)) - top_db) / range_db;
      const auto [cr, cg, cb] = magma(t);
      put(img, static_cast<int>(f), bd.height - 1 - r, cr, cg, cb);
    }
  return img;
}

RgbImage difference_image(const Spectrogram& a, const Spectrogram& b, double range_db,
                          double floor_db, int max_height) {
  MESHNN_CHECK(a.frames == b.frames && a.bins == b.bins, "difference_image: spectrograms of ",
               a.frames, "x", a.bins, " and ", b.frames, "x", b.bins);
  const Bands bd = bands(a.bins, max_height);
  RgbImage img = blank(a.frames, bd);
  for (int64_t f = 0; f < a.frames; ++f)
    for (int r = 0; r < bd.height; ++r) {
      const double da = band_db(a, f, bd.lo(r), bd.hi(r)), db = band_db(b, f, bd.lo(r), bd.hi(r));
      const int y = bd.height - 1 - r;
      if (da < floor_db && db < floor_db) {
        put(img, static_cast<int>(f), y, 0.85, 0.85, 0.85);
        continue;
      }
      const double d = std::clamp((db - da) / range_db, -1.0, 1.0);  // −1 blue … +1 red
      if (d >= 0)
        put(img, static_cast<int>(f), y, 1.0, 1.0 - 0.85 * d, 1.0 - 0.85 * d);
      else
        put(img, static_cast<int>(f), y, 1.0 + 0.85 * d, 1.0 + 0.6 * d, 1.0);
    }
  return img;
}

namespace {

void append_png(png_structp png, png_bytep data, png_size_t n) {
  auto* out = static_cast<std::string*>(png_get_io_ptr(png));
  out->append(reinterpret_cast<const char*>(data), n);
}
void flush_png(png_structp) {}

// libpng reports errors by longjmp: nothing with a destructor lives between setjmp and the calls.
bool encode_png(const RgbImage& img, std::string& out, std::vector<png_bytep>& rows) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (!png) return false;
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, info ? &info : nullptr);
    return false;
  }
  png_set_write_fn(png, &out, append_png, flush_png);
  png_set_IHDR(png, info, static_cast<png_uint_32>(img.width), static_cast<png_uint_32>(img.height),
               8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

std::string png_bytes(const RgbImage& img) {
  MESHNN_CHECK(img.width > 0 && img.height > 0 &&
                   img.rgb.size() == static_cast<size_t>(img.width) * img.height * 3,
               "png_bytes: an image of ", img.width, "x", img.height, " with ", img.rgb.size(),
               " bytes");
  std::vector<png_bytep> rows(static_cast<size_t>(img.height));
  for (int y = 0; y < img.height; ++y)
    rows[y] = const_cast<png_bytep>(img.rgb.data() + static_cast<size_t>(y) * img.width * 3);
  std::string out;
  out.reserve(img.rgb.size() / 2 + 1024);
  MESHNN_CHECK_AS(BackendError, encode_png(img, out, rows), "libpng could not encode a ", img.width,
                  "x", img.height, " image");
  return out;
}

void write_file(const std::string& path, const std::string& bytes, const std::string& option) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  MESHNN_CHECK_AS(InvalidArgument, f.good(), option, " ", path, ": cannot write it");
}

void write_png(const std::string& path, const RgbImage& img) {
  write_file(path, png_bytes(img), "--plot");
}

}  // namespace meshnn::cli
