// _meshnn bindings of the generic policy API (meshnn/policy_model.h): PolicyModel over the policy
// registry, its catalog and one call. No model is named here (meshnn.PolicyModel in
// python/meshnn/_policy.py wraps it; meshnn.gr00t binds GR00T's typed classes).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>

#include "bind_common.h"
#include "meshnn/core/error.h"
#include "meshnn/policy_model.h"

namespace meshnn::python {
namespace {

// An input array → a Tensor: integers (a layout such as token ids or types) as an i64 copy,
// float32 as a view (view_of's rules).
Tensor input_of(const py::array& a, const std::string& name) {
  const char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u') return view_of(a, name);
  py::array_t<int64_t, py::array::c_style | py::array::forcecast> t(a);
  std::vector<int64_t> shape(t.shape(), t.shape() + t.ndim());
  Tensor out(shape, DType::i64);
  std::copy(t.data(), t.data() + t.size(), out.data<int64_t>());
  return out;
}

std::map<std::string, Tensor> inputs_of(const std::map<std::string, py::array>& in) {
  std::map<std::string, Tensor> out;
  for (const auto& [k, a] : in) out[k] = input_of(a, k);
  return out;
}

py::dict field_dict(const PolicyField& f) {
  py::dict d;
  d["name"] = f.name;
  d["help"] = f.help;
  d["at_load"] = f.at_load;
  d["flag"] = f.flag;
  return d;
}

py::dict entry_dict(const PolicyModelEntry& e) {
  py::dict d;
  d["name"] = e.name;
  d["description"] = e.description;
  d["path"] = e.path;
  d["variants"] = e.variants;
  py::list inputs, settings, parts;
  for (const PolicyField& f : e.inputs) inputs.append(field_dict(f));
  for (const PolicyField& f : e.settings) settings.append(field_dict(f));
  for (const PolicyPart& p : e.parts) {
    py::dict pd;
    pd["name"] = p.name;
    pd["description"] = p.description;
    pd["command"] = p.command;
    pd["required"] = p.required;
    pd["one_output"] = p.one_output;
    pd["validates_alone"] = p.validates_alone;
    parts.append(pd);
  }
  d["inputs"] = inputs;
  d["settings"] = settings;
  d["parts"] = parts;
  return d;
}

PolicyModelOptions options_of(const std::string& model, const std::string& variant,
                              const std::string& part, const std::string& mesh, int threads,
                              const std::string& config_json,
                              const std::map<std::string, std::string>& settings,
                              const std::map<std::string, py::array>& inputs,
                              bool allow_unknown_config) {
  PolicyModelOptions o;
  o.model = model;
  o.variant = variant;
  o.part = part;
  o.mesh = mesh;
  o.threads = threads;
  o.config_json = config_json;
  o.settings = settings;
  o.inputs = inputs_of(inputs);
  o.allow_unknown_config = allow_unknown_config;
  return o;
}

}  // namespace

void bind_policy_model(py::module_& m) {
  py::class_<PolicyModel>(m, "PolicyModel")
      .def_static(
          "load",
          [](const std::string& path, const std::string& model, const std::string& variant,
             const std::string& part, const std::string& mesh, int threads,
             const std::string& config_json, const std::map<std::string, std::string>& settings,
             const std::map<std::string, py::array>& inputs, bool allow_unknown_config) {
            const PolicyModelOptions o =
                options_of(model, variant, part, mesh, threads, config_json, settings, inputs,
                           allow_unknown_config);
            py::gil_scoped_release nogil;
            return PolicyModel::load(path, o);
          },
          py::arg("path"), py::arg("model"), py::arg("variant"), py::arg("part"), py::arg("mesh"),
          py::arg("threads"), py::arg("config_json"), py::arg("settings"), py::arg("inputs"),
          py::arg("allow_unknown_config"))
      .def_static("registered", &PolicyModel::registered)
      .def_static("catalog",
                  [] {
                    py::list out;
                    for (const PolicyModelEntry& e : PolicyModel::catalog())
                      out.append(entry_dict(e));
                    return out;
                  })
      .def_static(
          "identify",
          [](const std::string& path, const std::string& model) {
            PolicyModelOptions o;
            o.model = model;
            return PolicyModel::identify(path, o);
          },
          py::arg("path"), py::arg("model"))
      .def_static(
          "files",
          [](const std::string& path, const std::string& model) {
            PolicyModelOptions o;
            o.model = model;
            return PolicyModel::files(path, o);
          },
          py::arg("path"), py::arg("model"))
      .def_property_readonly("model", &PolicyModel::model)
      .def_property_readonly("variant", &PolicyModel::variant)
      .def_property_readonly("part", &PolicyModel::part)
      .def_property_readonly("metadata", &PolicyModel::metadata)
      .def_property_readonly("default_steps", &PolicyModel::default_steps)
      .def("describe", &PolicyModel::describe)
      .def(
          "run",
          [](const PolicyModel& self, const std::map<std::string, py::array>& inputs,
             int embodiment, uint64_t seed, int steps) {
            PolicyStep s;
            s.inputs = inputs_of(inputs);
            s.embodiment = embodiment;
            s.seed = seed;
            s.steps = steps;
            std::map<std::string, Tensor> out;
            {
              py::gil_scoped_release nogil;
              out = self.run(s);
            }
            std::map<std::string, py::array> res;
            for (auto& [k, v] : out) res[k] = to_numpy(v);
            return res;
          },
          py::arg("inputs"), py::arg("embodiment"), py::arg("seed"), py::arg("steps"));
}

}  // namespace meshnn::python
