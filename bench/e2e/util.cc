#include "e2e/util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "cli/audio_metrics.h"
#include "meshnn/core/error.h"

namespace meshnn::cli {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::vector<std::string> split_csv(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    const size_t e = std::min(s.find(',', b), s.size());
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

double psnr_db(const float* got, const float* ref, int64_t n) {
  return waveform_psnr_db(ref, got, n);  // verify's definition: one PSNR for the CLI
}

std::string run_capture(const std::string& cmd, int& rc) {
  std::FILE* p = popen(cmd.c_str(), "r");
  MESHNN_CHECK(p, "could not start: ", cmd);
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  rc = pclose(p);
  return text;
}

nlohmann::json torch_bench_json(const std::string& output) {
  const size_t b = output.rfind('{');
  try {
    return nlohmann::json::parse(output.substr(b == std::string::npos ? 0 : b));
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(detail::concat("torch bench output: ", e.what()));
  }
}

ScopedConvAlgo::ScopedConvAlgo(const std::string& algo) : set_(!algo.empty()) {
  if (const char* e = std::getenv("MESHNN_CONV_ALGO")) old_ = e, had_ = true;
  if (set_) setenv("MESHNN_CONV_ALGO", algo.c_str(), 1);
}

ScopedConvAlgo::~ScopedConvAlgo() {
  if (!set_) return;
  if (had_)
    setenv("MESHNN_CONV_ALGO", old_.c_str(), 1);
  else
    unsetenv("MESHNN_CONV_ALGO");
}

AudioModel random_ltx23(uint64_t seed, const StagePrecision& precision) {
  AudioModelOptions o;
  o.precision = precision;
  return AudioModel::random("ltx-audio-decoder", seed, o);
}

AudioModel load_bigvgan(const std::string& checkpoint, const std::string& config,
                        const StagePrecision& precision) {
  AudioModelOptions o;
  o.model = "nvidia-bigvgan";
  o.config_path = config;
  o.precision = precision;
  return AudioModel::load(checkpoint, o);
}

std::vector<Precision> stage_modes(const AudioModel& m) {
  std::vector<Precision> out;
  for (const auto& [stage, mode] : m.stage_precisions()) out.push_back(mode);
  return out;
}

std::pair<std::string, StagePrecision> algo_and_precision(const std::string& entry) {
  const size_t at = entry.find('@');
  if (at == std::string::npos) return {entry, StagePrecision(Precision::fp32)};
  return {entry.substr(0, at), StagePrecision::parse(entry.substr(at + 1))};
}

}  // namespace meshnn::cli
