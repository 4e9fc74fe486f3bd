// meshnn::PolicyModel: the calls every policy model answers, over the registry of
// models/policy_spec.h (no model is named here: each family's entry is in its folder, listed by
// models/registry.cc).
#include "meshnn/policy_model.h"

#include <filesystem>

#include "io/file_util.h"
#include "meshnn/core/error.h"
#include "models/policy_spec.h"

namespace meshnn {

PolicyModel::PolicyModel(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

namespace {

// The registered entry called `name`, else InvalidArgument listing the registered names.
const models::PolicySpec& entry_named(const std::string& name) {
  std::string names;
  for (const models::PolicySpec& e : models::policy_specs()) {
    if (e.entry.name == name) return e;
    names += (names.empty() ? "" : ", ") + e.entry.name;
  }
  throw InvalidArgument(
      detail::concat("no registered policy model '", name, "' (registered: ", names, ")"));
}

// The entry options.model names, else the first that takes `path`, else InvalidArgument with
// each one's reason.
const models::PolicySpec& entry_for(const std::string& path, const PolicyModelOptions& options) {
  if (!options.model.empty()) return entry_named(options.model);
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) io::check_regular_input(path);
  std::string why;
  for (const models::PolicySpec& e : models::policy_specs()) {
    const std::string refusal = e.refusal(path);
    if (refusal.empty()) return e;
    why += detail::concat("\n  ", e.entry.name, ": ", refusal);
  }
  throw InvalidArgument(detail::concat(
      path, ": not a policy model meshnn knows (each registered model says why):", why));
}

}  // namespace

PolicyModel PolicyModel::load(const std::string& path, const PolicyModelOptions& options) {
  return PolicyModel(entry_for(path, options).load(path, options));
}

std::string PolicyModel::validate(const std::string& path, const PolicyModelOptions& options) {
  return entry_for(path, options).validate(path, options);
}

std::vector<std::string> PolicyModel::registered() {
  std::vector<std::string> names;
  for (const models::PolicySpec& e : models::policy_specs()) names.push_back(e.entry.name);
  return names;
}

std::vector<PolicyModelEntry> PolicyModel::catalog() {
  std::vector<PolicyModelEntry> out;
  for (const models::PolicySpec& e : models::policy_specs()) out.push_back(e.entry);
  return out;
}

std::string PolicyModel::identify(const std::string& path, const PolicyModelOptions& options) {
  return entry_for(path, options).entry.name;
}

std::vector<std::string> PolicyModel::files(const std::string& path,
                                            const PolicyModelOptions& options) {
  std::vector<std::string> out = entry_for(path, options).files(path);
  if (!options.config_path.empty()) out.push_back(options.config_path);
  return out;
}

std::string PolicyModel::model() const { return impl_->model; }
std::string PolicyModel::variant() const { return impl_->variant; }
std::string PolicyModel::part() const { return impl_->part; }
std::string PolicyModel::describe() const { return impl_->describe; }
std::map<std::string, std::string> PolicyModel::metadata() const { return impl_->metadata; }
int PolicyModel::default_steps() const { return impl_->default_steps; }

std::map<std::string, Tensor> PolicyModel::run(const PolicyStep& step) const {
  return impl_->run(step);
}

}  // namespace meshnn
