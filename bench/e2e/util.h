// Helpers shared by the `meshnn-bench` commands.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "meshnn/audio_model.h"
#include "meshnn/core/stage_precision.h"

namespace meshnn::cli {

double median(std::vector<double> v);
// "a,b,,c" → {"a", "b", "c"}.
std::vector<std::string> split_csv(const std::string& s);
// Waveform PSNR of `got` against `ref` over n values: waveform_psnr_db (audio_metrics.h), the
// definition of `meshnn verify`.
double psnr_db(const float* got, const float* ref, int64_t n);
// Runs a shell command and returns its stdout; rc gets pclose's status.
std::string run_capture(const std::string& cmd, int& rc);
// The summary a PyTorch bench script prints last: the JSON object from the output's last '{' on.
// FormatError when that is not JSON.
nlohmann::json torch_bench_json(const std::string& output);

// Sets MESHNN_CONV_ALGO for the layers built while it lives (the switch is read when a layer is
// built); "" leaves the environment as it is.
// "auto@bf16" → ("auto", bf16): a --algos entry may name a precision after '@' (a mode or a
// preset, StagePrecision::parse; fp32 when none), so one invocation times precisions side by side.
std::pair<std::string, StagePrecision> algo_and_precision(const std::string& entry);

// The registry's LTX-2.3 decoder with seeded random weights (AudioModel::random) at `precision`.
AudioModel random_ltx23(uint64_t seed, const StagePrecision& precision);
// A BigVGAN checkpoint (file or folder) with its config ("" = find it) at `precision`, loaded as
// the registry's BigVGAN without asking the other models.
AudioModel load_bigvgan(const std::string& checkpoint, const std::string& config,
                        const StagePrecision& precision);
// A model's per-stage precisions without the stage names.
std::vector<Precision> stage_modes(const AudioModel& m);

class ScopedConvAlgo {
 public:
  explicit ScopedConvAlgo(const std::string& algo);
  ~ScopedConvAlgo();
  ScopedConvAlgo(const ScopedConvAlgo&) = delete;
  ScopedConvAlgo& operator=(const ScopedConvAlgo&) = delete;

 private:
  bool set_, had_ = false;
  std::string old_;
};

}  // namespace meshnn::cli
