// meshnn verify A B: how far audio B is from reference A, for users whose decoded audio "sounds
// wrong": waveform PSNR, log-spectral distance, DC offset and silence / non-finite checks.
//
// Inputs: WAV files (any channel count; the sample rates must match when both are WAVs) or .npy
// arrays (f32 or convertible), chosen by extension; the shapes must match. A model output array
// (B, 1, L) counts as L frames of B channels, so it compares with the WAV the CLI writes for it
// (one channel per batch item). Prints one line per metric, or
// one JSON object with --json. With --min-psnr / --max-lsd the exit status is 1 when a bound is
// missed (a CI check), and a silent or non-finite B always fails such a check.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/audio_common.h"
#include "cli/audio_metrics.h"
#include "cli/commands.h"
#include "meshnn/core/error.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/wav.h"

namespace meshnn::cli {

namespace {

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// One input as (frames, channels) f32 samples; arrays are (numel, 1) in their own order, except a
// model output (B, 1, L), which is (L, B).
struct Signal {
  std::vector<float> x;  // frames × channels, interleaved
  int64_t frames = 0, channels = 1;
  int sample_rate = 0;  // 0 for arrays
  Shape shape;
};

Signal load_signal(const std::string& path) {
  Signal s;
  Tensor t;
  if (ends_with(path, ".npy")) {
    t = io::load_npy(path);
    if (t.dtype() != DType::f32) t = t.to(DType::f32);
    if (t.rank() == 3 && t.dim(1) == 1 && t.dim(2) > 0) {
      // (B, 1, L) → (L, B) interleaved, the WAV layout: the items as the channels of one item.
      const int64_t B = t.dim(0), L = t.dim(2);
      t = interleave_for_wav(t.reshape({1, B, L}));
      s.frames = L;
      s.channels = B;
    } else {
      s.frames = t.numel();
    }
    s.shape = t.shape();
  } else {
    io::WavAudio w = io::read_wav(path);
    t = w.samples;
    s.sample_rate = w.sample_rate;
    s.shape = t.shape();
    s.frames = t.dim(0);
    s.channels = t.dim(1);
  }
  MESHNN_CHECK_AS(InvalidArgument, s.frames > 0, path, ": no samples");
  const float* p = t.data<float>();
  s.x.assign(p, p + t.numel());
  return s;
}

struct Stats {
  double peak = 0, rms = 0, dc = 0;
  int64_t non_finite = 0;
};
Stats stats_of(const Signal& s) {
  Stats st;
  double sum = 0, sq = 0;
  int64_t n = 0;
  for (float v : s.x) {
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
  }
  return st;
}

double dbfs(double v) { return v > 0 ? 20.0 * std::log10(v) : -INFINITY; }

const Registrar reg("verify", [](CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "verify",
      "Compare audio B against reference A (WAV or .npy): PSNR, log-spectral distance, "
      "DC offset, silence and non-finite checks");
  struct Opts {
    std::string a, b;
    double min_psnr = NAN, max_lsd = NAN, silence_dbfs = -60;
    int n_fft = 1024;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("A", o->a, "reference (.wav or .npy)")->required()->check(CLI::ExistingFile);
  cmd->add_option("B", o->b, "audio to check (.wav or .npy)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--min-psnr", o->min_psnr, "fail (exit 1) when the PSNR is below this, dB");
  cmd->add_option("--max-lsd", o->max_lsd,
                  "fail (exit 1) when the log-spectral distance is above this, dB");
  cmd->add_option("--silence-dbfs", o->silence_dbfs, "RMS below this many dBFS counts as silence")
      ->capture_default_str();
  cmd->add_option("--n-fft", o->n_fft, "frame length of the log-spectral distance (power of 2)")
      ->capture_default_str()
      ->check(CLI::Range(16, 1 << 16));
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o] {
    MESHNN_CHECK_AS(InvalidArgument, (o->n_fft & (o->n_fft - 1)) == 0,
                    "--n-fft must be a power of two, got ", o->n_fft);
    const Signal a = load_signal(o->a), b = load_signal(o->b);
    MESHNN_CHECK_AS(InvalidArgument, a.shape == b.shape, "verify: shapes differ: ", o->a, " ",
                    shape_str(a.shape), " vs ", o->b, " ", shape_str(b.shape));
    MESHNN_CHECK_AS(InvalidArgument,
                    a.sample_rate == b.sample_rate || a.sample_rate == 0 || b.sample_rate == 0,
                    "verify: sample rates differ: ", a.sample_rate, " vs ", b.sample_rate);
    const Stats sa = stats_of(a), sb = stats_of(b);
    const double psnr = waveform_psnr_db(a.x.data(), b.x.data(), static_cast<int64_t>(a.x.size()));
    double lsd = 0;
    const bool finite = sa.non_finite == 0 && sb.non_finite == 0;
    if (finite) {
      for (int64_t c = 0; c < a.channels; ++c)
        lsd += log_spectral_distance_db(a.x.data() + c, b.x.data() + c, a.frames, a.channels,
                                        o->n_fft);
      lsd /= static_cast<double>(a.channels);
    } else {
      lsd = INFINITY;
    }
    const bool a_silent = dbfs(sa.rms) < o->silence_dbfs, b_silent = dbfs(sb.rms) < o->silence_dbfs;
    std::vector<std::string> problems;
    if (sb.non_finite) problems.push_back("B has " + std::to_string(sb.non_finite) + " NaN/Inf");
    if (sa.non_finite) problems.push_back("A has " + std::to_string(sa.non_finite) + " NaN/Inf");
    if (b_silent && !a_silent) problems.push_back("B is silent where A is not");
    // A DC offset larger than a tenth of the RMS is audible as a click and wastes headroom.
    if (std::abs(sb.dc) > 0.1 * std::max(sb.rms, 1e-12) && std::abs(sb.dc) > 1e-3)
      problems.push_back("B has a DC offset");
    bool fail = !problems.empty() && (!std::isnan(o->min_psnr) || !std::isnan(o->max_lsd));
    if (!std::isnan(o->min_psnr) && !(psnr >= o->min_psnr)) {
      problems.push_back("PSNR below " + std::to_string(o->min_psnr) + " dB");
      fail = true;
    }
    if (!std::isnan(o->max_lsd) && !(lsd <= o->max_lsd)) {
      problems.push_back("log-spectral distance above " + std::to_string(o->max_lsd) + " dB");
      fail = true;
    }
    auto num = [](double v) {
      if (std::isnan(v)) return std::string("null");
      if (std::isinf(v)) return std::string(v > 0 ? "\"inf\"" : "\"-inf\"");
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6g", v);
      return std::string(buf);
    };
    if (o->json) {
      std::string pr = "[";
      for (size_t i = 0; i < problems.size(); ++i) pr += (i ? ",\"" : "\"") + problems[i] + "\"";
      pr += "]";
      std::printf(
          "{\"samples\": %lld, \"channels\": %lld, \"sample_rate\": %d, \"psnr_db\": %s, "
          "\"lsd_db\": %s, \"dc_a\": %s, \"dc_b\": %s, \"rms_dbfs_a\": %s, \"rms_dbfs_b\": %s, "
          "\"peak_a\": %s, \"peak_b\": %s, \"silent_a\": %s, \"silent_b\": %s, "
          "\"non_finite_a\": %lld, \"non_finite_b\": %lld, \"problems\": %s, \"pass\": %s}\n",
          static_cast<long long>(a.x.size()), static_cast<long long>(a.channels), a.sample_rate,
          num(psnr).c_str(), num(lsd).c_str(), num(sa.dc).c_str(), num(sb.dc).c_str(),
          num(dbfs(sa.rms)).c_str(), num(dbfs(sb.rms)).c_str(), num(sa.peak).c_str(),
          num(sb.peak).c_str(), a_silent ? "true" : "false", b_silent ? "true" : "false",
          static_cast<long long>(sa.non_finite), static_cast<long long>(sb.non_finite), pr.c_str(),
          fail ? "false" : "true");
    } else {
      std::printf("samples:       %lld (%lld channel%s%s)\n", static_cast<long long>(a.x.size()),
                  static_cast<long long>(a.channels), a.channels == 1 ? "" : "s",
                  a.sample_rate ? (", " + std::to_string(a.sample_rate) + " Hz").c_str() : "");
      std::printf("PSNR:          %.2f dB (peak of A over the RMS difference)\n", psnr);
      std::printf("log-spectral:  %.3f dB (n_fft %d)\n", lsd, o->n_fft);
      std::printf("DC offset:     A %.3g, B %.3g\n", sa.dc, sb.dc);
      std::printf("RMS:           A %.1f dBFS%s, B %.1f dBFS%s\n", dbfs(sa.rms),
                  a_silent ? " (silent)" : "", dbfs(sb.rms), b_silent ? " (silent)" : "");
      std::printf("peak:          A %.4g, B %.4g\n", sa.peak, sb.peak);
      if (sa.non_finite || sb.non_finite)
        std::printf("non-finite:    A %lld, B %lld\n", static_cast<long long>(sa.non_finite),
                    static_cast<long long>(sb.non_finite));
      for (const std::string& p : problems) std::printf("problem:       %s\n", p.c_str());
      std::printf("result:        %s\n", fail ? "FAIL" : "ok");
    }
    if (fail) throw CLI::RuntimeError(1);
  });
});

}  // namespace

}  // namespace meshnn::cli
