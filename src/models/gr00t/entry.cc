// GR00T's entry in the policy registry (models/policy_spec.h): its catalog (versions, the inputs
// and settings of the CLI's `policy` command and of the commands it keeps, gr00t-policy and
// gr00t-adapter), how it recognises a checkpoint, and the two parts it runs — the whole policy
// (gr00t::Policy) and the VL adapter alone (gr00t::Adapter) — behind PolicyModel.
#include <sys/stat.h>

#include <utility>

#include "meshnn/core/error.h"
#include "meshnn/gr00t.h"
#include "meshnn/io/sharded_safetensors.h"
#include "models/gr00t/adapter.h"
#include "models/policy_spec.h"

namespace meshnn::models {
namespace {

using namespace gr00t;

const char* const kName = "gr00t";

PolicyModelEntry catalog_entry() {
  PolicyModelEntry e;
  e.name = kName;
  e.description =
      "NVIDIA Isaac-GR00T action head (N1.5 / N1.6 / N1.7): VL adapter + flow-matching DiT";
  e.path =
      "Isaac-GR00T action head .safetensors, or a Hugging Face checkpoint folder (config.json + "
      "model.safetensors or shards + model.safetensors.index.json)";
  e.variants = {"n1.5", "n1.6", "n1.7"};
  e.inputs = {{"token_types", "(S) .npy: 0 text, 1 image, 2 padding", true},
              {"features", "backbone features .npy (1, S, D)"},
              {"state", "state .npy (1, 1, d), d ≤ max_state_dim"},
              {"noise", "initial noise .npy (1, T, A)"}};
  e.settings = {{"precision",
                 "fp32 | bf16 (bf16 operands, f32 accumulation; the adapter part: VL-SA / state)"},
                {"hoist_precision",
                 "hoist projection: fp32 | bf16 (default: fp32; the policy: --precision's)"},
                {"gather_mode", "splice | onehot"},
                {"taps", "also write the debug taps (the adapter part)", false, true}};
  e.parts = {{"policy",
              "GR00T action head: features + state → action chunk (adapter, DiT, flow-matching "
              "Euler steps)",
              "gr00t-policy",
              {"features", "token_types", "state", "embodiment", "out"},
              true,
              false},
             {"adapter",
              "GR00T VL adapter: vlln → VL-SA → gather → hoisted cross K/V + state encoder",
              "gr00t-adapter",
              {"token_types", "features", "out"},
              false,
              true}};
  return e;
}

bool is_folder(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// "" when the checkpoint (file or folder, headers only) holds a GR00T action head's keys.
std::string refusal(const std::string& path) {
  try {
    const io::ShardedSafetensors f = is_folder(path) ? io::ShardedSafetensors::open_folder(path)
                                                     : io::ShardedSafetensors::open_file(path);
    detect_weight_prefix(f.keys());
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

std::vector<std::string> files(const std::string& path) {
  std::vector<std::string> out{path};
  if (io::is_safetensors_folder(path)) {  // every file the folder's model opens
    out.push_back(path + "/config.json");
    for (const std::string& f : io::ShardedSafetensors::open_folder(path).files()) out.push_back(f);
  }
  return out;
}

// The setting `name` of the options, `fallback` when not given.
std::string setting(const PolicyModelOptions& o, const std::string& name,
                    const std::string& fallback) {
  auto it = o.settings.find(name);
  return it == o.settings.end() || it->second.empty() ? fallback : it->second;
}

void check_names(const PolicyModelOptions& o) {
  static const PolicyModelEntry entry = catalog_entry();
  for (const auto& [name, value] : o.settings) {
    bool known = false;
    for (const PolicyField& f : entry.settings) known = known || f.name == name;
    MESHNN_CHECK(known, kName, " has no setting '", name,
                 "' (precision, hoist_precision, gather_mode, taps)");
  }
  for (const auto& [name, t] : o.inputs)
    MESHNN_CHECK(name == "token_types", kName, " takes only token_types at load, not '", name, "'");
  MESHNN_CHECK(o.part == "policy" || o.part == "adapter", kName, " has no part '", o.part,
               "' (policy, adapter)");
  MESHNN_CHECK(o.part == "adapter" || setting(o, "taps", "").empty(), kName,
               ": taps are written by the adapter part only");
}

// The typed load: version, token types and load options of the generic ones.
struct Typed {
  Version version = Version::n1_5;
  Tensor token_types;
  LoadOptions load;
};

Typed typed_of(const PolicyModelOptions& o) {
  check_names(o);
  Typed t;
  MESHNN_CHECK(!o.variant.empty(), kName, " needs its version (n1.5 | n1.6 | n1.7)");
  t.version = parse_version(o.variant);
  auto it = o.inputs.find("token_types");
  MESHNN_CHECK(it != o.inputs.end() && it->second.defined(), kName,
               " needs the token types at load (the input token_types)");
  t.token_types = it->second;
  t.load.mesh = o.mesh;
  t.load.backend = o.backend;
  t.load.threads = o.threads;
  t.load.config_json = o.config_json;
  t.load.config_path = o.config_path;
  t.load.allow_unknown_config = o.allow_unknown_config;
  return t;
}

// The adapter part's options: --precision for VL-SA and state, the hoist fp32 unless given.
AdapterOptions adapter_options(const PolicyModelOptions& o) {
  AdapterOptions opt;
  opt.precision = parse_precision(setting(o, "precision", "fp32"));
  opt.state_precision = opt.precision;
  opt.hoist_precision = parse_precision(setting(o, "hoist_precision", "fp32"));
  opt.gather_mode = parse_gather_mode(setting(o, "gather_mode", "splice"));
  opt.collect_taps = !setting(o, "taps", "").empty();
  return opt;
}

// The whole policy's: --precision everywhere (the hoist too unless given).
PolicyOptions policy_options(const PolicyModelOptions& o) {
  PolicyOptions opt;
  const std::string p = setting(o, "precision", "fp32");
  opt.adapter.precision = opt.adapter.state_precision = opt.head.precision = parse_precision(p);
  opt.adapter.hoist_precision = parse_precision(setting(o, "hoist_precision", p));
  opt.adapter.gather_mode = parse_gather_mode(setting(o, "gather_mode", "splice"));
  return opt;
}

// A call's input `name` (undefined when not given); an unknown name is refused.
Tensor input(const PolicyStep& s, const std::string& name) {
  for (const auto& [k, t] : s.inputs)
    MESHNN_CHECK(k == "features" || k == "state" || k == "noise", kName,
                 " takes the inputs features, state and noise per call, not '", k, "'");
  auto it = s.inputs.find(name);
  return it == s.inputs.end() ? Tensor() : it->second;
}

struct AdapterPart final : PolicyModel::Impl {
  Adapter adapter;
  explicit AdapterPart(Adapter a) : adapter(std::move(a)) {
    describe = adapter.describe();
    metadata = {{"plan", adapter.plan().describe()},
                {"gr00t_version", version_name(adapter.version())}};
  }
  std::map<std::string, Tensor> run(const PolicyStep& s) const override {
    const Tensor state = input(s, "state");
    MESHNN_CHECK(!input(s, "noise").defined() && s.steps == 0, kName,
                 ": the adapter part runs no denoising steps (no noise, no steps)");
    return adapter.named_tensors(adapter.run(input(s, "features"), Tensor(), state, s.embodiment));
  }
};

struct PolicyPartImpl final : PolicyModel::Impl {
  Policy policy;
  explicit PolicyPartImpl(Policy p) : policy(std::move(p)) {
    describe = policy.describe();
    metadata = {{"plan", policy.plan().describe()},
                {"gr00t_version", version_name(policy.version())}};
    default_steps = policy.head_config().num_steps;
  }
  std::map<std::string, Tensor> run(const PolicyStep& s) const override {
    return {{"actions", policy.get_action(input(s, "features"), Tensor(), input(s, "state"),
                                          s.embodiment, input(s, "noise"), s.seed, s.steps)}};
  }
};

std::shared_ptr<const PolicyModel::Impl> load(const std::string& path,
                                              const PolicyModelOptions& o) {
  const Typed t = typed_of(o);
  std::shared_ptr<PolicyModel::Impl> m;
  if (o.part == "adapter")
    m = std::make_shared<AdapterPart>(
        Adapter::load(path, t.version, t.token_types, adapter_options(o), t.load));
  else
    m = std::make_shared<PolicyPartImpl>(
        Policy::load(path, t.version, t.token_types, policy_options(o), t.load));
  m->model = kName;
  m->variant = version_name(t.version);
  m->part = o.part;
  return m;
}

// Every check of the load, nothing packed: the adapter's plan (the whole policy's adapter).
std::string validate(const std::string& path, const PolicyModelOptions& o) {
  const Typed t = typed_of(o);
  const AdapterOptions opt = o.part == "adapter" ? adapter_options(o) : policy_options(o).adapter;
  return Adapter::validate(path, t.version, t.token_types, opt, t.load).describe();
}

}  // namespace

PolicySpec gr00t_policy_spec() {
  PolicySpec s;
  s.entry = catalog_entry();
  s.refusal = refusal;
  s.load = load;
  s.validate = validate;
  s.files = files;
  return s;
}

}  // namespace meshnn::models
