// _meshnn bindings of the GR00T VL adapter and policy (meshnn/gr00t.h): Gr00tVlAdapter and
// Gr00tPolicy.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bind_common.h"
#include "meshnn/core/error.h"
#include "meshnn/core/tensor.h"
#include "meshnn/gr00t.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::python {
namespace {

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

void bind_gr00t(py::module_& m) {
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

// Added to the module by module.cc's bind_models (bind_common.h).
const bool added = add_model_binding(&bind_gr00t);

}  // namespace
}  // namespace meshnn::python
