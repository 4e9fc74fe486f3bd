// _meshnn bindings of audio: the streams of meshnn/streaming.h and AudioModel (any audio model
// through the registry, meshnn/audio_model.h); bind_audio also calls the typed models' bindings
// (bind_ltx.cc, bind_minimax_h3.cc, bind_bigvgan.cc).
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <string>
#include <vector>

#include "bind_common.h"
#include "meshnn/audio.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/core/tensor.h"
#include "meshnn/io/config_policy.h"
#include "meshnn/streaming.h"

namespace meshnn::python {
namespace {

// A stream of type Stream over a Model; built with the GIL released (a pipeline calibrates). The
// stream's operators read the model's weights in place, so the model object is kept alive as long
// as the stream (py::keep_alive at the constructors): closing or dropping the model first is safe.
template <class Stream, class Model>
auto stream_factory() {
  return [](const Model& model, const std::string& mesh, int threads) {
    StreamOptions o;
    o.mesh = mesh;
    o.threads = threads;
    py::gil_scoped_release nogil;
    return Stream(model, o);
  };
}

void bind_streams(py::module_& m) {
  // ---- Streaming (meshnn/streaming.h): push frames, get the samples that became final ----
  py::class_<AudioStream>(m, "AudioStream")
      .def(
          "push",
          [](AudioStream& s, const py::array& frames) {
            const Tensor x = view_of(frames, "frames");
            ProgressBridge none{py::none()};
            return compute(none, [&] {
              Tensor y = s.push(x);
              check_model_output(y, "stream", "push");
              return y;
            });
          },
          py::arg("frames"))
      .def("flush",
           [](AudioStream& s) {
             ProgressBridge none{py::none()};
             return compute(none, [&] {
               Tensor y = s.flush();
               check_model_output(y, "stream", "flush");
               return y;
             });
           })
      .def("reset", &AudioStream::reset, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("sample_rate", &AudioStream::sample_rate)
      .def_property_readonly("samples_per_frame", &AudioStream::samples_per_frame)
      .def_property_readonly("lookahead_frames", &AudioStream::lookahead_frames)
      .def_property_readonly("lookahead_ms", &AudioStream::lookahead_ms)
      .def_property_readonly("mesh", &AudioStream::mesh);
  py::class_<StreamingVocoder, AudioStream>(m, "StreamingVocoder")
      .def(py::init(stream_factory<StreamingVocoder, BigVganVocoder>()), py::arg("vocoder"),
           py::arg("mesh") = "1x1", py::arg("threads") = 0, py::keep_alive<1, 2>())
      .def(py::init(stream_factory<StreamingVocoder, LtxAudioDecoder>()), py::arg("decoder"),
           py::arg("mesh") = "1x1", py::arg("threads") = 0, py::keep_alive<1, 2>());
  py::class_<StreamingLtxDecoder, AudioStream>(m, "StreamingLtxDecoder")
      .def(py::init(stream_factory<StreamingLtxDecoder, LtxAudioDecoder>()), py::arg("decoder"),
           py::arg("mesh") = "1x1", py::arg("threads") = 0, py::keep_alive<1, 2>());
}

void bind_audio_model(py::module_& m) {
  // ---- any audio model through the registry (meshnn/audio_model.h) ----
  auto spec_dict = [](const AudioIoSpec& s) {
    py::dict d;
    d["what"] = s.what;
    d["shape"] = s.shape;
    d["layout"] = s.layout();
    d["time_axis"] = s.time_axis;
    d["frames_per_second"] = s.frames_per_second;
    d["sample_rate"] = s.sample_rate;
    return d;
  };
  py::class_<AudioModel>(m, "AudioModel")
      .def_static(
          "load",
          [](const std::string& path, const std::string& precision, const std::string& config,
             bool allow_unknown_config) {
            AudioModelOptions o;
            o.precision = StagePrecision::parse(precision);
            o.config_path = config;
            o.allow_unknown_config = allow_unknown_config;
            py::gil_scoped_release nogil;
            return AudioModel::load(path, o);
          },
          py::arg("path"), py::arg("precision") = "fp32", py::arg("config") = "",
          py::arg("allow_unknown_config") = false)
      .def_static("registered", &AudioModel::registered)
      .def_property_readonly("model", &AudioModel::model)
      .def_property_readonly("description", &AudioModel::description)
      .def_property_readonly("input_spec",
                             [spec_dict](const AudioModel& a) { return spec_dict(a.input_spec()); })
      .def_property_readonly(
          "output_spec", [spec_dict](const AudioModel& a) { return spec_dict(a.output_spec()); })
      .def_property_readonly("has_encoder", &AudioModel::has_encoder)
      .def_property_readonly("can_stream", &AudioModel::can_stream)
      .def("output_samples", &AudioModel::output_samples, py::arg("frames"))
      .def(
          "run",
          [](const AudioModel& a, const py::array& x, const std::string& mesh, int threads,
             const py::object& progress) {
            ProgressBridge bridge(progress);
            const RunOptions run = run_options(mesh, "local", threads, bridge);
            const Tensor t = view_of(x, "input");
            return compute(bridge, [&] { return a.run(t, run); });
          },
          py::arg("input"), py::arg("mesh") = "auto", py::arg("threads") = 0,
          py::arg("progress") = py::none())
      .def(
          "encode",
          [](const AudioModel& a, const py::array& x, const std::string& mesh, int threads) {
            ProgressBridge none{py::none()};
            const RunOptions run = run_options(mesh, "local", threads, none);
            const Tensor t = view_of(x, "wave");
            return compute(none, [&] { return a.encode(t, run); });
          },
          py::arg("wave"), py::arg("mesh") = "auto", py::arg("threads") = 0)
      .def(
          "stream",
          [](const AudioModel& a, const std::string& mesh, int threads) {
            StreamOptions o;
            o.mesh = mesh;
            o.threads = threads;
            py::gil_scoped_release nogil;
            return a.stream(o);
          },
          py::arg("mesh") = "1x1", py::arg("threads") = 0, py::keep_alive<0, 1>());
}

}  // namespace

void bind_audio(py::module_& m) {
  bind_ltx(m);
  bind_minimax_h3(m);
  bind_bigvgan(m);
  bind_streams(m);
  bind_audio_model(m);
}

}  // namespace meshnn::python
