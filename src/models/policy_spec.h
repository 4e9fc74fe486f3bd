// One policy model family's entry in the registry behind meshnn::PolicyModel (a PolicySpec): its
// catalog entry, how it recognises a path, what it loads and validates, which files it reads. Each
// family defines its entry in its folder (models/<family>/entry.cc); models/registry.cc lists
// every family's entry by name, as for the audio models (models/model_spec.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/policy_model.h"

namespace meshnn {

// A loaded model behind PolicyModel: one subclass per entry.
struct PolicyModel::Impl {
  virtual ~Impl() = default;
  std::string model, variant, part, describe;
  std::map<std::string, std::string> metadata;
  int default_steps = 0;
  virtual std::map<std::string, Tensor> run(const PolicyStep& step) const = 0;
};

namespace models {

struct PolicySpec {
  PolicyModelEntry entry;  // name, variants, inputs, settings, parts
  // "" when `path` is this model's (headers only), else why not, in a few words.
  std::function<std::string(const std::string& path)> refusal;
  std::function<std::shared_ptr<const PolicyModel::Impl>(const std::string& path,
                                                         const PolicyModelOptions&)>
      load;
  // PolicyModel::validate: every check of load, nothing packed → the plan (JSON).
  std::function<std::string(const std::string& path, const PolicyModelOptions&)> validate;
  // The files load() reads for `path` (from names; a folder's config.json and shards).
  std::function<std::vector<std::string>(const std::string& path)> files;
};

// The registered policy entries in load order (the list of models/registry.cc). Built on first
// use (thread-safe); read-only after.
const std::vector<PolicySpec>& policy_specs();

}  // namespace models
}  // namespace meshnn
