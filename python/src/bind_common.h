// Shared helpers of the _meshnn bindings (module.cc, bind_audio_model.cc, bind_streams.cc,
// bind_policy_model.cc and the per-model binding files): tensors across the boundary (to_numpy /
// view_of), progress callbacks (ProgressBridge), the GIL-free compute wrapper and the list of
// per-model bindings. See module.cc for the module's conventions.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <mutex>
#include <optional>
#include <string>

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/core/tensor.h"

namespace py = pybind11;

namespace meshnn::python {

// ---- tensors across the boundary -------------------------------------------------------------

// t: any f32 Tensor → ndarray over the same storage; the capsule keeps the storage alive.
py::array to_numpy(const Tensor& t);

// arr: float32 ndarray of any shape → Tensor. A C-contiguous, aligned array is viewed without a
// copy; a strided one (a slice `x[:, :, a:b]`, a transpose) or an unaligned one is copied once
// into a C-contiguous buffer meshnn owns (as torch modules take any layout). Non-float32 arrays
// stay a ShapeError (→ ValueError) naming `name`: converting a dtype is the caller's choice.
Tensor view_of(const py::array& arr, const std::string& name);

// ---- one call at a time per object ----------------------------------------------------------

// The GIL is released during compute, so two Python threads can reach the same C++ object at
// once. A stream claims itself for each push / flush / reset in the library (AudioStream,
// meshnn/core/error.h): a second call while one runs raises InUseError → RuntimeError "this
// stream is in use by another thread" (refusing, not waiting: a push and a flush of a pipeline
// from two threads would each wait for the other's stage). tests/api/stream_concurrency_test.cc
// hammers that claim from several threads (make test-asan runs it under ASan + UBSan, make
// test-tsan under ThreadSanitizer).
// Models need no claim: each call leases its own runner from the model's pool
// (src/runtime/pool.h), so concurrent calls on one model run in parallel; the GR00T adapter
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
                       ProgressBridge& bridge);

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

// One function per area, each adding its classes and functions to the module (called in this
// order by PYBIND11_MODULE in module.cc).
void bind_streams(py::module_& m);       // AudioStream, AudioEncodeStream (bind_streams.cc)
void bind_audio_model(py::module_& m);   // AudioModelOptions, AudioModel (bind_audio_model.cc)
void bind_policy_model(py::module_& m);  // PolicyModel (bind_policy_model.cc)

// The bindings of models outside the audio registry (one file each, bind_<model>.cc) add
// themselves from a namespace-scope initialiser (`const bool added = add_model_binding(&f);`),
// so that nothing else names them; module.cc calls each, in the order added, after the generic
// ones. Returns true.
using ModelBinding = void (*)(py::module_& m);
bool add_model_binding(ModelBinding bind);
void bind_models(py::module_& m);

}  // namespace meshnn::python
