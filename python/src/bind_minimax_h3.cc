// _meshnn bindings of the MiniMax-H3 audio VAE (meshnn/audio.h): MiniMaxH3AudioVae and its
// decode and encode streams.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <string>

#include "bind_common.h"
#include "meshnn/audio.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/config_policy.h"

namespace meshnn::python {
namespace {

void bind_h3_vae(py::module_& m) {
  // ---- MiniMax-H3 audio VAE ----
  py::class_<MiniMaxH3AudioVae>(m, "MiniMaxH3AudioVae")
      .def_static(
          "load",
          [](const std::string& folder, const std::string& precision, const std::string& parts,
             bool allow_unknown_config) {
            const Precision p =
                StagePrecision::parse(precision).uniform("the MiniMax-H3 audio VAE");
            using Parts = MiniMaxH3AudioVae::Parts;
            MESHNN_CHECK_AS(InvalidArgument,
                            parts == "both" || parts == "decoder" || parts == "encoder",
                            "parts: expected 'both', 'decoder' or 'encoder', got '", parts, "'");
            const Parts which = parts == "decoder"   ? Parts::decoder
                                : parts == "encoder" ? Parts::encoder
                                                     : Parts::both;
            py::gil_scoped_release nogil;
            const AllowUnknownConfig lenient(allow_unknown_config);
            return MiniMaxH3AudioVae::load(folder, p, which);
          },
          py::arg("folder"), py::arg("precision") = "fp32", py::arg("parts") = "both",
          py::arg("allow_unknown_config") = false)
      .def_static("is_folder", &MiniMaxH3AudioVae::is_folder, py::arg("path"))
      .def_property_readonly("sample_rate", &MiniMaxH3AudioVae::sample_rate)
      .def_property_readonly("hop_length", &MiniMaxH3AudioVae::hop_length)
      .def_property_readonly("latent_channels", &MiniMaxH3AudioVae::latent_channels)
      .def_property_readonly("latents_mean", &MiniMaxH3AudioVae::latents_mean)
      .def_property_readonly("latents_std", &MiniMaxH3AudioVae::latents_std)
      .def(
          "decode",
          [](const MiniMaxH3AudioVae& v, const py::array& z, int threads, const std::string& mesh,
             const std::string& backend) {
            ProgressBridge none{py::none()};
            const RunOptions run = run_options(mesh, backend, threads, none);
            const Tensor x = view_of(z, "latents");
            return compute(none, [&] { return v.decode(x, run); });
          },
          py::arg("latents"), py::arg("threads") = 0, py::arg("mesh") = "auto",
          py::arg("backend") = "local")
      .def(
          "encode",
          [](const MiniMaxH3AudioVae& v, const py::array& wave, int threads,
             const std::string& mesh, const std::string& backend) {
            ProgressBridge none{py::none()};
            const RunOptions run = run_options(mesh, backend, threads, none);
            const Tensor x = view_of(wave, "wave");
            Tensor logs;
            py::array mean = compute(none, [&] { return v.encode(x, &logs, run); });
            return py::make_tuple(mean, to_numpy(logs));
          },
          py::arg("wave"), py::arg("threads") = 0, py::arg("mesh") = "auto",
          py::arg("backend") = "local")
      .def(
          "decode_stream",
          [](const MiniMaxH3AudioVae& v, const std::string& mesh, int threads) {
            ProgressBridge none{py::none()};
            return v.decode_stream(run_options(mesh, "local", threads, none));
          },
          py::arg("mesh") = "1x1", py::arg("threads") = 0)
      .def(
          "encode_stream",
          [](const MiniMaxH3AudioVae& v, const std::string& mesh, int threads) {
            ProgressBridge none{py::none()};
            return v.encode_stream(run_options(mesh, "local", threads, none));
          },
          py::arg("mesh") = "1x1", py::arg("threads") = 0);
}

void bind_h3_decode_stream(py::module_& m) {
  // The H3 decode stream: push latents (B, C, n) → the samples (B, 1, m) that became final. It
  // claims itself per call in the library (a second concurrent call: InUseError).
  using H3Stream = MiniMaxH3AudioVae::DecodeStream;
  // Outputs are checked as AudioStream's are: a non-finite sample from finite latents (inputs
  // that overflow float32 inside the decoder) is an error, never passed on as audio.
  auto h3_call = [](H3Stream& s, const std::function<Tensor()>& call) {
    Tensor y;
    {
      py::gil_scoped_release nogil;
      y = call();
      check_model_output(y, "MiniMax-H3 decode stream", "push / flush");
    }
    return to_numpy(y);
  };
  py::class_<H3Stream>(m, "MiniMaxH3DecodeStream")
      .def(
          "push",
          [h3_call](H3Stream& s, const py::array& z) {
            const Tensor x = view_of(z, "latents");
            return h3_call(s, [&] { return s.push(x); });
          },
          py::arg("latents"))
      .def("flush", [h3_call](H3Stream& s) { return h3_call(s, [&] { return s.flush(); }); })
      .def("reset",
           [](H3Stream& s) {
             py::gil_scoped_release nogil;
             s.reset();
           })
      .def_property_readonly("sample_rate", &H3Stream::sample_rate)
      .def_property_readonly("samples_per_frame", &H3Stream::samples_per_frame)
      .def_property_readonly("lookahead_frames", &H3Stream::lookahead_frames)
      .def_property_readonly("lookahead_ms", &H3Stream::lookahead_ms)
      .def_property_readonly("mesh", &H3Stream::mesh);
}

void bind_h3_encode_stream(py::module_& m) {
  // The H3 encode stream: push samples (B, 1, n) → (mean, log_std), each (B, C, m) for the m
  // frames that became final.
  using H3EncodeStream = MiniMaxH3AudioVae::EncodeStream;
  auto h3_encode_call = [](H3EncodeStream& s,
                           const std::function<Tensor(H3EncodeStream&, Tensor*)>& call) {
    Tensor mean, logs;
    {
      py::gil_scoped_release nogil;
      mean = call(s, &logs);
      check_model_output(mean, "MiniMax-H3 encode stream", "the posterior mean");
      check_model_output(logs, "MiniMax-H3 encode stream", "the posterior log std");
    }
    return py::make_tuple(to_numpy(mean), to_numpy(logs));
  };
  py::class_<H3EncodeStream>(m, "MiniMaxH3EncodeStream")
      .def(
          "push",
          [h3_encode_call](H3EncodeStream& s, const py::array& wave) {
            const Tensor x = view_of(wave, "wave");
            return h3_encode_call(s, [&](H3EncodeStream& st, Tensor* l) { return st.push(x, l); });
          },
          py::arg("wave"))
      .def("flush",
           [h3_encode_call](H3EncodeStream& s) {
             return h3_encode_call(s, [](H3EncodeStream& st, Tensor* l) { return st.flush(l); });
           })
      .def("reset",
           [](H3EncodeStream& s) {
             py::gil_scoped_release nogil;
             s.reset();
           })
      .def_property_readonly("sample_rate", &H3EncodeStream::sample_rate)
      .def_property_readonly("samples_per_frame", &H3EncodeStream::samples_per_frame)
      .def_property_readonly("lookahead_samples", &H3EncodeStream::lookahead_samples)
      .def_property_readonly("lookahead_ms", &H3EncodeStream::lookahead_ms)
      .def_property_readonly("mesh", &H3EncodeStream::mesh);
}

}  // namespace

void bind_minimax_h3(py::module_& m) {
  bind_h3_vae(m);
  bind_h3_decode_stream(m);
  bind_h3_encode_stream(m);
}

}  // namespace meshnn::python
