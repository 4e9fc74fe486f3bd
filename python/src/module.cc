// meshnn._meshnn: the compiled half of `import meshnn`, a thin pybind11 layer over the public API
// (meshnn/audio_model.h and meshnn/gr00t.h, the model outside the audio registry). The
// Python package (python/meshnn/) adds the drop-in classes, the typed audio ones as facades over
// AudioModel; this layer only moves tensors across the boundary and maps errors.
//
// Tensors in: a C-contiguous, aligned float32 numpy array (torch tensors arrive here through
// DLPack, see meshnn/_convert.py) is wrapped by Tensor::view without a copy (a strided one is
// copied once into storage meshnn owns, see view_of). The array is kept
// alive by the caller's frame for the whole call, so the view carries no owner (an owner would be
// released on a device thread without the GIL). Tensors out: the result Tensor handle moves into
// a capsule that owns the storage; numpy's array points at it (no copy).
//
// The GIL is released for the whole compute; the progress callback takes it back on the device
// thread that reports. Errors: each meshnn error becomes the Python exception of core's one error
// table (core/error_codes.h: InvalidArgument / ShapeError → ValueError, WeightError → KeyError).
//
// The bindings live in one file per area (bind_audio_model.cc, bind_policy_model.cc,
// bind_streams.cc, and one file per model outside the registries' generic classes, which adds
// itself: bind_common.h's add_model_binding; shared helpers in bind_common.{h,cc}); this file is
// the module's entry point, its error mapping, and the small module-level functions (MPI backend,
// WAV files).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <exception>
#include <string>

#include "bind_common.h"
#include "meshnn/core/error.h"
#include "meshnn/core/error_codes.h"
#include "meshnn/io/wav.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::python {
namespace {

void bind_backends(py::module_& m) {
  // ---- MPI backend: this process's rank; finalize once at exit (the package registers it) ----
  m.def(
      "process_rank",
      [](const std::string& backend) { return process_rank(parse_backend(backend)); },
      py::arg("backend") = "mpi");
  m.def("_finalize_backends", &finalize_backends);
}

void bind_wav_files(py::module_& m) {
  // ---- audio files (what the CLI reads and writes) ----
  m.def(
      "read_wav",
      [](const std::string& path) {
        io::WavAudio w = io::read_wav(path);
        return py::make_tuple(to_numpy(w.samples), w.sample_rate);
      },
      py::arg("path"), "path → ((C, T) float32 samples in [-1, 1], sample rate)");
  m.def(
      "write_wav",
      [](const std::string& path, const py::array& samples, int sample_rate) {
        io::write_wav(path, view_of(samples, "samples"), sample_rate);
      },
      py::arg("path"), py::arg("samples"), py::arg("sample_rate"),
      "(C, T) float32 samples, channels first → float32 WAV");
}

}  // namespace
}  // namespace meshnn::python

PYBIND11_MODULE(_meshnn, m) {
  using namespace meshnn;
  using namespace meshnn::python;
  m.doc() = "meshnn compiled core (use the `meshnn` package, not this module directly)";
  m.attr("__version__") = MESHNN_VERSION;

  // meshnn's errors → the Python exception of core's one error table (core/error_codes.h); other
  // exceptions go on to pybind11's own translators (std::bad_alloc → MemoryError, …).
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyObject* type =
          PyDict_GetItemString(PyEval_GetBuiltins(), error_code_of(e).python_exception);
      PyErr_SetString(type ? type : PyExc_RuntimeError, e.what());
    }
  });
  // The table and a thrower, for tests/python/test_errors.py (walks every row through the
  // translator above).
  m.def("_error_table", [] {
    py::list rows;
    for (const ErrorCode& r : error_codes())
      rows.append(py::make_tuple(r.type, r.http_status, r.code, r.exit_code, r.python_exception));
    return rows;
  });
  m.def("_raise_error", [](const std::string& type, const std::string& message) {
    for (const ErrorCode& r : error_codes())
      if (type == r.type) r.raise(message);
    throw InvalidArgument("_raise_error: no error type '" + type + "' in the table");
  });

  bind_streams(m);
  bind_audio_model(m);
  bind_policy_model(m);
  bind_backends(m);
  bind_wav_files(m);
  bind_models(m);
}
