// _meshnn bindings of AudioModel (meshnn/audio_model.h): every audio model meshnn knows through
// the registry, and its options. The Python package's typed classes are facades over this one
// class; nothing here names a model (the registry does).
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bind_common.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/core/precision.h"
#include "meshnn/core/tensor.h"

namespace meshnn::python {
namespace {

void bind_model_options(py::module_& m) {
  // AudioModelOptions with precision as its text form ("bf16", "bf16-safe", "vae=bf16,…").
  py::class_<AudioModelOptions>(m, "AudioModelOptions")
      .def(py::init([](const std::string& precision, std::string config, bool allow_unused,
                       bool encoder_only, bool decoder_only, bool allow_unknown_config,
                       std::string model) {
             AudioModelOptions o;
             o.precision = StagePrecision::parse(precision);
             o.config_path = std::move(config);
             o.allow_unused = allow_unused;
             o.encoder_only = encoder_only;
             o.decoder_only = decoder_only;
             o.allow_unknown_config = allow_unknown_config;
             o.model = std::move(model);
             return o;
           }),
           py::arg("precision") = "fp32", py::arg("config") = "", py::arg("allow_unused") = false,
           py::arg("encoder_only") = false, py::arg("decoder_only") = false,
           py::arg("allow_unknown_config") = false, py::arg("model") = "")
      .def_property_readonly("precision",
                             [](const AudioModelOptions& o) { return o.precision.str(); })
      .def_readonly("config", &AudioModelOptions::config_path)
      .def_readonly("allow_unused", &AudioModelOptions::allow_unused)
      .def_readonly("encoder_only", &AudioModelOptions::encoder_only)
      .def_readonly("decoder_only", &AudioModelOptions::decoder_only)
      .def_readonly("allow_unknown_config", &AudioModelOptions::allow_unknown_config)
      .def_readonly("model", &AudioModelOptions::model);
}

py::dict spec_dict(const AudioIoSpec& s) {
  py::dict d;
  d["what"] = s.what;
  d["shape"] = s.shape;
  d["layout"] = s.layout();
  d["time_axis"] = s.time_axis;
  d["frames_per_second"] = s.frames_per_second;
  d["sample_rate"] = s.sample_rate;
  return d;
}

// The registry's static calls: which model takes a path, what it reads, random weights.
void bind_registry(py::class_<AudioModel>& c) {
  using Options = AudioModelOptions;
  c.def_static(
       "load",
       [](const std::string& path, const Options& o) {
         py::gil_scoped_release nogil;
         return AudioModel::load(path, o);
       },
       py::arg("path"), py::arg("options") = Options{})
      .def_static("registered", &AudioModel::registered)
      .def_static("identify", &AudioModel::identify, py::arg("path"),
                  py::arg("options") = Options{}, py::call_guard<py::gil_scoped_release>())
      .def_static("files", &AudioModel::files, py::arg("path"), py::arg("options") = Options{},
                  py::call_guard<py::gil_scoped_release>())
      .def_static(
          "random",
          [](const std::string& model, uint64_t seed, const Options& o) {
            py::gil_scoped_release nogil;
            return AudioModel::random(model, seed, o);
          },
          py::arg("model"), py::arg("seed"), py::arg("options") = Options{});
}

// What a loaded model is: names, specs, config, precisions, statistics.
void bind_properties(py::class_<AudioModel>& c) {
  c.def_property_readonly("model", &AudioModel::model)
      .def_property_readonly("variant", &AudioModel::variant)
      .def_property_readonly("description", &AudioModel::description)
      .def_property_readonly("config_json", &AudioModel::config_json)
      // {stage: mode} in chain order, e.g. {"vae": "bf16", "vocoder": "bf16", "bwe": "fp32"}.
      .def_property_readonly("stage_precisions",
                             [](const AudioModel& a) {
                               py::dict out;
                               for (const auto& [stage, mode] : a.stage_precisions())
                                 out[py::str(stage)] = precision_name(mode);
                               return out;
                             })
      .def_property_readonly("parameters", &AudioModel::parameters)
      .def_property_readonly("input_spec",
                             [](const AudioModel& a) { return spec_dict(a.input_spec()); })
      .def_property_readonly("output_spec",
                             [](const AudioModel& a) { return spec_dict(a.output_spec()); })
      .def_property_readonly("has_encoder", &AudioModel::has_encoder)
      .def_property_readonly("can_stream", &AudioModel::can_stream)
      .def_property_readonly("has_wave_input", &AudioModel::has_wave_input)
      .def_property_readonly("has_latent_statistics", &AudioModel::has_latent_statistics)
      .def_property_readonly("latents_mean", &AudioModel::latents_mean)
      .def_property_readonly("latents_std", &AudioModel::latents_std)
      .def("output_samples", &AudioModel::output_samples, py::arg("frames"));
}

// run / encode / the latent statistics / input_from_wave, each without the GIL.
void bind_calls(py::class_<AudioModel>& c) {
  c.def(
       "run",
       [](const AudioModel& a, const py::array& x, const std::string& mesh,
          const std::string& backend, int threads, int64_t chunk_frames,
          const py::object& progress) {
         ProgressBridge bridge(progress);
         const RunOptions run = run_options(mesh, backend, threads, bridge);
         const Tensor t = view_of(x, "input");
         MESHNN_CHECK(chunk_frames >= 0, "chunk_frames must be ≥ 0, got ", chunk_frames);
         return compute(bridge, [&] {
           return chunk_frames > 0 ? a.run_chunked(t, chunk_frames, run) : a.run(t, run);
         });
       },
       py::arg("input"), py::arg("mesh") = "auto", py::arg("backend") = "local",
       py::arg("threads") = 0, py::arg("chunk_frames") = 0, py::arg("progress") = py::none(),
       "input → output; chunk_frames > 0: run_chunked (one device, bounded memory)")
      .def(
          "encode",
          [](const AudioModel& a, const py::array& wave, const std::string& mesh,
             const std::string& backend, int threads, const py::object& progress) {
            ProgressBridge bridge(progress);
            const RunOptions run = run_options(mesh, backend, threads, bridge);
            const Tensor t = view_of(wave, "wave");
            Tensor logs;
            py::array mean = compute(bridge, [&] { return a.encode(t, run, &logs); });
            return py::make_tuple(mean, to_numpy(logs));
          },
          py::arg("wave"), py::arg("mesh") = "auto", py::arg("backend") = "local",
          py::arg("threads") = 0, py::arg("progress") = py::none(), "wave → (mean, log_std)")
      .def(
          "normalize_latents",
          [](const AudioModel& a, const py::array& z) {
            const Tensor t = view_of(z, "latents");
            ProgressBridge none{py::none()};
            return compute(none, [&] { return a.normalize_latents(t); });
          },
          py::arg("latents"))
      .def(
          "denormalize_latents",
          [](const AudioModel& a, const py::array& z) {
            const Tensor t = view_of(z, "latents");
            ProgressBridge none{py::none()};
            return compute(none, [&] { return a.denormalize_latents(t); });
          },
          py::arg("latents"))
      .def(
          "input_from_wave",
          [](const AudioModel& a, const py::array& samples) {
            const Tensor t = view_of(samples, "samples");
            ProgressBridge none{py::none()};
            return compute(none, [&] { return a.input_from_wave(t); });
          },
          py::arg("samples"));
}

StreamOptions stream_options(const std::string& mesh, const std::string& backend, int threads,
                             int64_t push_frames) {
  StreamOptions o;
  o.mesh = mesh;
  o.backend = parse_backend(backend);
  o.threads = threads;
  o.push_frames = push_frames;
  return o;
}

// The streams over the model's weights; py::keep_alive<0, 1> keeps the model as long as the
// stream (its operators read the weights in place), so closing the model first is safe.
void bind_stream_factories(py::class_<AudioModel>& c) {
  c.def(
       "stream",
       [](const AudioModel& a, const std::string& mesh, const std::string& backend, int threads,
          int64_t push_frames) {
         const StreamOptions o = stream_options(mesh, backend, threads, push_frames);
         py::gil_scoped_release nogil;  // a pipeline calibrates
         return a.stream(o);
       },
       py::arg("mesh") = "1x1", py::arg("backend") = "local", py::arg("threads") = 0,
       py::arg("push_frames") = 0, py::keep_alive<0, 1>())
      .def(
          "stage_stream",
          [](const AudioModel& a, const std::string& stage, const std::string& mesh,
             const std::string& backend, int threads, int64_t push_frames) {
            const StreamOptions o = stream_options(mesh, backend, threads, push_frames);
            py::gil_scoped_release nogil;
            return a.stage_stream(stage, o);
          },
          py::arg("stage"), py::arg("mesh") = "1x1", py::arg("backend") = "local",
          py::arg("threads") = 0, py::arg("push_frames") = 0, py::keep_alive<0, 1>())
      .def(
          "encode_stream",
          [](const AudioModel& a, const std::string& mesh, const std::string& backend,
             int threads) {
            RunOptions run;  // no progress: the stream outlives this call
            run.mesh = mesh;
            run.backend = parse_backend(backend);
            run.threads = threads;
            py::gil_scoped_release nogil;
            return a.encode_stream(run);
          },
          py::arg("mesh") = "1x1", py::arg("backend") = "local", py::arg("threads") = 0,
          py::keep_alive<0, 1>());
}

// The C++ run alone, `repeat` times on the same input (GIL released): seconds per call. For
// measuring the module's per-call overhead against the library (docs/benchmarks.md).
void bind_native_timing(py::class_<AudioModel>& c) {
  c.def(
      "_native_run_seconds",
      [](const AudioModel& a, const py::array& x, const std::string& mesh, int threads,
         int repeat) {
        const Tensor t = view_of(x, "input");
        RunOptions run;
        run.mesh = mesh;
        run.threads = threads;
        std::vector<double> secs;
        py::gil_scoped_release nogil;
        for (int i = 0; i < repeat; ++i) {
          const auto t0 = std::chrono::steady_clock::now();
          const Tensor y = a.run(t, run);
          secs.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        return secs;
      },
      py::arg("input"), py::arg("mesh") = "1x1", py::arg("threads") = 0, py::arg("repeat") = 1);
}

}  // namespace

void bind_audio_model(py::module_& m) {
  bind_model_options(m);
  py::class_<AudioModel> c(m, "AudioModel");
  bind_registry(c);
  bind_properties(c);
  bind_calls(c);
  bind_stream_factories(c);
  bind_native_timing(c);
}

}  // namespace meshnn::python
