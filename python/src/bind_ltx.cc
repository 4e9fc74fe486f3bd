// _meshnn bindings of the LTX audio decoder (meshnn/audio.h): LtxAudioDecoder. Its streams are
// bound with the others in bind_audio.cc.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bind_common.h"
#include "meshnn/audio.h"
#include "meshnn/core/error.h"
#include "meshnn/io/config_policy.h"

namespace meshnn::python {

void bind_ltx(py::module_& m) {
  // ---- LTX audio decoder ----
  py::class_<LtxAudioDecoder>(m, "LtxAudioDecoder")
      .def_static(
          "load",
          [](const std::string& path, const std::string& precision, bool allow_unknown_config) {
            const StagePrecision p = StagePrecision::parse(precision);
            py::gil_scoped_release nogil;
            const AllowUnknownConfig lenient(allow_unknown_config);
            return LtxAudioDecoder::load(path, p);
          },
          py::arg("path"), py::arg("precision") = "fp32", py::arg("allow_unknown_config") = false)
      .def_static(
          "random_ltx23",
          [](uint64_t seed, const std::string& precision) {
            const StagePrecision p = StagePrecision::parse(precision);
            py::gil_scoped_release nogil;
            return LtxAudioDecoder::random_ltx23(seed, p);
          },
          py::arg("seed"), py::arg("precision") = "fp32")
      // {stage: mode} as built, e.g. {"vae": "bf16", "vocoder": "bf16", "bwe": "fp32"}.
      .def_property_readonly("stage_precisions",
                             [](const LtxAudioDecoder& d) {
                               py::dict out;
                               const std::vector<std::string> names = d.precision_stages();
                               const std::vector<Precision> modes = d.stage_precisions();
                               for (size_t i = 0; i < names.size(); ++i)
                                 out[py::str(names[i])] = precision_name(modes[i]);
                               return out;
                             })
      .def_property_readonly("sample_rate", &LtxAudioDecoder::sample_rate)
      .def_property_readonly("version", &LtxAudioDecoder::version)
      .def_property_readonly("parameters", &LtxAudioDecoder::parameters)
      .def("output_samples", &LtxAudioDecoder::output_samples, py::arg("latent_frames"))
      .def(
          "decode",
          [](const LtxAudioDecoder& d, const py::array& latent, const std::string& mesh,
             const std::string& backend, int threads, int64_t chunk_frames,
             const py::object& progress) {
            ProgressBridge bridge(progress);
            const RunOptions run = run_options(mesh, backend, threads, bridge);
            const Tensor x = view_of(latent, "latent");
            MESHNN_CHECK(chunk_frames >= 0, "chunk_frames must be ≥ 0, got ", chunk_frames);
            return compute(bridge, [&] {
              return chunk_frames > 0 ? d.decode_chunked(x, chunk_frames, run) : d.decode(x, run);
            });
          },
          py::arg("latent"), py::arg("mesh") = "auto", py::arg("backend") = "local",
          py::arg("threads") = 0, py::arg("chunk_frames") = 0, py::arg("progress") = py::none());
}

}  // namespace meshnn::python
