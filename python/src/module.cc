// meshnn._meshnn: the compiled half of `import meshnn`, a thin pybind11 layer over the public API
// (meshnn/audio.h, meshnn/models/gr00t_adapter.h). The Python package (python/meshnn/) adds the
// drop-in classes; this file only moves tensors across the boundary and maps errors.
//
// Tensors in: a C-contiguous, aligned float32 numpy array (torch tensors arrive here through
// DLPack, see meshnn/_convert.py) is wrapped by Tensor::view without a copy. The array is kept
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
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "meshnn/audio.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/core/tensor.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/io/wav.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "meshnn/models/gr00t_adapter.h"
#include "meshnn/streaming.h"

namespace py = pybind11;

namespace meshnn::python {
namespace {

// ---- tensors across the boundary -------------------------------------------------------------

// arr: C-contiguous aligned float32 ndarray of any shape → non-owning Tensor view of its bytes.
// Non-float32 and non-contiguous arrays are a ShapeError (→ ValueError) naming `name`; the
// caller converts on purpose (a silent copy would hide a 2x memory cost or a dtype mistake).
Tensor view_of(const py::array& arr, const std::string& name) {
  const py::dtype f32 = py::dtype::of<float>();
  if (!arr.dtype().equal(f32))
    throw ShapeError(detail::concat(name, ": expected float32, got ",
                                    py::str(arr.dtype()).cast<std::string>(),
                                    " (convert with .astype(numpy.float32) or .float())"));
  const int flags = arr.flags();
  if (!(flags & py::array::c_style))
    throw ShapeError(
        detail::concat(name,
                       ": expected a C-contiguous array (got strides that are not row-major; use "
                       "numpy.ascontiguousarray(x) or x.contiguous())"));
  if (!(flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
    throw ShapeError(detail::concat(name, ": array data is not aligned to 4 bytes"));
  MESHNN_CHECK_AS(ShapeError, arr.ndim() >= 1 && arr.ndim() <= kMaxRank, name, ": rank ",
                  arr.ndim(), " is not supported (1 to ", kMaxRank, ")");
  Shape shape(arr.shape(), arr.shape() + arr.ndim());
  return Tensor::view(const_cast<void*>(arr.data()), std::move(shape), DType::f32);
}

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

// ---- one call at a time per object ----------------------------------------------------------

// The GIL is released during compute, so two Python threads can reach the same C++ object at
// once. A stream holds mutable state (pending frames, history, pipeline stages waiting on each
// other), so a second call while one runs is refused with "in use" (raising is the only answer
// that cannot deadlock a pipeline: a push and a flush from two threads would each wait for the
// other's stage). Models need no claim: each call leases its own runner from the model's pool
// (src/api/runner_pool.h), so concurrent calls on one model run in parallel; the GR00T adapter
// object serialises its calls with its own mutex. Streams are keyed by address while a call runs.
class BusyTable {
 public:
  static BusyTable& get() {
    static BusyTable t;
    return t;
  }
  bool try_claim(const void* obj) {
    std::lock_guard<std::mutex> lock(mu_);
    return busy_.insert(obj).second;
  }
  void release(const void* obj) {
    std::lock_guard<std::mutex> lock(mu_);
    busy_.erase(obj);
  }

 private:
  std::mutex mu_;
  std::set<const void*> busy_;
};

// Holds `obj` for one call; RuntimeError "in use" when another thread holds it.
class Claim {
 public:
  Claim(const void* obj, const char* what) : obj_(obj) {
    if (!BusyTable::get().try_claim(obj))
      throw Error(detail::concat(what,
                                 " is in use by another thread: one call at a time per stream "
                                 "(use one stream per thread, or a lock)"));
  }
  Claim(const Claim&) = delete;
  Claim& operator=(const Claim&) = delete;
  ~Claim() { BusyTable::get().release(obj_); }

 private:
  const void* obj_;
};

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

// Runs `call` (which returns a Tensor) without the GIL, holding the stream `stream` when given
// (a second call on it meanwhile is refused); the callback's Python error wins over the
// meshnn::Error it turned into.
template <class Call>
py::array compute(ProgressBridge& bridge, const AudioStream* stream, const Call& call) {
  Tensor y;
  try {
    std::optional<Claim> claim;
    if (stream) claim.emplace(stream, "this stream");
    py::gil_scoped_release nogil;
    y = call();
  } catch (const std::exception&) {
    bridge.rethrow_if_failed();
    throw;
  }
  bridge.rethrow_if_failed();
  return to_numpy(y);
}

// ---- GR00T adapter ---------------------------------------------------------------------------

// The CLI's gr00t-adapter as an object: the checkpoint, config, slot layout and options are
// fixed at construction (validated then, as AdapterPlan::build does); each call runs forward and
// returns the CLI's output tensors by name. On a 1x1 mesh the adapter (packed weights, K/V
// buffers) is built once and reused; on a larger local mesh every call runs the SPMD program of
// the CLI (each device builds its head slice, then forward; K/V heads are all-gathered).
class PyVlAdapter {
 public:
  PyVlAdapter(const std::string& checkpoint, const std::string& version, const py::array& types,
              const std::string& config_json, const std::string& mesh, const std::string& backend,
              const std::string& precision, const std::string& hoist_precision,
              const std::string& gather_mode, bool taps)
      : file_(io::SafetensorsFile::open(checkpoint)) {
    using namespace gr00t;
    version_ = parse_version(version);
    mc_ = parse_mesh(mesh);
    mc_.backend = parse_backend(backend);
    MESHNN_CHECK(mc_.backend == Backend::local,
                 "gr00t.VlAdapter: only the local backend is "
                 "available from Python (run the CLI under mpiexec for MPI)");
    MESHNN_CHECK(mc_.rows == 1 || mc_.cols == 1, "mesh ", mesh,
                 ": the head-parallel adapter splits heads over one mesh axis (use 1xN or Nx1)");
    prefix_ = detect_weight_prefix(file_.keys());
    cfg_ = config_json.empty() ? Config::from_metadata(file_.metadata(), version_)
                               : Config::from_json(config_json, version_);
    const char kind = types.dtype().kind();
    MESHNN_CHECK(kind == 'i' || kind == 'u',
                 "token_types: expected integers (0 text, 1 image, 2 "
                 "padding), got dtype ",
                 py::str(types.dtype()).cast<std::string>());
    py::array_t<int64_t, py::array::c_style | py::array::forcecast> t(types);
    std::vector<int> tv;
    for (py::ssize_t i = 0; i < t.size(); ++i) {
      const int64_t v = t.data()[i];
      MESHNN_CHECK(v >= 0 && v <= 2, "token_types[", i, "] = ", v,
                   " (expected 0 text, 1 image or 2 padding)");
      tv.push_back(static_cast<int>(v));
    }
    layout_ = SlotLayout::from_token_types(tv, cfg_.row_block);
    opt_.precision = parse_precision(precision);
    opt_.state_precision = opt_.precision;
    opt_.hoist_precision = parse_precision(hoist_precision);
    opt_.gather_mode = parse_gather_mode(gather_mode);
    opt_.collect_taps = taps;
    opt_.mesh_axis = mc_.rows > 1 ? 0 : 1;
    // Full validation now (config, layout, every checkpoint key and shape, the head split over
    // the mesh), then build; describe() is device 0's plan, as the CLI prints it.
    describe_ = AdapterPlan::build(cfg_, layout_, opt_, &lookup(), prefix_, mc_.rows * mc_.cols, 0)
                    .describe();
    if (mc_.rows * mc_.cols == 1) {
      py::gil_scoped_release nogil;
      adapter_ = std::make_unique<VlAdapter>(cfg_, layout_, lookup(), opt_, prefix_);
    }
  }

  std::string describe() const { return describe_; }
  int64_t seq_len() const { return layout_.seq_len(); }
  int64_t s_pad() const { return layout_.s_pad(); }
  std::string version() const { return gr00t::version_name(version_); }

  // features: (1, S, D) / (S, D) token rows, or (1, 1, S_pad, D) already in slots; state:
  // (1, 1, d) / (1, d) / (d) or None → the CLI's tensors by name.
  std::map<std::string, py::array> forward(const py::array& features,
                                           const std::optional<py::array>& state, int embodiment) {
    using namespace gr00t;
    Tensor feats = view_of(features, "features");
    if (feats.rank() != 4) {
      MESHNN_CHECK_AS(ShapeError, feats.rank() >= 2 && feats.dim(-2) == layout_.seq_len(),
                      "features ", shape_str(feats.shape()),
                      " must be [1, S, D] with S=", layout_.seq_len(), " (the token_types length)");
    }
    const Tensor st = state ? view_of(*state, "state") : Tensor();
    std::map<std::string, Tensor> out;
    {
      py::gil_scoped_release nogil;
      if (feats.rank() != 4) feats = layout_.rows_to_slots(feats);
      std::lock_guard<std::mutex> lock(mu_);
      if (adapter_) {
        out = collect(*adapter_, feats, st, embodiment, nullptr);
      } else {
        std::mutex out_mu;
        run_spmd(mc_, [&](Device& dev) {
          VlAdapter a(cfg_, layout_, lookup(), opt_, prefix_, &dev);
          auto t = collect(a, feats, st, embodiment, &dev);
          if (dev.rank() == 0) {
            std::lock_guard<std::mutex> l(out_mu);
            out = std::move(t);
          }
        });
      }
    }
    std::map<std::string, py::array> res;
    for (auto& [k, v] : out) res[k] = to_numpy(v);
    return res;
  }

 private:
  const WeightLookup& lookup() {
    if (!lookup_)
      lookup_ = [this](const std::string& k) -> std::optional<Tensor> {
        if (!file_.contains(k)) return std::nullopt;
        return file_.get(k);
      };
    return lookup_;
  }

  // The CLI's output naming: dit_encoder_hidden_states (token rows), vl_set.<set>,
  // kv.<block>.k / .v (all heads), state_features, tap.<name>.
  std::map<std::string, Tensor> collect(gr00t::VlAdapter& a, const Tensor& feats, const Tensor& st,
                                        int embodiment, Device* dev) {
    const Tensor mask = a.plan().vl_mask_present ? layout_.key_valid_mask() : Tensor();
    gr00t::AdapterOutputs o = a.forward(feats, mask, st, embodiment);
    std::map<std::string, Tensor> t;
    t["dit_encoder_hidden_states"] = layout_.slots_to_rows(o.vl);
    for (auto& [name, s] : o.vl_sets) t["vl_set." + name] = s.clone();
    for (auto& [blk, kv] : o.kv) {
      // The persistent K/V buffers are overwritten by the next call: hand out copies.
      const std::string b = "kv." + std::to_string(blk);
      t[b + ".k"] = dev ? dev->ccl().all_gather(kv.first, 1, opt_.mesh_axis) : kv.first.clone();
      t[b + ".v"] = dev ? dev->ccl().all_gather(kv.second, 1, opt_.mesh_axis) : kv.second.clone();
    }
    if (o.state_features.defined()) t["state_features"] = o.state_features.clone();
    for (auto& [name, x] : o.taps)
      t["tap." + name] = name == "state_features" ? x.clone() : layout_.slots_to_rows(x);
    return t;
  }

  io::SafetensorsFile file_;
  gr00t::Version version_ = gr00t::Version::n1_5;
  gr00t::Config cfg_;
  gr00t::SlotLayout layout_;
  gr00t::AdapterOptions opt_;
  MeshConfig mc_;
  std::string prefix_, describe_;
  WeightLookup lookup_;
  std::unique_ptr<gr00t::VlAdapter> adapter_;
  std::mutex mu_;  // one forward at a time: the adapter's K/V buffers are per object
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
          [](const std::string& path, const std::string& precision) {
            const StagePrecision p = StagePrecision::parse(precision);
            py::gil_scoped_release nogil;
            return LtxAudioDecoder::load(path, p);
          },
          py::arg("path"), py::arg("precision") = "fp32")
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
            return compute(bridge, nullptr, [&] {
              return chunk_frames > 0 ? d.decode_chunked(x, chunk_frames, run) : d.decode(x, run);
            });
          },
          py::arg("latent"), py::arg("mesh") = "auto", py::arg("backend") = "local",
          py::arg("threads") = 0, py::arg("chunk_frames") = 0, py::arg("progress") = py::none());

  // ---- MiniMax-H3 audio VAE ----
  py::class_<MiniMaxH3AudioVae>(m, "MiniMaxH3AudioVae")
      .def_static(
          "load",
          [](const std::string& folder, const std::string& precision) {
            const Precision p =
                StagePrecision::parse(precision).uniform("the MiniMax-H3 audio VAE");
            py::gil_scoped_release nogil;
            return MiniMaxH3AudioVae::load(folder, p);
          },
          py::arg("folder"), py::arg("precision") = "fp32")
      .def_static("is_folder", &MiniMaxH3AudioVae::is_folder, py::arg("path"))
      .def_property_readonly("sample_rate", &MiniMaxH3AudioVae::sample_rate)
      .def_property_readonly("hop_length", &MiniMaxH3AudioVae::hop_length)
      .def_property_readonly("latent_channels", &MiniMaxH3AudioVae::latent_channels)
      .def_property_readonly("latents_mean", &MiniMaxH3AudioVae::latents_mean)
      .def_property_readonly("latents_std", &MiniMaxH3AudioVae::latents_std)
      .def(
          "decode",
          [](const MiniMaxH3AudioVae& v, const py::array& z, int threads) {
            ProgressBridge none{py::none()};
            const RunOptions run = run_options("auto", "local", threads, none);
            const Tensor x = view_of(z, "latents");
            return compute(none, nullptr, [&] { return v.decode(x, run); });
          },
          py::arg("latents"), py::arg("threads") = 0)
      .def(
          "encode",
          [](const MiniMaxH3AudioVae& v, const py::array& wave, int threads) {
            ProgressBridge none{py::none()};
            const RunOptions run = run_options("auto", "local", threads, none);
            const Tensor x = view_of(wave, "wave");
            Tensor logs;
            py::array mean = compute(none, nullptr, [&] { return v.encode(x, &logs, run); });
            return py::make_tuple(mean, to_numpy(logs));
          },
          py::arg("wave"), py::arg("threads") = 0);

  // ---- BigVGAN ----
  py::class_<BigVganVocoder>(m, "BigVganVocoder")
      .def_static(
          "load",
          [](const std::string& checkpoint, const std::string& config,
             const std::string& precision) {
            const StagePrecision p = StagePrecision::parse(precision);
            py::gil_scoped_release nogil;
            return BigVganVocoder::load(checkpoint, config, p);
          },
          py::arg("checkpoint"), py::arg("config") = "", py::arg("precision") = "fp32")
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
            return compute(bridge, nullptr, [&] { return v.vocode(x, run); });
          },
          py::arg("mel"), py::arg("mesh") = "auto", py::arg("backend") = "local",
          py::arg("threads") = 0, py::arg("progress") = py::none())
      .def(
          "mel_spectrogram",
          [](const BigVganVocoder& v, const py::array& wav) {
            const Tensor x = view_of(wav, "wav");
            ProgressBridge none{py::none()};
            return compute(none, nullptr, [&] { return v.mel_spectrogram(x); });
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
            return compute(none, &s, [&] {
              Tensor y = s.push(x);
              check_model_output(y, "stream", "push");
              return y;
            });
          },
          py::arg("frames"))
      .def("flush",
           [](AudioStream& s) {
             ProgressBridge none{py::none()};
             return compute(none, &s, [&] {
               Tensor y = s.flush();
               check_model_output(y, "stream", "flush");
               return y;
             });
           })
      .def("reset",
           [](AudioStream& s) {
             const Claim claim(&s, "this stream");
             s.reset();
           })
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

  // ---- GR00T VL adapter ----
  py::class_<PyVlAdapter>(m, "Gr00tVlAdapter")
      .def(py::init<const std::string&, const std::string&, const py::array&, const std::string&,
                    const std::string&, const std::string&, const std::string&, const std::string&,
                    const std::string&, bool>(),
           py::arg("checkpoint"), py::arg("version"), py::arg("token_types"),
           py::arg("config_json") = "", py::arg("mesh") = "1x1", py::arg("backend") = "local",
           py::arg("precision") = "fp32", py::arg("hoist_precision") = "fp32",
           py::arg("gather_mode") = "splice", py::arg("taps") = false)
      .def("describe", &PyVlAdapter::describe)
      .def_property_readonly("seq_len", &PyVlAdapter::seq_len)
      .def_property_readonly("s_pad", &PyVlAdapter::s_pad)
      .def_property_readonly("version", &PyVlAdapter::version)
      .def("forward", &PyVlAdapter::forward, py::arg("features"), py::arg("state") = py::none(),
           py::arg("embodiment") = 0);
}
