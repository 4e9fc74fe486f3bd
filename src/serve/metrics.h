// The counters of `meshnn serve`, rendered as Prometheus text (GET /metrics), every name prefixed
// meshnn_ and named by Prometheus's rules: base units in the name (_seconds, _bytes), counters
// ending _total, latencies as histograms. Updated from the I/O and worker threads under one mutex
// (a few per request).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace meshnn::serve {

class Metrics {
 public:
  // One finished request: endpoint label ("decode", "stream", "healthz", ...), HTTP status.
  void request(const std::string& endpoint, int status, double seconds, size_t bytes_in = 0,
               size_t bytes_out = 0);
  // Audio produced by `model` and the compute it took (real-time factor = compute / audio).
  void audio(const std::string& model, double audio_seconds, double compute_seconds);
  // WebSocket streams of `model`: first frame in → first audio out.
  void first_audio(const std::string& model, double seconds);

  std::atomic<int64_t> queue_depth{0}, busy_workers{0}, open_connections{0}, open_streams{0},
      rejected_connections{0};
  int workers = 0, queue_capacity = 0;

  std::string render() const;

 private:
  static constexpr std::array<double, 12> kBuckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                   0.5,   1,    2.5,   5,    10,  30};
  static constexpr std::array<double, 8> kRtfBuckets{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2};
  struct Histogram {
    std::array<int64_t, 13> counts{};  // the last one is +Inf
    double sum = 0;
    int64_t count = 0;
  };
  static void observe(Histogram& h, const double* bounds, size_t n, double v);
  static void render_histogram(std::string& out, const std::string& name, const std::string& label,
                               const Histogram& h, const double* bounds, size_t n);

  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, int64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::map<std::string, double> audio_s_, compute_s_;
  std::map<std::string, Histogram> rtf_;
  std::map<std::string, Histogram> first_audio_;
  std::map<std::string, int64_t> bytes_in_, bytes_out_;
};

}  // namespace meshnn::serve
