#include "cli/verify_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "meshnn/core/error.h"

namespace meshnn::cli {
namespace {

constexpr double kRangeDb = 80;      // the level images show 80 dB below the loudest bin of A
constexpr double kDiffRangeDb = 20;  // the difference saturates at ±20 dB
constexpr int kMaxHeight = 256;

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (size_t i = 0; i < in.size(); i += 3) {
    const uint32_t n = (static_cast<uint8_t>(in[i]) << 16) |
                       (i + 1 < in.size() ? static_cast<uint8_t>(in[i + 1]) << 8 : 0) |
                       (i + 2 < in.size() ? static_cast<uint8_t>(in[i + 2]) : 0);
    out += t[(n >> 18) & 63];
    out += t[(n >> 12) & 63];
    out += i + 1 < in.size() ? t[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? t[n & 63] : '=';
  }
  return out;
}

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '&')
      o += "&amp;";
    else if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '"')
      o += "&quot;";
    else
      o += c;
  }
  return o;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// One figure: the image, its axes in words.
std::string figure(const std::string& title, const RgbImage& img, const std::string& axes,
                   const std::string& id) {
  return "<figure><figcaption>" + escape(title) + "</figcaption><img id=\"" + id + "\" alt=\"" +
         escape(title) + "\" width=\"" + std::to_string(img.width) + "\" height=\"" +
         std::to_string(img.height) + "\" src=\"data:image/png;base64," + base64(png_bytes(img)) +
         "\"><div class=\"axes\">" + escape(axes) + "</div></figure>\n";
}

std::string level_table(const std::vector<double>& level) {
  std::string h = "<table class=\"levels\"><tr><th>segment</th>";
  for (size_t i = 0; i < level.size(); ++i) h += "<td>" + std::to_string(i + 1) + "</td>";
  h += "</tr><tr><th>B / A, dB</th>";
  for (double v : level) {
    const std::string cls = std::isnan(v) ? "" : std::abs(v) > 3 ? " class=\"bad\"" : "";
    h += "<td" + cls + ">" + (std::isnan(v) ? "–" : fmt("%+.2f", v)) + "</td>";
  }
  return h + "</tr></table>\n";
}

const char* kStyle = R"(body{font:15px/1.45 system-ui,sans-serif;color:#1d232b;max-width:1280px;
margin:0 auto;padding:8px 16px 32px}h1{font-size:20px}code{font-size:13px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #d9dee5;padding:3px 8px;
text-align:left;font-size:13px}th{background:#f3f5f8;font-weight:600}.bad{color:#b42318}
.verdict{font-weight:700;padding:4px 10px;border-radius:4px;display:inline-block}
.pass{background:#e7f6ec;color:#146c2e}.fail{background:#fef3f2;color:#b42318}
figure{margin:14px 0}figcaption{font-weight:600;margin-bottom:4px}
img{display:block;box-sizing:border-box;width:100%;height:auto;image-rendering:pixelated;border:1px solid #d9dee5}
.axes{font-size:12px;color:#667085}.levels td{text-align:right})";

}  // namespace

SpectrogramImages spectrogram_images(const float* a, const float* b, int64_t frames,
                                     int64_t channels, int n_fft) {
  SpectrogramImages out;
  // ~800 columns whatever the length: a short clip is not a sliver, a long one not a mile.
  out.hop = std::max<int64_t>(1, (frames + 799) / 800);
  const Spectrogram sa = power_spectrogram(a, frames, channels, n_fft, out.hop);
  const Spectrogram sb = power_spectrogram(b, frames, channels, n_fft, out.hop);
  out.top_db = std::isfinite(sa.peak()) ? sa.peak() : 0.0;
  out.a = level_image(sa, out.top_db, kRangeDb, kMaxHeight);
  out.b = level_image(sb, out.top_db, kRangeDb, kMaxHeight);
  out.diff = difference_image(sa, sb, kDiffRangeDb, out.top_db - kRangeDb, kMaxHeight);
  return out;
}

void write_verify_report(const std::string& path, const VerifyReport& r,
                         const SpectrogramImages& img) {
  const double seconds = r.sample_rate ? static_cast<double>(r.frames) / r.sample_rate : 0;
  const std::string time =
      r.sample_rate ? fmt("0 … %.3f s", seconds) : "0 … " + std::to_string(r.frames) + " samples";
  const std::string freq =
      r.sample_rate ? fmt("0 … %.0f Hz", r.sample_rate / 2.0) : "0 … ½ the sample rate";
  const std::string axes = "time " + time + " →, frequency " + freq + " ↑ (n_fft " +
                           std::to_string(r.n_fft) + ", hop " + std::to_string(img.hop) + ")";
  std::string h =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>meshnn "
      "verify: " +
      escape(r.b_path) + "</title><style>" + kStyle + "</style></head><body>\n";
  h += "<h1>meshnn verify</h1><p>A (reference) <code>" + escape(r.a_path) + "</code><br>B <code>" +
       escape(r.b_path) + "</code></p>\n";
  h += std::string("<p class=\"verdict ") + (r.pass ? "pass\">ok" : "fail\">FAIL") + "</p>\n";
  h += "<table class=\"metrics\">";
  for (const auto& [k, v] : r.metrics)
    h += "<tr><th>" + escape(k) + "</th><td>" + escape(v) + "</td></tr>";
  h += "</table>\n";
  if (!r.level_db.empty()) h += level_table(r.level_db);
  for (const std::string& p : r.problems) h += "<p class=\"bad\">problem: " + escape(p) + "</p>\n";
  for (const std::string& w : r.warnings) h += "<p>warning: " + escape(w) + "</p>\n";
  h += figure("A: power spectrogram (channels averaged), dB from " + fmt("%.0f", -kRangeDb) +
                  " (black) to 0 (yellow) relative to A's loudest bin",
              img.a, axes, "spec-a");
  h += figure("B: power spectrogram, same scale as A", img.b, axes, "spec-b");
  h += figure("B − A in dB: red where B is louder, blue where it is quieter, white equal (±" +
                  fmt("%.0f", kDiffRangeDb) + " dB saturates; grey: both below the floor)",
              img.diff, axes, "spec-diff");
  h += "</body></html>\n";
  write_file(path, h, "--report");
}

}  // namespace meshnn::cli
