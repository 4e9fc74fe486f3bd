// Definitions of the shared binding helpers declared in bind_common.h.
#include "bind_common.h"

#include <string>
#include <utility>
#include <vector>

#include "meshnn/mesh/mesh.h"

namespace meshnn::python {

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

RunOptions run_options(const std::string& mesh, const std::string& backend, int threads,
                       ProgressBridge& bridge) {
  RunOptions run;
  run.mesh = mesh;
  run.backend = parse_backend(backend);
  run.threads = threads;
  run.progress = bridge.fn();
  return run;
}

namespace {
// Function-local: filled by other files' initialisers, whatever order they run in.
std::vector<ModelBinding>& model_bindings() {
  static std::vector<ModelBinding> all;
  return all;
}
}  // namespace

bool add_model_binding(ModelBinding bind) {
  model_bindings().push_back(bind);
  return true;
}

void bind_models(py::module_& m) {
  for (ModelBinding bind : model_bindings()) bind(m);
}

}  // namespace meshnn::python
