#include "serve/metrics.h"

#include <cstdio>

#include "meshnn/core/filter_cache.h"
#include "meshnn/core/memory.h"

namespace meshnn::serve {
namespace {

// VmRSS from /proc/self/status (0 where there is none).
int64_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long long kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmRSS: %lld kB", &kb) == 1) break;
  std::fclose(f);
  return kb * 1024;
}

std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

}  // namespace

void Metrics::observe(Histogram& h, const double* bounds, size_t n, double v) {
  size_t i = 0;
  while (i < n && v > bounds[i]) ++i;
  ++h.counts[i];
  h.sum += v;
  ++h.count;
}

void Metrics::render_histogram(std::string& out, const std::string& name, const std::string& label,
                               const Histogram& h, const double* bounds, size_t n) {
  const std::string sep = label.empty() ? "" : ",";
  int64_t cum = 0;
  for (size_t i = 0; i < n; ++i) {
    cum += h.counts[i];
    out += name + "_bucket{" + label + sep + "le=\"" + num(bounds[i]) + "\"} " +
           std::to_string(cum) + "\n";
  }
  cum += h.counts[n];
  out += name + "_bucket{" + label + sep + "le=\"+Inf\"} " + std::to_string(cum) + "\n";
  const std::string l = label.empty() ? "" : "{" + label + "}";
  out += name + "_sum" + l + " " + num(h.sum) + "\n";
  out += name + "_count" + l + " " + std::to_string(h.count) + "\n";
}

void Metrics::request(const std::string& endpoint, int status, double seconds, size_t bytes_in,
                      size_t bytes_out) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{endpoint, status}];
  bytes_in_[endpoint] += static_cast<int64_t>(bytes_in);
  bytes_out_[endpoint] += static_cast<int64_t>(bytes_out);
  observe(latency_[endpoint], kBuckets.data(), kBuckets.size(), seconds);
}

void Metrics::audio(const std::string& model, double audio_seconds, double compute_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  audio_s_[model] += audio_seconds;
  compute_s_[model] += compute_seconds;
  if (audio_seconds > 0)
    observe(rtf_[model], kRtfBuckets.data(), kRtfBuckets.size(), compute_seconds / audio_seconds);
}

void Metrics::first_audio(const std::string& model, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  observe(first_audio_[model], kBuckets.data(), kBuckets.size(), seconds);
}

std::string Metrics::render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string o;
  o += "# HELP meshnn_requests_total Requests answered, by endpoint and HTTP status.\n";
  o += "# TYPE meshnn_requests_total counter\n";
  for (const auto& [k, v] : requests_)
    o += "meshnn_requests_total{endpoint=\"" + k.first + "\",status=\"" + std::to_string(k.second) +
         "\"} " + std::to_string(v) + "\n";
  o += "# HELP meshnn_request_duration_seconds Request latency (streams: the whole stream).\n";
  o += "# TYPE meshnn_request_duration_seconds histogram\n";
  for (const auto& [k, h] : latency_)
    render_histogram(o, "meshnn_request_duration_seconds", "endpoint=\"" + k + "\"", h,
                     kBuckets.data(), kBuckets.size());
  o += "# HELP meshnn_queue_depth Jobs waiting for a worker.\n# TYPE meshnn_queue_depth gauge\n";
  o += "meshnn_queue_depth " + std::to_string(queue_depth.load()) + "\n";
  o += "# HELP meshnn_queue_capacity --max-queue.\n# TYPE meshnn_queue_capacity gauge\n";
  o += "meshnn_queue_capacity " + std::to_string(queue_capacity) + "\n";
  o += "# HELP meshnn_workers Worker threads.\n# TYPE meshnn_workers gauge\n";
  o += "meshnn_workers " + std::to_string(workers) + "\n";
  o += "# HELP meshnn_busy_workers Workers running a job.\n# TYPE meshnn_busy_workers gauge\n";
  o += "meshnn_busy_workers " + std::to_string(busy_workers.load()) + "\n";
  o += "# HELP meshnn_open_connections Open client connections.\n";
  o += "# TYPE meshnn_open_connections gauge\n";
  o += "meshnn_open_connections " + std::to_string(open_connections.load()) + "\n";
  o += "# HELP meshnn_open_streams Open WebSocket streams.\n# TYPE meshnn_open_streams gauge\n";
  o += "meshnn_open_streams " + std::to_string(open_streams.load()) + "\n";
  o += "# HELP meshnn_rejected_connections_total Connections refused at the cap.\n";
  o += "# TYPE meshnn_rejected_connections_total counter\n";
  o += "meshnn_rejected_connections_total " + std::to_string(rejected_connections.load()) + "\n";
  const AllocationCacheStats cache = allocation_cache_stats();
  o += "# HELP meshnn_alloc_cache_bytes Freed tensor blocks kept for reuse.\n";
  o += "# TYPE meshnn_alloc_cache_bytes gauge\n";
  o += "meshnn_alloc_cache_bytes " + std::to_string(cache.cached_bytes) + "\n";
  o += "# HELP meshnn_alloc_cache_evicted_bytes_total Cached blocks freed by --cache-max-age.\n";
  o += "# TYPE meshnn_alloc_cache_evicted_bytes_total counter\n";
  o += "meshnn_alloc_cache_evicted_bytes_total " + std::to_string(cache.evicted_bytes) + "\n";
  o += "# HELP meshnn_resident_bytes Resident memory of the process (VmRSS).\n";
  o += "# TYPE meshnn_resident_bytes gauge\n";
  o += "meshnn_resident_bytes " + std::to_string(resident_bytes()) + "\n";
  const FilterCacheStats filters = filter_cache_stats();
  o += "# HELP meshnn_filter_cache_memory Where cached filters live (MESHNN_FILTER_MEMORY).\n";
  o += "# TYPE meshnn_filter_cache_memory gauge\n";
  o += std::string("meshnn_filter_cache_memory{setting=\"") + filter_cache_memory() + "\"} 1\n";
  o += "# HELP meshnn_filter_cache_private_bytes Cached filters copied into the server's own "
       "memory.\n";
  o += "# TYPE meshnn_filter_cache_private_bytes gauge\n";
  o += "meshnn_filter_cache_private_bytes " + std::to_string(filters.bytes_private) + "\n";
  o +=
      "# HELP meshnn_filter_cache_copies_pending Cached filters still read from their files, to be "
      "copied (MESHNN_FILTER_MEMORY=background).\n";
  o += "# TYPE meshnn_filter_cache_copies_pending gauge\n";
  o += "meshnn_filter_cache_copies_pending " + std::to_string(filters.copies_pending) + "\n";
  o += "# HELP meshnn_audio_seconds_total Seconds of audio produced.\n";
  o += "# TYPE meshnn_audio_seconds_total counter\n";
  for (const auto& [k, v] : audio_s_)
    o += "meshnn_audio_seconds_total{model=\"" + k + "\"} " + num(v) + "\n";
  o += "# HELP meshnn_compute_seconds_total Worker seconds spent producing it.\n";
  o += "# TYPE meshnn_compute_seconds_total counter\n";
  for (const auto& [k, v] : compute_s_)
    o += "meshnn_compute_seconds_total{model=\"" + k + "\"} " + num(v) + "\n";
  o += "# HELP meshnn_real_time_factor Compute seconds per audio second, per request.\n";
  o += "# TYPE meshnn_real_time_factor histogram\n";
  for (const auto& [k, h] : rtf_)
    render_histogram(o, "meshnn_real_time_factor", "model=\"" + k + "\"", h, kRtfBuckets.data(),
                     kRtfBuckets.size());
  o += "# HELP meshnn_time_to_first_audio_seconds Stream: first frame in to first audio out.\n";
  o += "# TYPE meshnn_time_to_first_audio_seconds histogram\n";
  for (const auto& [k, h] : first_audio_)
    render_histogram(o, "meshnn_time_to_first_audio_seconds", "model=\"" + k + "\"", h,
                     kBuckets.data(), kBuckets.size());
  o += "# HELP meshnn_request_bytes_total Request bodies and stream messages received.\n";
  o += "# TYPE meshnn_request_bytes_total counter\n";
  for (const auto& [k, v] : bytes_in_)
    o += "meshnn_request_bytes_total{endpoint=\"" + k + "\"} " + std::to_string(v) + "\n";
  o += "# HELP meshnn_response_bytes_total Answer bodies and stream messages sent.\n";
  o += "# TYPE meshnn_response_bytes_total counter\n";
  for (const auto& [k, v] : bytes_out_)
    o += "meshnn_response_bytes_total{endpoint=\"" + k + "\"} " + std::to_string(v) + "\n";
  return o;
}

}  // namespace meshnn::serve
