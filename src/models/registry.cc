// The registries of audio models and of policy models: every family's entry, listed here by name
// (CTranslate2's register_supported_models, ggml's backend registry), so that a static link cannot
// drop a model whose entry.cc nothing else references, and the load order is written in one place.
#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/io/safetensors.h"
#include "models/model_spec.h"
#include "models/policy_spec.h"

namespace meshnn::models {

// Each family's entry (models/<family>/entry.cc).
ModelSpec minimax_h3_audio_vae_spec();
ModelSpec ltx_audio_decoder_spec();
ModelSpec nvidia_bigvgan_spec();
PolicySpec gr00t_policy_spec();

namespace {

// Every family meshnn ships. A new model adds its entry here.
std::vector<ModelSpec> builtin_specs() {
  return {minimax_h3_audio_vae_spec(), ltx_audio_decoder_spec(), nvidia_bigvgan_spec()};
}

// Inserts `spec` in load order (rank, then name); a name already there is a programming error.
void insert_in_order(std::vector<ModelSpec>& specs, ModelSpec spec) {
  for (const ModelSpec& s : specs)
    if (s.name == spec.name) throw std::logic_error("audio model registered twice: " + s.name);
  const auto at = std::find_if(specs.begin(), specs.end(), [&](const ModelSpec& s) {
    return std::tie(s.rank, s.name) > std::tie(spec.rank, spec.name);
  });
  specs.insert(at, std::move(spec));
}

// A function-local static: built on first use (from main() or another file's initialiser calling
// register_model_spec, whatever order the linker runs initialisers in); only initialisers write
// it after, before main(), and everything after reads it.
std::vector<ModelSpec>& specs() {
  static std::vector<ModelSpec> all = [] {
    std::vector<ModelSpec> v;
    for (ModelSpec& s : builtin_specs()) insert_in_order(v, std::move(s));
    return v;
  }();
  return all;
}

}  // namespace

const std::vector<ModelSpec>& model_specs() { return specs(); }

// Every policy family meshnn ships, in load order. A new policy model adds its entry here.
const std::vector<PolicySpec>& policy_specs() {
  static const std::vector<PolicySpec> all{gr00t_policy_spec()};
  return all;
}

bool register_model_spec(ModelSpec spec) {
  insert_in_order(specs(), std::move(spec));
  return true;
}

ConfigMetadata config_metadata(const std::string& path) {
  ConfigMetadata m;
  try {
    const io::SafetensorsFile file = io::SafetensorsFile::open(path);
    if (auto it = file.metadata().find("config"); it != file.metadata().end())
      m.config = io::parse_config_json(it->second, path + " config");
  } catch (const Error& e) {
    m.problem = e.what();
  }
  return m;
}

}  // namespace meshnn::models
