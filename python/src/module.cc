// meshnn._meshnn: the compiled half of `import meshnn`, a thin pybind11 layer over the public API
// (meshnn/audio.h, meshnn/gr00t.h). The Python package (python/meshnn/) adds the
// drop-in classes; this file only moves tensors across the boundary and maps errors.
//
// Tensors in: a C-contiguous, aligned float32 numpy array (torch tensors arrive here through
// DLPack, see meshnn/_convert.py) is wrapped by Tensor::view without a copy (a strided one is
// copied once into storage meshnn owns, see view_of). The array is kept
// alive by the caller's frame for the whole call, so the view carries no owner (an owner would be
// released on a device thread without the GIL). Tensors out: the result Tensor handle moves into
// a capsule that owns the storage; numpy's array points at it (no copy).
//
// The GIL is released for the whole compute; the progress callback takes it back on the device
// thread that reports. Errors: InvalidArgument / ShapeError → ValueError, WeightError → KeyError,
// any other meshnn::Error (and std::exception) → RuntimeError, with the same message.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "meshnn/audio.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/core/tensor.h"
#include "meshnn/gr00t.h"
#include "meshnn/io/config_policy.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/io/wav.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "meshnn/streaming.h"

namespace py = pybind11;

namespace meshnn::python {
namespace {

// ---- tensors across the boundary -------------------------------------------------------------

// t: any f32 Tensor → ndarray over the same storage; the capsule keeps the storage alive.
py::array to_numpy(const Tensor& t) {
  MESHNN_CHECK_AS(Error, t.defined(), "internal: undefined output tensor");
  auto* keep = new Tensor(t);
  py::capsule owner(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  switch (t.dtype()) {
    case DType::f32:
      return py::array(py::dtype::of<float>(), shape, {}, keep->raw(), owner);
    case DType::f64:
      return py::array(py::dtype::of<double>(), shape, {}, keep->raw(), owner);
    case DType::i64:
      return py::array(py::dtype::of<int64_t>(), shape, {}, keep->raw(), owner);
    case DType::i32:
      return py::array(py::dtype::of<int32_t>(), shape, {}, keep->raw(), owner);
    case DType::u8:
      return py::array(py::dtype::of<uint8_t>(), shape, {}, keep->raw(), owner);
    default: {
      // bf16 / f16 / bool leave as f32 (one copy): numpy has no bf16.
      delete keep;
      return to_numpy(t.to(DType::f32));
    }
  }
}

// arr: float32 ndarray of any shape → Tensor. A C-contiguous, aligned array is viewed without a
// copy; a strided one (a slice `x[:, :, a:b]`, a transpose) or an unaligned one is copied once
// into a C-contiguous buffer meshnn owns (as torch modules take any layout). Non-float32 arrays
// stay a ShapeError (→ ValueError) naming `name`: converting a dtype is the caller's choice.
Tensor view_of(const py::array& arr, const std::string& name) {
  const py::dtype f32 = py::dtype::of<float>();
  if (!arr.dtype().equal(f32))
    throw ShapeError(detail::concat(name, ": expected float32, got ",
                                    py::str(arr.dtype()).cast<std::string>(),
                                    " (convert with .astype(numpy.float32) or .float())"));
  MESHNN_CHECK_AS(ShapeError, arr.ndim() >= 1 && arr.ndim() <= kMaxRank, name, ": rank ",
                  arr.ndim(), " is not supported (1 to ", kMaxRank, ")");
  Shape shape(arr.shape(), arr.shape() + arr.ndim());
  const int flags = arr.flags();
  if ((flags & py::array::c_style) && (flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
    return Tensor::view(const_cast<void*>(arr.data()), std::move(shape), DType::f32);
  // The copy lands in a Tensor's own storage (numpy writes it through an array over that
  // storage), so nothing here holds a Python reference once the GIL is released.
  Tensor owned = Tensor::empty(std::move(shape), DType::f32);
  py::module_::import("numpy").attr("copyto")(to_numpy(owned), arr);
  return owned;
}

// ---- one call at a time per object ----------------------------------------------------------

// The GIL is released during compute, so two Python threads can reach the same C++ object at
// once. A stream claims itself for each push / flush / reset in the library (AudioStream,
// meshnn/core/exclusive.h): a second call while one runs raises InUseError → RuntimeError "this
// stream is in use by another thread" (refusing, not waiting: a push and a flush of a pipeline
// from two threads would each wait for the other's stage). tests/api/stream_concurrency_test.cc
// hammers that claim from several threads (make test-asan runs it under ASan + UBSan, make
// test-tsan under ThreadSanitizer).
// Models need no claim: each call leases its own runner from the model's pool
// (src/api/runner_pool.h), so concurrent calls on one model run in parallel; the GR00T adapter
// and policy objects (gr00t::Adapter / Policy) pool runners per device, so their calls run in
// parallel too.

// ---- progress callbacks ----------------------------------------------------------------------

// Wraps a Python callable as a ProgressFn. A Python exception raised by the callable is kept and
// re-raised on the caller after the call ends (the C++ side sees a meshnn::Error that stops it).
// With or without a callable, every report also checks for a pending signal (Ctrl-C), so a long
// call ends with KeyboardInterrupt at its next stage or chunk instead of running to the end.
// Python runs signal handlers on the main thread only: PyErr_CheckSignals does nothing on other
// threads (the device threads of a multi-device mesh), so there a Ctrl-C is seen when the call
// returns.
class ProgressBridge {
 public:
  // Lives on the calling thread's stack and dies there with the GIL held (it owns Python refs).
  explicit ProgressBridge(py::object fn) : fn_(std::move(fn)) {}
  ProgressFn fn() {
    return [this](int done, int total, const std::string& what) {
      py::gil_scoped_acquire gil;
      try {
        if (!fn_.is_none()) fn_(done, total, what);
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      } catch (py::error_already_set& e) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!error_) error_.emplace(std::move(e));
        throw Error("progress callback raised an exception");
      }
    };
  }
  // Re-raises the callback's Python exception, if any (GIL held).
  void rethrow_if_failed() {
    if (error_) {
      py::error_already_set e = std::move(*error_);
      error_.reset();
      throw e;
    }
  }

 private:
  py::object fn_;
  std::mutex mu_;
  std::optional<py::error_already_set> error_;
};

RunOptions run_options(const std::string& mesh, const std::string& backend, int threads,
                       ProgressBridge& bridge) {
  RunOptions run;
  run.mesh = mesh;
  run.backend = parse_backend(backend);
  run.threads = threads;
  run.progress = bridge.fn();
  return run;
}

// Runs `call` (which returns a Tensor) without the GIL; the callback's Python error wins over
// the meshnn::Error it turned into.
template <class Call>
py::array compute(ProgressBridge& bridge, const Call& call) {
  Tensor y;
  try {
    py::gil_scoped_release nogil;
    y = call();
  } catch (const std::exception&) {
    bridge.rethrow_if_failed();
    throw;
  }
  bridge.rethrow_if_failed();
  return to_numpy(y);
}

// ---- GR00T adapter and policy -----------------------------------------------------------------

// token_types: (S,) integer ndarray (0 text, 1 image, 2 padding) → an i64 Tensor (a copy).
Tensor token_types_of(const py::array& types) {
  const char kind = types.dtype().kind();
  MESHNN_CHECK(kind == 'i' || kind == 'u',
               "token_types: expected integers (0 text, 1 image, 2 "
               "padding), got dtype ",
               py::str(types.dtype()).cast<std::string>());
  py::array_t<int64_t, py::array::c_style | py::array::forcecast> t(types);
  Tensor out({static_cast<int64_t>(t.size())}, DType::i64);
  for (py::ssize_t i = 0; i < t.size(); ++i) {
    const int64_t v = t.data()[i];
    MESHNN_CHECK(v >= 0 && v <= 2, "token_types[", i, "] = ", v,
                 " (expected 0 text, 1 image or 2 padding)");
    out.data<int64_t>()[i] = v;
  }
  return out;
}

gr00t::LoadOptions gr00t_load_options(const std::string& config_json, const std::string& mesh,
                                      const std::string& backend, int threads, const char* what,
                                      bool allow_unknown_config) {
  gr00t::LoadOptions lo;
  lo.config_json = config_json;
  lo.allow_unknown_config = allow_unknown_config;
  lo.mesh = mesh;
  lo.backend = parse_backend(backend);
  lo.threads = threads;
  MESHNN_CHECK(lo.backend == Backend::local, what,
               ": only the local backend is available from Python (run the CLI under mpiexec for "
               "MPI)");
  return lo;
}

// The CLI's gr00t-adapter as an object over gr00t::Adapter (meshnn/gr00t.h): the checkpoint,
// config, slot layout, mesh and options are fixed (and validated) at load; each device packed its
// head slice once. Each call returns the CLI's output tensors by name, as copies. Calls from
// several threads run in parallel (each leases its own runners of the slices).
class PyVlAdapter {
 public:
  PyVlAdapter(const std::string& checkpoint, const std::string& version, const py::array& types,
              const std::string& config_json, const std::string& mesh, const std::string& backend,
              const std::string& precision, const std::string& hoist_precision,
              const std::string& gather_mode, bool taps, int threads, bool allow_unknown_config) {
    using namespace gr00t;
    const Version v = parse_version(version);
    const LoadOptions lo = gr00t_load_options(config_json, mesh, backend, threads,
                                              "gr00t.VlAdapter", allow_unknown_config);
    AdapterOptions opt;
    opt.precision = parse_precision(precision);
    opt.state_precision = opt.precision;
    opt.hoist_precision = parse_precision(hoist_precision);
    opt.gather_mode = parse_gather_mode(gather_mode);
    opt.collect_taps = taps;
    const Tensor t = token_types_of(types);
    py::gil_scoped_release nogil;
    adapter_ = std::make_unique<Adapter>(Adapter::load(checkpoint, v, t, opt, lo));
  }

  std::string describe() const { return adapter_->plan().describe(); }
  int64_t seq_len() const { return adapter_->layout().seq_len(); }
  int64_t s_pad() const { return adapter_->layout().s_pad(); }
  int64_t feature_dim() const { return adapter_->plan().dim; }  // D of the backbone features
  std::string version() const { return gr00t::version_name(adapter_->version()); }

  // features: (1, S, D) / (S, D) token rows, or (1, 1, S_pad, D) already in slots; state:
  // (1, 1, d) / (1, d) / (d) or None → the CLI's tensors by name.
  std::map<std::string, py::array> forward(const py::array& features,
                                           const std::optional<py::array>& state, int embodiment) {
    const Tensor feats = view_of(features, "features");
    const Tensor st = state ? view_of(*state, "state") : Tensor();
    std::map<std::string, Tensor> out;
    {
      py::gil_scoped_release nogil;
      out = adapter_->named_tensors(adapter_->run(feats, Tensor(), st, embodiment));
    }
    std::map<std::string, py::array> res;
    for (auto& [k, v] : out) res[k] = to_numpy(v);
    return res;
  }

 private:
  std::unique_ptr<gr00t::Adapter> adapter_;
};

// gr00t::Policy (adapter + action head + Euler steps) as an object: load once, get_action from
// any thread (concurrent calls run in parallel on their own runners and equal the serial ones).
class PyPolicy {
 public:
  PyPolicy(const std::string& checkpoint, const std::string& version, const py::array& types,
           const std::string& config_json, const std::string& mesh, const std::string& backend,
           int threads, const std::string& precision, const std::string& hoist_precision,
           const std::string& gather_mode, bool allow_unknown_config) {
    using namespace gr00t;
    const Version v = parse_version(version);
    const LoadOptions lo = gr00t_load_options(config_json, mesh, backend, threads, "gr00t.Policy",
                                              allow_unknown_config);
    PolicyOptions opt;
    const Precision p = parse_precision(precision);
    opt.adapter.precision = opt.adapter.state_precision = opt.head.precision = p;
    opt.adapter.hoist_precision = hoist_precision.empty() ? p : parse_precision(hoist_precision);
    opt.adapter.gather_mode = parse_gather_mode(gather_mode);
    const Tensor t = token_types_of(types);
    py::gil_scoped_release nogil;
    policy_ = std::make_unique<Policy>(Policy::load(checkpoint, v, t, opt, lo));
  }

  std::string describe() const { return policy_->describe(); }
  int64_t seq_len() const { return policy_->layout().seq_len(); }
  int64_t s_pad() const { return policy_->layout().s_pad(); }
  std::string version() const { return gr00t::version_name(policy_->version()); }
  int64_t action_horizon() const { return policy_->head_config().action_horizon; }
  int64_t action_dim() const { return policy_->head_config().action_dim; }
  int64_t feature_dim() const { return policy_->plan().dim; }  // D of the backbone features
  int num_steps() const { return policy_->head_config().num_steps; }

  // → (actions (1, T, A), velocities [(1, T, A)] per step, or an empty list).
  py::tuple get_action(const py::array& features, const std::optional<py::array>& vl_mask,
                       const std::optional<py::array>& state, int embodiment,
                       const std::optional<py::array>& noise, uint64_t seed, int steps,
                       bool velocities) {
    const Tensor f = view_of(features, "features");
    const Tensor m = vl_mask ? view_of(*vl_mask, "vl_mask") : Tensor();
    const Tensor st = state ? view_of(*state, "state") : Tensor();
    const Tensor nz = noise ? view_of(*noise, "noise") : Tensor();
    Tensor actions;
    std::vector<Tensor> vel;
    {
      py::gil_scoped_release nogil;
      actions =
          policy_->get_action(f, m, st, embodiment, nz, seed, steps, velocities ? &vel : nullptr);
    }
    py::list vs;
    for (const Tensor& v : vel) vs.append(to_numpy(v));
    return py::make_tuple(to_numpy(actions), vs);
  }

 private:
  std::unique_ptr<gr00t::Policy> policy_;
};

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
}  // namespace meshnn::python

PYBIND11_MODULE(_meshnn, m) {
  using namespace meshnn;
  using namespace meshnn::python;
  m.doc() = "meshnn compiled core (use the `meshnn` package, not this module directly)";
  m.attr("__version__") = MESHNN_VERSION;

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ShapeError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const WeightError& e) {
      PyErr_SetString(PyExc_KeyError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

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

  // ---- MPI backend: this process's rank; finalize once at exit (the package registers it) ----
  m.def(
      "process_rank",
      [](const std::string& backend) { return process_rank(parse_backend(backend)); },
      py::arg("backend") = "mpi");
  m.def("_finalize_backends", &finalize_backends);

  // ---- audio files (what the CLI reads and writes) ----
  m.def(
      "read_wav",
      [](const std::string& path) {
        io::WavAudio w = io::read_wav(path);
        return py::make_tuple(to_numpy(w.samples), w.sample_rate);
      },
      py::arg("path"), "path → ((T, C) float32 samples in [-1, 1], sample rate)");
  m.def(
      "write_wav",
      [](const std::string& path, const py::array& samples, int sample_rate) {
        io::write_wav(path, view_of(samples, "samples"), sample_rate);
      },
      py::arg("path"), py::arg("samples"), py::arg("sample_rate"),
      "(T, C) float32 samples → float32 WAV");

  // ---- GR00T VL adapter and policy (meshnn/gr00t.h) ----
  py::class_<PyVlAdapter>(m, "Gr00tVlAdapter")
      .def(py::init<const std::string&, const std::string&, const py::array&, const std::string&,
                    const std::string&, const std::string&, const std::string&, const std::string&,
                    const std::string&, bool, int, bool>(),
           py::arg("checkpoint"), py::arg("version"), py::arg("token_types"),
           py::arg("config_json") = "", py::arg("mesh") = "1x1", py::arg("backend") = "local",
           py::arg("precision") = "fp32", py::arg("hoist_precision") = "fp32",
           py::arg("gather_mode") = "splice", py::arg("taps") = false, py::arg("threads") = 0,
           py::arg("allow_unknown_config") = false)
      .def("describe", &PyVlAdapter::describe)
      .def_property_readonly("seq_len", &PyVlAdapter::seq_len)
      .def_property_readonly("s_pad", &PyVlAdapter::s_pad)
      .def_property_readonly("feature_dim", &PyVlAdapter::feature_dim)
      .def_property_readonly("version", &PyVlAdapter::version)
      .def("forward", &PyVlAdapter::forward, py::arg("features"), py::arg("state") = py::none(),
           py::arg("embodiment") = 0);
  py::class_<PyPolicy>(m, "Gr00tPolicy")
      .def(py::init<const std::string&, const std::string&, const py::array&, const std::string&,
                    const std::string&, const std::string&, int, const std::string&,
                    const std::string&, const std::string&, bool>(),
           py::arg("checkpoint"), py::arg("version"), py::arg("token_types"),
           py::arg("config_json") = "", py::arg("mesh") = "1x1", py::arg("backend") = "local",
           py::arg("threads") = 0, py::arg("precision") = "fp32", py::arg("hoist_precision") = "",
           py::arg("gather_mode") = "splice", py::arg("allow_unknown_config") = false)
      .def("describe", &PyPolicy::describe)
      .def_property_readonly("seq_len", &PyPolicy::seq_len)
      .def_property_readonly("s_pad", &PyPolicy::s_pad)
      .def_property_readonly("version", &PyPolicy::version)
      .def_property_readonly("action_horizon", &PyPolicy::action_horizon)
      .def_property_readonly("action_dim", &PyPolicy::action_dim)
      .def_property_readonly("feature_dim", &PyPolicy::feature_dim)
      .def_property_readonly("num_steps", &PyPolicy::num_steps)
      .def("get_action", &PyPolicy::get_action, py::arg("features"), py::arg("vl_mask"),
           py::arg("state"), py::arg("embodiment"), py::arg("noise"), py::arg("seed"),
           py::arg("steps"), py::arg("velocities"));
}
