// _meshnn bindings of the audio models: LtxAudioDecoder, MiniMaxH3AudioVae (and its decode /
// encode streams), BigVganVocoder, the streams of meshnn/streaming.h, and AudioModel (any audio
// model through the registry, meshnn/audio_model.h).
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
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

}  // namespace

void bind_audio(py::module_& m) {
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

}  // namespace meshnn::python
