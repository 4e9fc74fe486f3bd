// meshnn verify A B: how far audio B is from reference A, for users whose decoded audio "sounds
// wrong": waveform PSNR, log-spectral distance, the level per segment, DC offset and silence /
// non-finite checks, per channel.
//
// Inputs: WAV files (any channel count; the sample rates must match when both are WAVs) or .npy
// arrays (f32 or convertible), chosen by extension. Arrays are channel-first, as meshnn's models
// and the Python module give audio: (T,) one channel, (C, T) C channels, (B, C, T) B·C channels
// (a model output (B, 1, T): one channel per item, as the WAV the CLI writes for it; (1, C, T)
// a stereo item), at most 64 channels — a (T, C) array (soundfile's layout) is refused with the
// hint to transpose it. Both inputs must hold the same (frames, channels).
//
// B fails (exit 1) by default when it holds NaN/Inf, when a channel is silent or DC only where
// A's is not, and when a segment's level (energy per duration) differs from A's by more than
// --level-band-db where A's segment is not silent; --min-psnr / --max-lsd add bounds. A DC offset
// that A lacks is reported without failing.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/audio_common.h"
#include "cli/audio_metrics.h"
#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "cli/verify_report.h"
#include "meshnn/core/error.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/output.h"
#include "meshnn/io/wav.h"

namespace meshnn::cli {

namespace {

constexpr int64_t kMaxChannels = 64;

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// One input as (channels, frames) f32 samples, channels first (the layout of read_wav).
struct Signal {
  std::vector<float> x;
  int64_t frames = 0, channels = 1;
  int sample_rate = 0;  // 0 for arrays
  float at(int64_t t, int64_t c) const { return x[static_cast<size_t>(c * frames + t)]; }
  const float* channel(int64_t c) const { return x.data() + c * frames; }
};

// A channel-first array (T,), (C, T) or (B, C, T) → (channels, frames).
Tensor array_as_frames(const Tensor& t, const std::string& path) {
  MESHNN_CHECK_AS(ShapeError, t.rank() >= 1 && t.rank() <= 3, path, ": an array of shape ",
                  shape_str(t.shape()),
                  "; verify takes audio as (T,), (C, T) or (B, C, T) (channel-first)");
  const int64_t T = t.dim(t.rank() - 1), C = t.numel() / std::max<int64_t>(T, 1);
  MESHNN_CHECK_AS(ShapeError, C <= kMaxChannels, path, ": ", shape_str(t.shape()), " reads as ", C,
                  " channels of ", T, " samples (arrays are channel-first, at most ", kMaxChannels,
                  " channels); a (T, C) array must be transposed (x.T)");
  return t.reshape({C, T});
}

Signal load_signal(const std::string& path) {
  Signal s;
  Tensor t;
  if (ends_with(path, ".npy")) {
    t = io::load_npy(path);
    if (t.dtype() != DType::f32) t = t.to(DType::f32);
    t = array_as_frames(t, path);
  } else {
    io::WavAudio w = io::read_wav(path);
    t = w.samples;
    s.sample_rate = w.sample_rate;
  }
  s.channels = t.dim(0);
  s.frames = t.dim(1);
  MESHNN_CHECK_AS(InvalidArgument, s.frames > 0, path, ": no samples");
  const float* p = t.data<float>();
  s.x.assign(p, p + t.numel());
  return s;
}

// One channel's statistics over its finite samples; ac_rms is the RMS around the mean.
struct Stats {
  double peak = 0, rms = 0, dc = 0, ac_rms = 0;
  int64_t non_finite = 0;
};

Stats stats_of(const Signal& s, int64_t c) {
  Stats st;
  double sum = 0, sq = 0;
  int64_t n = 0;
  for (int64_t t = 0; t < s.frames; ++t) {
    const float v = s.at(t, c);
    if (!std::isfinite(v)) {
      ++st.non_finite;
      continue;
    }
    sum += v;
    sq += double(v) * v;
    st.peak = std::max(st.peak, std::abs(double(v)));
    ++n;
  }
  if (n > 0) {
    st.dc = sum / n;
    st.rms = std::sqrt(sq / n);
    st.ac_rms = std::sqrt(std::max(0.0, sq / n - st.dc * st.dc));
  }
  return st;
}

// The whole signal's statistics (every channel together), for the summary lines.
Stats overall(const std::vector<Stats>& per) {
  Stats o;
  double sq = 0, dc = 0;
  for (const Stats& s : per) {
    o.peak = std::max(o.peak, s.peak);
    o.non_finite += s.non_finite;
    sq += s.rms * s.rms;
    dc += s.dc;
  }
  o.rms = std::sqrt(sq / static_cast<double>(per.size()));
  o.dc = dc / static_cast<double>(per.size());
  return o;
}

double dbfs(double v) { return v > 0 ? 20.0 * std::log10(v) : -INFINITY; }

struct Opts {
  std::string a, b;
  double min_psnr = NAN, max_lsd = NAN, silence_dbfs = -60, level_band_db = 3;
  int64_t segments = 10;
  int n_fft = 1024;
  bool json = false;
  std::string report, plot;  // --report HTML, --plot PNG ("" = none)
};

struct Report {
  double psnr = 0, lsd = 0;
  Stats sa, sb;
  bool a_silent = false, b_silent = false;
  std::vector<double> level;  // per segment: the level of B / A furthest from 0 dB over channels
  double level_min = NAN, level_max = NAN;
  std::vector<std::string> failures, warnings;
};

std::string channel_name(const Signal& s, int64_t c) {
  return s.channels == 1 ? std::string("B") : "B channel " + std::to_string(c);
}

// The default checks of B against A, channel by channel (failures), and the DC offset (warning).
void check_channels(const Opts& o, const Signal& a, const Signal& b, Report& r) {
  const double floor = std::pow(10.0, o.silence_dbfs / 20.0);
  std::vector<Stats> sa, sb;
  r.level.assign(static_cast<size_t>(std::min(o.segments, a.frames)), NAN);
  for (int64_t c = 0; c < a.channels; ++c) {
    sa.push_back(stats_of(a, c));
    sb.push_back(stats_of(b, c));
    const Stats &x = sa.back(), &y = sb.back();
    const std::string who = channel_name(b, c);
    if (y.non_finite == 0 && x.non_finite == 0) {
      // Silence and DC only: no AC signal in B where A has one.
      if (!(x.ac_rms < floor) && y.ac_rms < floor) {
        r.failures.push_back(who + (y.rms < floor ? " is silent" : " is DC only (a constant)") +
                             " where A is not");
        continue;  // its level per segment says nothing more
      }
      const std::vector<double> lv =
          segment_level_db(a.channel(c), b.channel(c), a.frames, 1, o.segments, floor);
      for (size_t s = 0; s < lv.size(); ++s)
        if (!std::isnan(lv[s]) && !(std::abs(lv[s]) <= std::abs(r.level[s]))) r.level[s] = lv[s];
    }
    // A DC offset larger than a tenth of the RMS is audible as a click and wastes headroom.
    const bool dc_b = std::abs(y.dc) > 0.1 * std::max(y.rms, 1e-12) && std::abs(y.dc) > 1e-3;
    const bool dc_a = std::abs(x.dc) > 0.1 * std::max(x.rms, 1e-12) && std::abs(x.dc) > 1e-3;
    if (dc_b && !dc_a) r.warnings.push_back(who + " has a DC offset");
  }
  r.sa = overall(sa);
  r.sb = overall(sb);
  r.a_silent = dbfs(r.sa.rms) < o.silence_dbfs;
  r.b_silent = dbfs(r.sb.rms) < o.silence_dbfs;
  if (r.sb.non_finite)
    r.failures.insert(r.failures.begin(), "B has " + std::to_string(r.sb.non_finite) + " NaN/Inf");
  if (r.sa.non_finite)
    r.failures.push_back("A has " + std::to_string(r.sa.non_finite) + " NaN/Inf");
  for (size_t s = 0; s < r.level.size(); ++s) {
    const double v = r.level[s];
    if (std::isnan(v)) continue;
    if (!(v >= r.level_min)) r.level_min = v;
    if (!(v <= r.level_max)) r.level_max = v;
    if (!(std::abs(v) <= o.level_band_db)) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "level of B in segment %zu of %zu is %+.1f dB from A (band %g dB)", s + 1,
                    r.level.size(), v, o.level_band_db);
      r.failures.push_back(buf);
    }
  }
}

Report compare(const Opts& o, const Signal& a, const Signal& b) {
  Report r;
  r.psnr = waveform_psnr_db(a.x.data(), b.x.data(), static_cast<int64_t>(a.x.size()));
  check_channels(o, a, b, r);
  if (r.sa.non_finite == 0 && r.sb.non_finite == 0) {
    for (int64_t c = 0; c < a.channels; ++c)
      r.lsd += log_spectral_distance_db(a.channel(c), b.channel(c), a.frames, 1, o.n_fft);
    r.lsd /= static_cast<double>(a.channels);
  } else {
    r.lsd = INFINITY;
  }
  if (!std::isnan(o.min_psnr) && !(r.psnr >= o.min_psnr))
    r.failures.push_back("PSNR below " + std::to_string(o.min_psnr) + " dB");
  if (!std::isnan(o.max_lsd) && !(r.lsd <= o.max_lsd))
    r.failures.push_back("log-spectral distance above " + std::to_string(o.max_lsd) + " dB");
  return r;
}

std::string num(double v) {
  if (std::isnan(v)) return "null";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string json_list(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", \"" : "\"") + v[i] + "\"";
  return s + "]";
}

void print_json(const Signal& a, const Report& r, bool fail) {
  std::string level = "[";
  for (size_t i = 0; i < r.level.size(); ++i) level += (i ? ", " : "") + num(r.level[i]);
  level += "]";
  std::printf(
      "{\"samples\": %lld, \"channels\": %lld, \"sample_rate\": %d, \"psnr_db\": %s, "
      "\"lsd_db\": %s, \"dc_a\": %s, \"dc_b\": %s, \"rms_dbfs_a\": %s, \"rms_dbfs_b\": %s, "
      "\"peak_a\": %s, \"peak_b\": %s, \"silent_a\": %s, \"silent_b\": %s, "
      "\"non_finite_a\": %lld, \"non_finite_b\": %lld, \"level_db\": %s, \"level_min_db\": %s, "
      "\"level_max_db\": %s, \"problems\": %s, \"warnings\": %s, \"pass\": %s}\n",
      static_cast<long long>(a.x.size()), static_cast<long long>(a.channels), a.sample_rate,
      num(r.psnr).c_str(), num(r.lsd).c_str(), num(r.sa.dc).c_str(), num(r.sb.dc).c_str(),
      num(dbfs(r.sa.rms)).c_str(), num(dbfs(r.sb.rms)).c_str(), num(r.sa.peak).c_str(),
      num(r.sb.peak).c_str(), r.a_silent ? "true" : "false", r.b_silent ? "true" : "false",
      static_cast<long long>(r.sa.non_finite), static_cast<long long>(r.sb.non_finite),
      level.c_str(), num(r.level_min).c_str(), num(r.level_max).c_str(),
      json_list(r.failures).c_str(), json_list(r.warnings).c_str(), fail ? "false" : "true");
}

void print_text(const Opts& o, const Signal& a, const Report& r, bool fail) {
  std::printf("samples:       %lld (%lld channel%s%s)\n", static_cast<long long>(a.x.size()),
              static_cast<long long>(a.channels), a.channels == 1 ? "" : "s",
              a.sample_rate ? (", " + std::to_string(a.sample_rate) + " Hz").c_str() : "");
  std::printf("PSNR:          %.2f dB (peak of A over the RMS difference)\n", r.psnr);
  std::printf("log-spectral:  %.3f dB (n_fft %d)\n", r.lsd, o.n_fft);
  if (std::isnan(r.level_min)) {
    std::printf("level B/A:     - (no segment of A above the silence floor)\n");
  } else {
    std::printf("level B/A:     %+.2f … %+.2f dB over %zu segments (band ±%g dB):", r.level_min,
                r.level_max, r.level.size(), o.level_band_db);
    for (double v : r.level)
      if (std::isnan(v))
        std::printf(" -");
      else
        std::printf(" %+.2f", v);
    std::printf("\n");
  }
  std::printf("DC offset:     A %.3g, B %.3g\n", r.sa.dc, r.sb.dc);
  std::printf("RMS:           A %.1f dBFS%s, B %.1f dBFS%s\n", dbfs(r.sa.rms),
              r.a_silent ? " (silent)" : "", dbfs(r.sb.rms), r.b_silent ? " (silent)" : "");
  std::printf("peak:          A %.4g, B %.4g\n", r.sa.peak, r.sb.peak);
  if (r.sa.non_finite || r.sb.non_finite)
    std::printf("non-finite:    A %lld, B %lld\n", static_cast<long long>(r.sa.non_finite),
                static_cast<long long>(r.sb.non_finite));
  for (const std::string& p : r.failures) std::printf("problem:       %s\n", p.c_str());
  for (const std::string& p : r.warnings) std::printf("warning:       %s\n", p.c_str());
  std::printf("result:        %s\n", fail ? "FAIL" : "ok");
}

// --report (the HTML page: metrics and the three spectrograms) and --plot (B − A alone, PNG).
void write_pictures(const Opts& o, const Signal& a, const Signal& b, const Report& r, bool fail) {
  const SpectrogramImages img =
      spectrogram_images(a.x.data(), b.x.data(), a.frames, a.channels, o.n_fft);
  if (!o.plot.empty()) write_png(o.plot, img.diff);
  if (o.report.empty()) return;
  VerifyReport v;
  v.a_path = o.a;
  v.b_path = o.b;
  v.sample_rate = a.sample_rate ? a.sample_rate : b.sample_rate;
  v.frames = a.frames;
  v.channels = a.channels;
  v.n_fft = o.n_fft;
  auto fixed = [](const char* f, double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, x);
    return std::string(buf);
  };
  v.metrics = {
      {"samples", std::to_string(a.x.size()) + " (" + std::to_string(a.channels) + " channel" +
                      (a.channels == 1 ? "" : "s") + ")"},
      {"PSNR", fixed("%.2f dB", r.psnr)},
      {"log-spectral distance", fixed("%.3f dB", r.lsd)},
      {"level B/A", std::isnan(r.level_min)
                        ? "–"
                        : fixed("%+.2f", r.level_min) + " … " + fixed("%+.2f dB", r.level_max)},
      {"DC offset", fixed("A %.3g", r.sa.dc) + fixed(", B %.3g", r.sb.dc)},
      {"RMS", fixed("A %.1f dBFS", dbfs(r.sa.rms)) + (r.a_silent ? " (silent)" : "") +
                  fixed(", B %.1f dBFS", dbfs(r.sb.rms)) + (r.b_silent ? " (silent)" : "")},
      {"peak", fixed("A %.4g", r.sa.peak) + fixed(", B %.4g", r.sb.peak)},
      {"NaN / Inf",
       "A " + std::to_string(r.sa.non_finite) + ", B " + std::to_string(r.sb.non_finite)}};
  v.level_db = r.level;
  v.problems = r.failures;
  v.warnings = r.warnings;
  v.pass = !fail;
  write_verify_report(o.report, v, img);
}

void run(const Opts& o) {
  MESHNN_CHECK_AS(InvalidArgument, (o.n_fft & (o.n_fft - 1)) == 0,
                  "--n-fft must be a power of two, got ", o.n_fft);
  // The pictures never replace an input (or each other): checked before any work.
  if (!o.report.empty()) io::check_output_path(o.report, {o.a, o.b}, "--report");
  if (!o.plot.empty()) io::check_output_path(o.plot, {o.a, o.b, o.report}, "--plot");
  MESHNN_CHECK_AS(InvalidArgument,
                  o.plot.empty() || o.report.empty() ||
                      io::resolve_output_path(o.plot) != io::resolve_output_path(o.report),
                  "--plot and --report name the same file ", o.plot);
  const Signal a = load_signal(o.a), b = load_signal(o.b);
  MESHNN_CHECK_AS(InvalidArgument, a.frames == b.frames && a.channels == b.channels,
                  "verify: shapes differ: ", o.a, " has ", a.frames, " frames of ", a.channels,
                  " channel(s), ", o.b, " ", b.frames, " of ", b.channels);
  MESHNN_CHECK_AS(InvalidArgument,
                  a.sample_rate == b.sample_rate || a.sample_rate == 0 || b.sample_rate == 0,
                  "verify: sample rates differ: ", a.sample_rate, " vs ", b.sample_rate);
  const Report r = compare(o, a, b);
  const bool fail = !r.failures.empty();
  write_pictures(o, a, b, r, fail);
  if (o.json)
    print_json(a, r, fail);
  else
    print_text(o, a, r, fail);
  if (fail) throw CLI::RuntimeError(1);
}

const Registrar reg("verify", [](CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "verify",
      "Compare audio B against reference A (WAV or channel-first .npy): PSNR, log-spectral "
      "distance, level per segment, DC offset; fails on NaN/Inf, silence or DC only in B, a "
      "level outside the band, or a bound given");
  auto o = std::make_shared<Opts>();
  cmd->add_option("A", o->a, "reference (.wav or .npy)")->required()->check(CLI::ExistingFile);
  cmd->add_option("B", o->b, "audio to check (.wav or .npy)")->required()->check(CLI::ExistingFile);
  add_real_option(cmd, "--min-psnr", o->min_psnr, {-1000, 1000},
                  "fail (exit 1) when the PSNR is below this, dB");
  add_real_option(cmd, "--max-lsd", o->max_lsd, {0, 1000},
                  "fail (exit 1) when the log-spectral distance is above this, dB");
  add_real_option(cmd, "--silence-dbfs", o->silence_dbfs, {-400, 0},
                  "RMS below this many dBFS counts as silence (a channel, a segment)")
      ->capture_default_str();
  add_real_option(cmd, "--level-band-db", o->level_band_db, {0.001, 100},
                  "fail when a segment's level of B differs from A's by more than this many dB "
                  "(where A's segment is not silent)")
      ->capture_default_str();
  add_int_option(cmd, "--segments", o->segments, int64_t{1}, int64_t{100000},
                 "segments of equal duration the level is compared over")
      ->capture_default_str();
  add_int_option(cmd, "--n-fft", o->n_fft, 16, 1 << 16,
                 "frame length of the log-spectral distance (power of 2)")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->add_option("--report", o->report,
                  "write a self-contained HTML report: the metrics and the spectrograms of A, B "
                  "and their difference (PNG images inside)");
  cmd->add_option("--plot", o->plot, "write the difference spectrogram B − A as a PNG");
  cmd->callback([o] { run(*o); });
});

}  // namespace

}  // namespace meshnn::cli
