// _meshnn bindings of the NVIDIA BigVGAN vocoder (meshnn/audio.h): BigVganVocoder. Its stream
// (StreamingVocoder) is bound with the others in bind_audio.cc.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <string>
#include <vector>

#include "bind_common.h"
#include "meshnn/audio.h"
#include "meshnn/core/error.h"
#include "meshnn/io/config_policy.h"

namespace meshnn::python {

void bind_bigvgan(py::module_& m) {
  // ---- BigVGAN ----
  py::class_<BigVganVocoder>(m, "BigVganVocoder")
      .def_static(
          "load",
          [](const std::string& checkpoint, const std::string& config, const std::string& precision,
             bool allow_unknown_config) {
            const StagePrecision p = StagePrecision::parse(precision);
            py::gil_scoped_release nogil;
            const AllowUnknownConfig lenient(allow_unknown_config);
            return BigVganVocoder::load(checkpoint, config, p);
          },
          py::arg("checkpoint"), py::arg("config") = "", py::arg("precision") = "fp32",
          py::arg("allow_unknown_config") = false)
      .def_property_readonly("sample_rate", &BigVganVocoder::sample_rate)
      .def_property_readonly("num_mels", &BigVganVocoder::num_mels)
      .def_property_readonly("hop_length", &BigVganVocoder::hop_length)
      .def_property_readonly("config_json", &BigVganVocoder::config_json)
      .def(
          "vocode",
          [](const BigVganVocoder& v, const py::array& mel, const std::string& mesh,
             const std::string& backend, int threads, const py::object& progress) {
            ProgressBridge bridge(progress);
            const RunOptions run = run_options(mesh, backend, threads, bridge);
            const Tensor x = view_of(mel, "mel");
            return compute(bridge, [&] { return v.vocode(x, run); });
          },
          py::arg("mel"), py::arg("mesh") = "auto", py::arg("backend") = "local",
          py::arg("threads") = 0, py::arg("progress") = py::none())
      .def(
          "mel_spectrogram",
          [](const BigVganVocoder& v, const py::array& wav) {
            const Tensor x = view_of(wav, "wav");
            ProgressBridge none{py::none()};
            return compute(none, [&] { return v.mel_spectrogram(x); });
          },
          py::arg("wav"))
      // The C++ call alone, `repeat` times on the same input (GIL released): seconds per call.
      // For measuring the module's per-call overhead against the library (docs/benchmarks.md).
      .def(
          "_native_vocode_seconds",
          [](const BigVganVocoder& v, const py::array& mel, const std::string& mesh, int threads,
             int repeat) {
            const Tensor x = view_of(mel, "mel");
            RunOptions run;
            run.mesh = mesh;
            run.threads = threads;
            std::vector<double> secs;
            py::gil_scoped_release nogil;
            for (int i = 0; i < repeat; ++i) {
              const auto t0 = std::chrono::steady_clock::now();
              const Tensor y = v.vocode(x, run);
              secs.push_back(
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            }
            return secs;
          },
          py::arg("mel"), py::arg("mesh") = "1x1", py::arg("threads") = 0, py::arg("repeat") = 1);
}

}  // namespace meshnn::python
