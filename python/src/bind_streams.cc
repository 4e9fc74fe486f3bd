// _meshnn bindings of the streams: AudioStream (meshnn/audio_model.h: frames in, the samples that
// became final out) and AudioEncodeStream (meshnn/audio_model.h: samples in, the latent frames
// that became final out, with their posterior log std). Both come from an AudioModel
// (bind_audio_model.cc), which keeps the model alive as long as the stream.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <string>

#include "bind_common.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/core/tensor.h"

namespace meshnn::python {
namespace {

// One decode-stream call without the GIL; a non-finite sample from finite frames (inputs that
// overflow float32 inside the model) is an error, never passed on as audio.
py::array stream_call(const std::function<Tensor()>& call, const char* what) {
  ProgressBridge none{py::none()};
  return compute(none, [&] {
    Tensor y = call();
    check_model_output(y, "stream", what);
    return y;
  });
}

// One encode-stream call without the GIL: wave → (mean, log_std), each (B, C, m), both checked.
py::tuple encode_call(const std::function<Tensor(Tensor*)>& call) {
  Tensor mean, logs;
  {
    py::gil_scoped_release nogil;
    mean = call(&logs);
    check_model_output(mean, "encode stream", "the posterior mean");
    check_model_output(logs, "encode stream", "the posterior log std");
  }
  return py::make_tuple(to_numpy(mean), to_numpy(logs));
}

void bind_audio_stream(py::module_& m) {
  // (the stream claims itself per call in the library: a second concurrent call → InUseError)
  py::class_<AudioStream>(m, "AudioStream")
      .def(
          "push",
          [](AudioStream& s, const py::array& frames) {
            const Tensor x = view_of(frames, "frames");
            return stream_call([&] { return s.push(x); }, "push");
          },
          py::arg("frames"))
      .def("flush", [](AudioStream& s) { return stream_call([&] { return s.flush(); }, "flush"); })
      .def("reset", &AudioStream::reset, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("sample_rate", &AudioStream::sample_rate)
      .def_property_readonly("samples_per_frame", &AudioStream::samples_per_frame)
      .def_property_readonly("lookahead_frames", &AudioStream::lookahead_frames)
      .def_property_readonly("lookahead_ms", &AudioStream::lookahead_ms)
      .def_property_readonly("frames_pushed", &AudioStream::frames_pushed)
      .def_property_readonly("samples_returned", &AudioStream::samples_returned)
      .def_property_readonly("mesh", &AudioStream::mesh);
}

void bind_encode_stream(py::module_& m) {
  py::class_<AudioEncodeStream>(m, "AudioEncodeStream")
      .def(
          "push",
          [](AudioEncodeStream& s, const py::array& wave) {
            const Tensor x = view_of(wave, "wave");
            return encode_call([&](Tensor* logs) { return s.push(x, logs); });
          },
          py::arg("wave"), "wave (B, 1, n) → (mean, log_std) of the frames that became final")
      .def("flush",
           [](AudioEncodeStream& s) {
             return encode_call([&](Tensor* logs) { return s.flush(logs); });
           })
      .def("reset", &AudioEncodeStream::reset, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("sample_rate", &AudioEncodeStream::sample_rate)
      .def_property_readonly("samples_per_frame", &AudioEncodeStream::samples_per_frame)
      .def_property_readonly("lookahead_samples", &AudioEncodeStream::lookahead_samples)
      .def_property_readonly("lookahead_ms", &AudioEncodeStream::lookahead_ms)
      .def_property_readonly("returns_output", &AudioEncodeStream::returns_output)
      .def_property_readonly("mesh", &AudioEncodeStream::mesh);
}

}  // namespace

void bind_streams(py::module_& m) {
  bind_audio_stream(m);
  bind_encode_stream(m);
}

}  // namespace meshnn::python
