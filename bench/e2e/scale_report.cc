#include "e2e/scale_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

#include "api/measured_cost.h"
#include "io/json.h"
#include "meshnn/core/error.h"
#include "models/common/audio_description.h"
#include "models/ltx/random.h"
#include "models/ltx/weights.h"
#include "streaming/stream_engine.h"

namespace meshnn::bench {

using namespace api;
namespace {

Tensor seeded_normal(Shape shape, uint64_t seed, float mean, float stddev) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(mean, stddev);
  Tensor t = Tensor::empty(std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = nd(rng);
  return t;
}

// A seeded uniform fill of std `stddev` (weights for an account: only the shapes matter, the
// values must stay finite). splitmix64 per element: fast for 10⁸ parameters.
Tensor seeded_uniform(const Shape& shape, uint64_t seed, double stddev) {
  Tensor t = Tensor::empty(shape);
  float* p = t.data<float>();
  const double half = std::sqrt(3.0) * stddev;
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double u = (static_cast<double>(z >> 11) + 0.5) * 0x1p-53;  // (0, 1)
    p[i] = static_cast<float>((2 * u - 1) * half);
  }
  return t;
}

std::map<std::string, Tensor> random_generator_state(const models::GeneratorConfig& g,
                                                     uint64_t seed) {
  std::map<std::string, Tensor> state;
  uint64_t n = 0;
  for (const models::LayerDesc& d : models::describe_generator(g, ""))
    for (const auto& [key, shape] : d.tensors())
      state[key] = seeded_uniform(shape, seed + ++n, d.init_std > 0 ? d.init_std : 0.02);
  return state;
}

std::string human_bytes(double b) {
  char buf[32];
  if (b >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2f MB", b / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1f KB", b / 1e3);
  return buf;
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "×" : "") + std::to_string(s[i]);
  return out;
}

}  // namespace

ScaleAccount account_ltx(const models::LtxAudioDecoder& m, const Tensor& latent, int devices) {
  const models::LtxAudioConfig& cfg = m.config();
  const int64_t T = latent.dim(2);
  m.check_mesh_fits(T, devices);
  std::vector<std::unique_ptr<models::LtxAudioDecoder>> runners;
  for (int i = 0; i < devices; ++i) runners.push_back(std::make_unique<models::LtxAudioDecoder>(m));
  // FLOPs: the mel-VAE per latent frame, the vocoder per mel frame (4T − 3), the BWE generator
  // per STFT frame of each of the two channels (stereo runs as a batch of 2).
  const int64_t mels = 4 * T - 3;
  std::vector<DescribedLayers> layers;
  layers.push_back({models::describe_mel_vae(cfg.vae), T});
  layers.push_back(
      {models::describe_generator(cfg.vocoder, models::ltx_vocoder_prefix(cfg)), mels});
  if (cfg.version == models::LtxAudioConfig::Version::ltx23)
    layers.push_back({models::describe_generator(cfg.bwe.generator, models::bwe_generator_prefix()),
                      2 * mels * cfg.vocoder.hop() / cfg.bwe.hop_length});
  const double seconds =
      static_cast<double>(m.output_samples(T)) / static_cast<double>(m.sample_rate());
  return account_run(models::LtxAudioDecoder::model_name(cfg), seconds, devices, layers,
                     [&](int i, const TimeShard& ts) { runners[i]->decode(latent, ts); });
}

ScaleAccount account_bigvgan(const models::BigVgan& m, const Tensor& mel, int devices,
                             const std::string& prefix) {
  const int64_t frames = mel.dim(2);
  check_time_split(frames, devices, m.min_frames_per_device(), "mel");
  std::vector<std::unique_ptr<models::BigVgan>> runners;
  for (int i = 0; i < devices; ++i) runners.push_back(std::make_unique<models::BigVgan>(m));
  const models::GeneratorConfig& g = m.config().generator;
  const double seconds =
      static_cast<double>(frames * g.hop()) / static_cast<double>(g.sampling_rate);
  return account_run("BigVGAN", seconds, devices, {{models::describe_generator(g, prefix), frames}},
                     [&](int i, const TimeShard& ts) { runners[i]->vocode_mel(mel, ts); });
}

ScaleAccount account_random_model(const std::string& model, double seconds, int devices,
                                  uint64_t seed, const std::string& bigvgan_config) {
  MESHNN_CHECK_AS(InvalidArgument, seconds > 0 && seconds <= 60,
                  "scale account: seconds must be in (0, 60], got ", seconds);
  if (model == "ltx23") {
    const models::LtxAudioConfig cfg = models::parse_ltx_audio_config(
        models::ltx23_reference_config(), "LTX-2.3 reference config");
    const models::LtxAudioDecoder m(cfg, models::random_ltx_state(cfg, seed), StagePrecision());
    const int64_t T =  // 25 frames/s
        std::max<int64_t>(m.min_frames_per_device() * devices, std::llround(25 * seconds));
    return account_ltx(m, seeded_normal({1, 8, T, 16}, seed + 1, 0.f, 1.f), devices);
  }
  if (model == "bigvgan") {
    const models::BigVganConfig cfg =
        models::parse_bigvgan_config(io::read_json_file(bigvgan_config), bigvgan_config);
    const models::BigVgan m(cfg, random_generator_state(cfg.generator, seed), Precision::fp32);
    const double fps = static_cast<double>(cfg.generator.sampling_rate) / cfg.generator.hop();
    const int64_t frames =
        std::max<int64_t>(m.min_frames_per_device() * devices, std::llround(fps * seconds));
    return account_bigvgan(m, seeded_normal({1, cfg.num_mels, frames}, seed + 1, -4.f, 2.f),
                           devices);
  }
  throw InvalidArgument("scale account: model '" + model +
                        "': expected ltx23 or bigvgan (MiniMax-H3 splits by item: no halos)");
}

StreamSplit stream_split(const std::string& model, graph::NodePtr g, const Tensor& rows,
                         int64_t push_frames) {
  std::vector<graph::NodePtr> ops = graph::top_level_nodes(graph::pipeline_layout(std::move(g)));
  MESHNN_CHECK_AS(InvalidArgument, ops.size() >= 2 && push_frames >= 1,
                  "stream split: needs 2 operators and pushes of ≥ 1 frame");
  StreamSplit s;
  s.model = model;
  s.push_frames = push_frames;
  s.bytes_per_push.assign(ops.size(), 0);
  s.seconds.assign(ops.size(), 0);
  bool filled = false;  // averaged only once the look-ahead has filled (output comes out)
  for (int64_t r = 0; r + push_frames <= rows.dim(1); r += push_frames) {
    Tensor x = rows.narrow(1, r, push_frames);
    std::vector<double> bytes(ops.size()), secs(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      x = ops[i]->push(x);
      secs[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      bytes[i] = x.defined() && x.rank() >= 2 ? static_cast<double>(x.nbytes()) : 0;
    }
    if (filled) {
      for (size_t i = 0; i < ops.size(); ++i) {
        s.bytes_per_push[i] += bytes[i];
        s.seconds[i] += secs[i];
      }
      ++s.pushes;
    }
    filled = filled || (x.defined() && x.dim(1) > 0);
  }
  MESHNN_CHECK_AS(InvalidArgument, s.pushes >= 1, "stream split: ", rows.dim(1),
                  " frames in pushes of ", push_frames,
                  " never fill the look-ahead: give more seconds or smaller pushes");
  for (double& b : s.bytes_per_push) b /= s.pushes;
  s.cut = streaming::balanced_cuts(s.seconds, 2)[1];
  return s;
}

StreamSplit stream_split_random_model(const std::string& model, double seconds, int64_t push_frames,
                                      uint64_t seed, const std::string& bigvgan_config) {
  if (model == "ltx23") {
    const models::LtxAudioConfig cfg = models::parse_ltx_audio_config(
        models::ltx23_reference_config(), "LTX-2.3 reference config");
    const models::LtxAudioDecoder m(cfg, models::random_ltx_state(cfg, seed), StagePrecision());
    const int64_t T = std::max<int64_t>(2, std::llround(25 * seconds));
    return stream_split("LTX-2.3", m.graph(), seeded_normal({1, T, 16, 8}, seed + 1, 0.f, 1.f),
                        push_frames);
  }
  MESHNN_CHECK_AS(InvalidArgument, model == "bigvgan", "stream split: model '", model,
                  "': expected ltx23 or bigvgan");
  const models::BigVganConfig cfg =
      models::parse_bigvgan_config(io::read_json_file(bigvgan_config), bigvgan_config);
  const models::BigVgan m(cfg, random_generator_state(cfg.generator, seed), Precision::fp32);
  const double fps = static_cast<double>(cfg.generator.sampling_rate) / cfg.generator.hop();
  const int64_t frames = std::max<int64_t>(2, std::llround(fps * seconds));
  return stream_split("BigVGAN", m.graph(),
                      seeded_normal({1, frames, cfg.num_mels}, seed + 1, -4.f, 2.f), push_frames);
}

std::string stream_table(const StreamSplit& s, const LinkProfile& link) {
  constexpr double kHeader = 16;  // the hand-over's (kind, has rows) header
  const size_t n = s.bytes_per_push.size();
  double lo = s.bytes_per_push[0], hi = lo;
  for (size_t k = 0; k + 1 < n; ++k) {
    lo = std::min(lo, s.bytes_per_push[k]);
    hi = std::max(hi, s.bytes_per_push[k]);
  }
  const double at_cut = s.bytes_per_push[s.cut - 1] + kHeader;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "stream, 1x2 pipeline, pushes of %lld frames (%d averaged): %zu operators; "
                "balanced by their measured time stage 0 runs [0, %zu): %s per push handed to "
                "stage 1 (%.3f ms on %s); any cut: %s .. %s per push\n",
                static_cast<long long>(s.push_frames), s.pushes, n, s.cut,
                human_bytes(at_cut).c_str(),
                1e3 * (link.latency_seconds + at_cut / link.bytes_per_second), link.name.c_str(),
                human_bytes(lo + kHeader).c_str(), human_bytes(hi + kHeader).c_str());
  return buf;
}

double measured_compute_seconds(const std::string& model, double seconds) {
  return measured_cost(model == "ltx23" ? "ltx-2.3" : model, seconds).compute_seconds;
}

std::string scale_table(const ScaleAccount& a, const LinkProfile& link, int top) {
  std::string out;
  char line[512];
  auto put = [&](const char* fmt, auto... args) {
    std::snprintf(line, sizeof line, fmt, args...);
    out += line;
  };
  const double compute =
      measured_compute_seconds(a.model == "BigVGAN" ? "bigvgan" : "ltx23", a.seconds);
  const double gflops = a.flops / compute / 1e9;  // the measured one-device rate
  put("%s, %.2f s of audio, time split over %d devices, link %s (%.3g Gb/s, %.3g us)\n",
      a.model.c_str(), a.seconds, a.devices, link.name.c_str(), link.bytes_per_second * 8 / 1e9,
      link.latency_seconds * 1e6);
  put("compute at the measured %.1f GFLOP/s (one device, 1 thread: %.2f s for %.1f GFLOP)\n",
      gflops, compute, a.flops / 1e9);
  std::vector<size_t> order(a.rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (top > 0 && static_cast<size_t>(top) < order.size()) {
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      return a.rows[x].bytes_line > a.rows[y].bytes_line;
    });
    order.resize(static_cast<size_t>(top));
    put("the %d exchanges moving the most bytes of %zu:\n", top, a.rows.size());
  }
  put("bytes/call: both directions over the line; compute: the layer on one device; link: one "
      "exchange, latency + one device's bytes / bandwidth\n");
  put("%4s  %-16s %-44s %-9s %5s %11s %10s %10s %9s\n", "#", "kind", "layer", "row", "L/R",
      "bytes/call", "MFLOP/call", "compute ms", "link ms");
  for (size_t i : order) {
    const ExchangeRow& r = a.rows[i];
    const std::string lr = std::to_string(r.left) + "/" + std::to_string(r.right);
    const double link_ms =
        1e3 * (link.latency_seconds + r.bytes_per_device / link.bytes_per_second);
    put("%4zu  %-16s %-44s %-9s %5s %11s %10.1f %10.2f %9.3f\n", i + 1, r.kind.c_str(),
        r.layer.c_str(), shape_text(r.row_shape).c_str(), lr.c_str(),
        human_bytes(r.bytes_line).c_str(), r.flops / 1e6, 1e3 * r.flops / (gflops * 1e9), link_ms);
  }
  const runtime::CallCost cost = account_cost(a, compute);
  const runtime::ScalePlan plan = runtime::plan_scale(a.devices, 1, cost, link);
  const double link_s =
      cost.rounds * link.latency_seconds + cost.halo_bytes / link.bytes_per_second;
  put("totals per call: %zu halo exchanges, %s of halos + %lld tail rows (%s) + the output "
      "gather (%s) = %s over the line\n",
      a.rows.size(), human_bytes(a.halo_bytes).c_str(), static_cast<long long>(a.tail_rows),
      human_bytes(a.tail_bytes).c_str(), human_bytes(a.gather_bytes).c_str(),
      human_bytes(cost.halo_bytes).c_str());
  put("compute %.2f s on one device, %.2f s per device on %d; link %.1f ms (%g x %.3g us + "
      "bytes / bandwidth)\n",
      compute, compute / a.devices, a.devices, link_s * 1e3, cost.rounds,
      link.latency_seconds * 1e6);
  const char* kind = plan.kind == runtime::SplitKind::time    ? "time"
                     : plan.kind == runtime::SplitKind::items ? "items"
                                                              : "replicas";
  put("plan_scale: %s (predicted time-split efficiency %.2f): %s\n", kind,
      plan.time_split_efficiency, plan.reason.c_str());
  put("sharded run (local %d threads, for the account): %.2f s\n", a.devices, a.run_seconds);
  return out;
}

std::string scale_bench_report(const ScaleBenchOptions& o) {
  const runtime::LinkProfile link = runtime::parse_link(o.link);
  if (o.model == "h3") {
    // Stereo MiniMax-H3 splits by item (one channel per device): no halos, only the output meets.
    const runtime::CallCost cost = api::measured_cost("minimax-h3", o.seconds);
    const runtime::ScalePlan plan = runtime::plan_scale(o.devices, 2, cost, link);
    return detail::concat("MiniMax-H3, ", o.seconds, " s of stereo over ", o.devices,
                          " devices: ", plan.reason, "\n");
  }
  std::string out = scale_table(
      account_random_model(o.model, o.seconds, o.devices, o.seed, o.bigvgan_config), link, o.top);
  const int64_t push = o.push_frames >= 0 ? o.push_frames : (o.model == "bigvgan" ? 32 : 8);
  if (push <= 0) return out;
  try {
    out += stream_table(
        stream_split_random_model(o.model, o.seconds, push, o.seed, o.bigvgan_config), link);
  } catch (const InvalidArgument& e) {  // too short a clip for the stream: the table stands
    out += std::string("stream: ") + e.what() + "\n";
  }
  return out;
}

}  // namespace meshnn::bench
