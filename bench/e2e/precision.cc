// meshnn-bench precision: the precision table of docs/precision.md, measured. For each model
// (LTX-2.3 decode on a seeded random checkpoint at the released architecture; NVIDIA BigVGAN v2
// 24 kHz vocode on a seeded random checkpoint written by tools/make_checkpoint.py) it runs fp32
// and every --modes entry — for LTX-2.3 on every stage at once, on each stage alone (vae=MODE,
// vocoder=MODE, bwe=MODE) and as the bf16-safe preset — and reports the output's waveform PSNR and
// log-spectral distance (the metrics of `meshnn verify`, cli/audio_metrics.h) against the fp32
// run, and against the upstream PyTorch reference in tools/ (ltx-core's decoder via
// bench/torch/torch_audio_bench.py, NVIDIA's BigVGAN via bench/torch/torch_bigvgan_bench.py, both
// fp32) unless --skip-torch. Writes the markdown table (--out) and replaces the generated block
// of a document (--update-doc docs/precision.md).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "cli/audio_common.h"
#include "cli/audio_metrics.h"
#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "e2e/util.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/core/stage_precision.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/safetensors.h"
#include "models/ltx/random.h"

namespace meshnn::cli {
namespace {

constexpr const char* kBegin = "<!-- bench precision: begin (generated, do not edit) -->";
constexpr const char* kEnd = "<!-- bench precision: end -->";

struct Args {
  double seconds = 1.0;
  uint64_t seed = 0;
  int threads = 2, n_fft = 1024;
  std::string modes = "bf16,bf16x2,bf16x3";
  std::string models = "ltx23,bigvgan";
  std::string out, update_doc;
  bool skip_torch = false;
};

// One measured row: the --precision text, the mode of each stage, and the error against each
// reference (NAN when that reference was not run).
struct Row {
  std::string precision, stages;
  double psnr_fp32 = NAN, lsd_fp32 = NAN, psnr_torch = NAN, lsd_torch = NAN;
  double seconds = 0;  // one run, including the first call's plan building (for orientation)
};

// A signal as `channels` planar rows of `frames` samples (the metrics read it channel by channel).
struct Planar {
  std::vector<float> x;
  int64_t frames = 0, channels = 1;
};

// (1, C, n) planar tensor (PyTorch's output layout).
Planar planar_of(const Tensor& t) {
  Planar p;
  p.channels = t.dim(1);
  p.frames = t.dim(2);
  const float* s = t.data<float>();
  p.x.assign(s, s + t.numel());
  return p;
}

// PSNR over every channel at once, log-spectral distance averaged over the channels.
std::pair<double, double> compare(const Planar& ref, const Planar& got, int n_fft) {
  MESHNN_CHECK(ref.frames == got.frames && ref.channels == got.channels,
               "bench precision: outputs of different shapes (", ref.channels, "x", ref.frames,
               " vs ", got.channels, "x", got.frames, ")");
  const double psnr =
      waveform_psnr_db(ref.x.data(), got.x.data(), static_cast<int64_t>(ref.x.size()));
  double lsd = 0;
  for (int64_t c = 0; c < ref.channels; ++c)
    lsd += log_spectral_distance_db(ref.x.data() + c * ref.frames, got.x.data() + c * got.frames,
                                    ref.frames, 1, n_fft);
  return {psnr, lsd / static_cast<double>(ref.channels)};
}

// PyTorch run of a bench/torch script with --out; returns its output, undefined on failure
// (reported, the table then has no PyTorch columns for that model).
Tensor run_torch(const std::string& cmd, const std::filesystem::path& out) {
  int rc = 0;
  const std::string text = run_capture(
      "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 " + cmd + " 2>&1", rc);
  if (rc != 0 || !std::filesystem::exists(out)) {
    std::printf("PyTorch reference failed (exit %d): %s\n", rc, text.c_str());
    return Tensor();
  }
  return io::load_npy(out.string()).to(DType::f32);
}

std::string fmt(double v, const char* f) {
  if (std::isnan(v)) return "–";
  if (std::isinf(v)) return v > 0 ? "∞ (identical)" : "−∞";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// LTX-2.3: fp32, then each mode on every stage, on each stage alone, and the preset.
std::vector<Row> measure_ltx(const Args& a, const std::filesystem::path& dir) {
  const int64_t T = std::max<int64_t>(2, static_cast<int64_t>(std::nearbyint(a.seconds * 25)));
  Tensor latent({1, 8, T, 16});  // the latent of `meshnn-bench audio` (same seed rule)
  std::mt19937_64 rng(a.seed + 1);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (int64_t i = 0; i < latent.numel(); ++i) latent.data<float>()[i] = nd(rng);

  RunOptions one;
  one.mesh = "1x1";
  one.threads = a.threads;
  // The seeded random decoder once per mode (the same seed: the same weights each time).
  auto decoder = [&](const std::string& spec) {
    return random_ltx23(a.seed, StagePrecision::parse(spec));
  };
  std::vector<std::string> specs{"fp32"};
  std::vector<std::string> stages;
  for (const auto& [stage, mode] : decoder("fp32").stage_precisions()) stages.push_back(stage);
  for (const std::string& m : split_csv(a.modes)) {
    if (m == "fp32") continue;  // the reference row
    specs.push_back(m);
    for (const std::string& s : stages) specs.push_back(s + "=" + m);
  }
  specs.push_back("bf16-safe");
  std::vector<Row> rows;
  std::vector<Planar> outs;
  for (const std::string& spec : specs) {
    const AudioModel dec = decoder(spec);
    Row r;
    r.precision = spec;
    const std::vector<Precision> per_stage = stage_modes(dec);
    for (size_t i = 0; i < per_stage.size(); ++i)
      r.stages += (i ? " / " : "") + std::string(precision_name(per_stage[i]));
    const auto t0 = std::chrono::steady_clock::now();
    outs.push_back(planar_of(dec.run(latent, one)));  // (1, 2, n)
    r.seconds = seconds_since(t0);
    std::fprintf(stderr, "LTX-2.3 %-20s %.2f s\n", spec.c_str(), r.seconds);
    rows.push_back(r);
  }
  for (size_t i = 0; i < rows.size(); ++i)
    std::tie(rows[i].psnr_fp32, rows[i].lsd_fp32) = compare(outs[0], outs[i], a.n_fft);
  if (a.skip_torch) return rows;
  // The same seeded weights as a checkpoint file (bf16-exact values: lossless) for PyTorch.
  models::save_random_ltx23((dir / "ltx.safetensors").string(), a.seed);
  io::save_npy((dir / "latent.npy").string(), latent);
  // ltx-core's decoder verbatim (--upsample-impl convt), fp32, one run.
  const Tensor ty = run_torch(
      std::string(MESHNN_SOURCE_DIR) + "/bench/torch/torch_audio_bench.py --threads " +
          std::to_string(a.threads) + " --repeat 1 --warmup 0 --upsample-impl convt --checkpoint " +
          (dir / "ltx.safetensors").string() + " --latent " + (dir / "latent.npy").string() +
          " --out " + (dir / "ltx_torch.npy").string(),
      dir / "ltx_torch.npy");
  if (!ty.defined()) return rows;
  const Planar ref = planar_of(ty);
  for (size_t i = 0; i < rows.size(); ++i)
    std::tie(rows[i].psnr_torch, rows[i].lsd_torch) = compare(ref, outs[i], a.n_fft);
  return rows;
}

// NVIDIA BigVGAN v2 24 kHz: fp32 and each mode (one stage: the vocoder).
std::vector<Row> measure_bigvgan(const Args& a, const std::filesystem::path& dir) {
  const std::string tools = std::string(MESHNN_SOURCE_DIR) + "/tools";
  const std::string config = "bigvgan_v2_24khz_100band_256x";
  int rc = 0;
  const std::string made = run_capture(
      "/usr/bin/python3 " + tools + "/make_checkpoint.py bigvgan " + dir.string() + " --config " +
          config + " --fold --no-check --seed " + std::to_string(a.seed) + " 2>&1",
      rc);
  MESHNN_CHECK(rc == 0, "bench precision: tools/make_checkpoint.py failed (exit ", rc, "): ", made);
  const std::string ckpt = (dir / "bigvgan_generator.safetensors").string();
  const std::string cfg_path = (dir / "config.json").string();
  std::vector<std::string> specs{"fp32"};
  for (const std::string& m : split_csv(a.modes))
    if (m != "fp32") specs.push_back(m);
  std::vector<Row> rows;
  std::vector<Planar> outs;
  Tensor mel;
  RunOptions one;
  one.mesh = "1x1";
  one.threads = a.threads;
  for (const std::string& spec : specs) {
    const AudioModel voc = load_bigvgan(ckpt, cfg_path, StagePrecision::parse(spec));
    if (!mel.defined()) {  // the mel of `meshnn-bench vocode` (same seed rule)
      const int64_t sr = voc.output_spec().sample_rate, hop = voc.output_samples(1);
      const int64_t frames = std::max<int64_t>(1, std::llround(a.seconds * sr / hop));
      mel = Tensor({1, voc.input_spec().shape[1], frames});
      std::mt19937_64 rng(a.seed + 7);
      std::normal_distribution<float> nd(-4.f, 2.f);
      for (int64_t i = 0; i < mel.numel(); ++i) mel.data<float>()[i] = nd(rng);
    }
    Row r;
    r.precision = spec;
    r.stages = precision_name(
        StagePrecision::parse(spec).resolve({StagePrecision::kVocoder}, "NVIDIA BigVGAN")[0]);
    const auto t0 = std::chrono::steady_clock::now();
    outs.push_back(planar_of(voc.run(mel, one)));  // (1, 1, n)
    r.seconds = seconds_since(t0);
    std::fprintf(stderr, "BigVGAN %-20s %.2f s\n", spec.c_str(), r.seconds);
    rows.push_back(r);
  }
  for (size_t i = 0; i < rows.size(); ++i)
    std::tie(rows[i].psnr_fp32, rows[i].lsd_fp32) = compare(outs[0], outs[i], a.n_fft);
  if (a.skip_torch) return rows;
  io::save_npy((dir / "mel.npy").string(), mel);
  // NVIDIA's BigVGAN code with the same seeded weights, fp32, one run.
  const Tensor ty =
      run_torch(std::string(MESHNN_SOURCE_DIR) + "/bench/torch/torch_bigvgan_bench.py --config " +
                    config + " --seed " + std::to_string(a.seed) + " --threads " +
                    std::to_string(a.threads) + " --repeat 1 --warmup 0 --mel " +
                    (dir / "mel.npy").string() + " --out " + (dir / "bigvgan_torch.npy").string(),
                dir / "bigvgan_torch.npy");
  if (!ty.defined()) return rows;
  const Planar ref = planar_of(ty.reshape({1, 1, ty.numel()}));
  for (size_t i = 0; i < rows.size(); ++i)
    std::tie(rows[i].psnr_torch, rows[i].lsd_torch) = compare(ref, outs[i], a.n_fft);
  return rows;
}

std::string table(const std::vector<Row>& rows, const char* stages_header) {
  std::ostringstream o;
  o << "| `--precision` | " << stages_header
    << " | PSNR vs fp32 | LSD vs fp32 | PSNR vs PyTorch fp32 | LSD vs PyTorch fp32 |\n"
    << "|---|---|---|---|---|---|\n";
  for (const Row& r : rows)
    o << "| `" << r.precision << "` | " << r.stages << " | " << fmt(r.psnr_fp32, "%.1f dB") << " | "
      << fmt(r.lsd_fp32, "%.4f dB") << " | " << fmt(r.psnr_torch, "%.1f dB") << " | "
      << fmt(r.lsd_torch, "%.4f dB") << " |\n";
  return o.str();
}

std::string command_line(const Args& a) {
  std::ostringstream o;
  o << "meshnn bench precision --seconds " << a.seconds << " --seed " << a.seed << " --threads "
    << a.threads << " --modes " << a.modes << " --models " << a.models;
  if (a.n_fft != 1024) o << " --n-fft " << a.n_fft;
  if (a.skip_torch) o << " --skip-torch";
  return o.str();
}

void run(const Args& a) {
  MESHNN_CHECK_AS(InvalidArgument, (a.n_fft & (a.n_fft - 1)) == 0,
                  "--n-fft must be a power of two, got ", a.n_fft);
  MESHNN_CHECK_AS(InvalidArgument, a.seconds > 0 && a.seconds <= 60, "--seconds ", a.seconds,
                  ": expected (0, 60]");
  for (const std::string& m : split_csv(a.modes)) parse_precision(m);
  const std::vector<std::string> which = split_csv(a.models);
  for (const std::string& m : which)
    MESHNN_CHECK_AS(InvalidArgument, m == "ltx23" || m == "bigvgan", "--models: unknown model '", m,
                    "' (ltx23, bigvgan)");
  std::string doc;
  if (!a.update_doc.empty()) {  // read (and check the markers) before the long measurement
    std::ifstream f(a.update_doc);
    MESHNN_CHECK_AS(InvalidArgument, f.good(), "--update-doc ", a.update_doc, ": cannot read");
    doc.assign(std::istreambuf_iterator<char>(f), {});
    MESHNN_CHECK_AS(InvalidArgument,
                    doc.find(kBegin) != std::string::npos && doc.find(kEnd) != std::string::npos,
                    "--update-doc ", a.update_doc, ": no generated block (the lines ", kBegin,
                    " and ", kEnd, ")");
  }
  const double load = [] {
    double l[1];
    return getloadavg(l, 1) == 1 ? l[0] : -1.0;
  }();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("meshnn-precision-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ostringstream md;
  md << "Generated by `" << command_line(a) << "` on " << cpu_features().brand << " ("
     << cpu_features_str() << "), load average " << fmt(load, "%.1f")
     << " at the start. PSNR: peak of the reference over the RMS difference; LSD: log-spectral "
        "distance (n_fft "
     << a.n_fft
     << ", hop n_fft/4), both as `meshnn verify` computes them. The fp32 reference is meshnn's "
        "own fp32 run of the same weights and input; the PyTorch reference is the upstream code "
        "in fp32.\n\n";
  try {
    for (const std::string& m : which) {
      if (m == "ltx23") {
        md << "**LTX-2.3 decode** (seeded random checkpoint at the released architecture, seed "
           << a.seed << ", " << a.seconds
           << " s of 48 kHz stereo; PyTorch: ltx-core's decoder, tools/ltx_audio). A stage "
              "named alone (`vae=bf16`) runs that stage at the mode and the others fp32.\n\n"
           << table(measure_ltx(a, dir), "vae / vocoder / bwe") << "\n";
      } else {
        md << "**NVIDIA BigVGAN v2 24 kHz vocode** (`bigvgan_v2_24khz_100band_256x`, seeded random "
              "checkpoint from tools/make_checkpoint.py, seed "
           << a.seed << ", " << a.seconds
           << " s of 24 kHz mono from a random log-mel; PyTorch: NVIDIA's BigVGAN code).\n\n"
           << table(measure_bigvgan(a, dir), StagePrecision::kVocoder) << "\n";
      }
    }
  } catch (...) {
    std::filesystem::remove_all(dir);
    throw;
  }
  std::filesystem::remove_all(dir);
  const std::string text = md.str();
  std::printf("\n%s", text.c_str());
  if (!a.out.empty()) {
    std::ofstream f(a.out);
    f << text;
    MESHNN_CHECK(f.good(), "--out ", a.out, ": write failed");
  }
  if (!a.update_doc.empty()) {
    const size_t b = doc.find(kBegin) + std::string(kBegin).size(), e = doc.find(kEnd);
    MESHNN_CHECK_AS(InvalidArgument, b <= e, "--update-doc ", a.update_doc,
                    ": the end marker comes before the begin marker");
    doc = doc.substr(0, b) + "\n" + text + doc.substr(e);
    std::ofstream f(a.update_doc);
    f << doc;
    MESHNN_CHECK(f.good(), "--update-doc ", a.update_doc, ": write failed");
    std::printf("updated %s\n", a.update_doc.c_str());
  }
}

const Registrar reg("precision", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "precision",
      "Error of each precision mode (per stage for LTX-2.3) against fp32 and PyTorch: the table "
      "of docs/precision.md");
  add_real_option(cmd, "--seconds", args->seconds, {0.08, 3600}, "audio length per model")
      ->capture_default_str();
  add_int_option(cmd, "--seed", args->seed, uint64_t{0}, ~uint64_t{0}, "checkpoint and input seed")
      ->capture_default_str();
  add_int_option(cmd, "--threads", args->threads, 1, max_threads(), "threads (meshnn and PyTorch)")
      ->capture_default_str();
  cmd->add_option("--modes", args->modes, "comma-separated modes besides fp32")
      ->capture_default_str();
  cmd->add_option("--models", args->models, "comma-separated: ltx23, bigvgan")
      ->capture_default_str();
  add_int_option(cmd, "--n-fft", args->n_fft, 16, 1 << 16,
                 "frame length of the log-spectral distance (power of 2)")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "also write the markdown table to this file");
  cmd->add_option("--update-doc", args->update_doc,
                  "replace the generated block of this markdown file (docs/precision.md) with "
                  "the table");
  cmd->add_flag("--skip-torch", args->skip_torch, "no PyTorch reference columns");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace meshnn::cli
