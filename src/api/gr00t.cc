// The public GR00T API (meshnn/gr00t.h) over the runners of models/: one load sequence (open,
// configs, layout, every check, then one SPMD launch that packs each device's head slice), a
// runtime::Pool of runners per device rank, and one launch of the runtime's executor per call.
#include "meshnn/gr00t.h"

#include <sys/stat.h>

#include <mutex>

#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/config_policy.h"
#include "meshnn/io/sharded_safetensors.h"
#include "meshnn/mesh/ccl.h"
#include "models/gr00t/action_head.h"
#include "runtime/executor.h"
#include "runtime/mesh_plan.h"
#include "runtime/pool.h"

namespace meshnn::gr00t {
namespace {

// The opened checkpoint: weights by key (mmapped or in memory, kept alive as long as the model:
// the packed layers may keep views of them), its keys and metadata.
struct Source {
  std::shared_ptr<const io::ShardedSafetensors> file;
  std::shared_ptr<const std::map<std::string, Tensor>> tensors;
  std::map<std::string, std::string> metadata;
  std::vector<std::string> keys;
  WeightLookup lookup;
  std::string config_file;  // a checkpoint folder's config.json ("" = the metadata's config)
};

bool is_folder(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// path: a .safetensors file, or a Hugging Face folder (config.json + one or sharded files).
Source open_source(const std::string& path) {
  Source s;
  if (is_folder(path)) {
    s.config_file = path + (path.back() == '/' ? "" : "/") + "config.json";
    struct stat st {};
    MESHNN_CHECK(::stat(s.config_file.c_str(), &st) == 0, path,
                 ": a GR00T checkpoint folder needs its config.json (missing: ", s.config_file,
                 ")");
    s.file =
        std::make_shared<const io::ShardedSafetensors>(io::ShardedSafetensors::open_folder(path));
  } else {
    s.file =
        std::make_shared<const io::ShardedSafetensors>(io::ShardedSafetensors::open_file(path));
  }
  s.metadata = s.file->metadata();
  s.keys = s.file->keys();
  s.lookup = [f = s.file](const std::string& k) -> std::optional<Tensor> {
    if (!f->contains(k)) return std::nullopt;
    return f->get(k);
  };
  return s;
}

Source memory_source(const Checkpoint& ck) {
  Source s;
  s.tensors = std::make_shared<const std::map<std::string, Tensor>>(ck.tensors);
  s.metadata = ck.metadata;
  for (const auto& [k, t] : ck.tensors) s.keys.push_back(k);
  s.lookup = [t = s.tensors](const std::string& k) -> std::optional<Tensor> {
    auto it = t->find(k);
    if (it == t->end()) return std::nullopt;
    return it->second;
  };
  return s;
}

// The mesh of a load: one axis of extent ≥ 1 splits the heads; threads checked here.
MeshConfig mesh_of(const LoadOptions& o, const char* what) {
  check_thread_count(o.threads, "threads per device");
  MeshConfig mc = parse_mesh(o.mesh);
  mc.backend = o.backend;
  mc.threads_per_device = o.threads;
  MESHNN_CHECK(mc.rows == 1 || mc.cols == 1, "mesh ", o.mesh, ": the head-parallel ", what,
               " splits heads over one mesh axis (use 1xN or Nx1)");
  return mc;
}

int head_axis(const MeshConfig& mc) { return mc.rows > 1 ? 0 : 1; }

// The configs: the explicit JSON (text or file), else a folder's config.json, else the
// checkpoint metadata's (its gr00t_version checked). hc: the head's from the same document.
Config config_of(const Source& s, const LoadOptions& o, Version v, ActionHeadConfig* hc) {
  if (!o.config_json.empty()) {
    if (hc) *hc = ActionHeadConfig::from_json(o.config_json, v);
    return Config::from_json(o.config_json, v);
  }
  const std::string& file = o.config_path.empty() ? s.config_file : o.config_path;
  if (!file.empty()) {
    Config c = Config::from_json_file(file, v);
    if (hc) *hc = ActionHeadConfig::from_json_file(file, v);
    return c;
  }
  Config c = Config::from_metadata(s.metadata, v);
  if (hc) *hc = ActionHeadConfig::from_metadata(s.metadata, v);
  return c;
}

// Features as slots: (1, 1, S_pad, D) as given, token rows (1, S, D) | (S, D) laid out; finite.
Tensor features_as_slots(const Tensor& features, const SlotLayout& layout) {
  MESHNN_CHECK(features.defined(), "features are undefined");
  check_finite(features, "features");
  if (features.rank() == 4) return features;
  MESHNN_CHECK_AS(ShapeError, features.rank() >= 2 && features.dim(-2) == layout.seq_len(),
                  "features ", shape_str(features.shape()),
                  " must be [1, S, D] with S=", layout.seq_len(), " (the token types length)");
  return layout.rows_to_slots(features);
}

// Per device rank, the weights of its head slice (MPI: only this rank's) and a runtime::Pool of
// runners over them. Runner: VlAdapter | PolicyRunner (fork() shares the packed weights,
// bind_device() moves a slice to the devices of a new launch).
template <class Runner>
struct DeviceSlices {
  runtime::MeshPlan plan;
  std::vector<std::unique_ptr<const Runner>> weights;
  std::vector<std::unique_ptr<runtime::Pool<Runner>>> pools;
  std::mutex launch;  // MPI: one launch at a time (runtime::Call::launch_lock)
  explicit DeviceSlices(const MeshConfig& mc) : plan(runtime::whole_call_on(mc)) {}
};

// One launch: make(device) packs that device's slice; it becomes the weights of its pool.
template <class Runner, class Make>
void build_slices(DeviceSlices<Runner>& s, const Make& make) {
  const size_t n = static_cast<size_t>(s.plan.mesh.rows * s.plan.mesh.cols);
  s.weights.resize(n);
  s.pools.resize(n);
  std::mutex mu;
  run_spmd(s.plan.mesh, [&](Device& d) {
    std::unique_ptr<Runner> r = make(d);
    r->bind_device(nullptr);  // the device ends with this launch
    std::lock_guard<std::mutex> lock(mu);
    const Runner* w = r.get();
    s.weights[static_cast<size_t>(d.rank())] = std::move(r);
    s.pools[static_cast<size_t>(d.rank())] =
        std::make_unique<runtime::Pool<Runner>>([w] { return runtime::runner_of(*w); });
  });
}

// The weights of device 0 (MPI: of this rank's device).
template <class Runner>
const Runner& first_slice(const DeviceSlices<Runner>& s) {
  for (const auto& w : s.weights)
    if (w) return *w;
  throw Error("internal: GR00T runners were not built");
}

// Runs step(runner, device) on every device with a runner of its slice bound to it (the
// runtime's executor: no time or item split) → device 0's result (MPI: this rank's; every rank
// computes the same replicated outputs).
template <class Runner, class Step>
auto run_slices(DeviceSlices<Runner>& s, const Step& step) {
  runtime::Call call;
  call.launch_lock = &s.launch;
  return runtime::run_on_mesh(
      s.plan, call, [&](int rank) { return s.pools[static_cast<size_t>(rank)]->take(); },
      [&](Runner& runner, const runtime::Share& share) {
        runner.bind_device(&share.device);
        struct Unbind {
          Runner& r;
          ~Unbind() { r.bind_device(nullptr); }
        } unbind{runner};
        return step(runner, share.device);
      });
}

// What every load checks and keeps, before any weight is packed.
struct Prepared {
  Source src;
  Version version = Version::n1_5;
  MeshConfig mc;
  Config cfg;
  SlotLayout layout;
  std::string prefix;
};

// Mesh, configs (head: when `hc` is given), layout, then the keys: a bad option or config is
// reported before anything about the weights.
Prepared prepare(Source src, Version v, const Tensor& token_types, const LoadOptions& options,
                 const char* what, ActionHeadConfig* hc = nullptr) {
  Prepared p;
  p.mc = mesh_of(options, what);
  MESHNN_CHECK(options.config_json.empty() || options.config_path.empty(),
               "give the config as JSON text or as a file, not both");
  p.version = v;
  const AllowUnknownConfig lenient(options.allow_unknown_config);
  p.cfg = config_of(src, options, v, hc);
  p.layout = SlotLayout::from_token_types(token_types, p.cfg.row_block);
  p.prefix = detect_weight_prefix(src.keys);
  p.src = std::move(src);
  return p;
}

AdapterPlan adapter_plan(const Prepared& p, AdapterOptions& opt) {
  opt.mesh_axis = head_axis(p.mc);
  // Config, layout, options, every checkpoint key and shape, and the head split over the mesh.
  return build_adapter_plan(p.cfg, p.layout, opt, &p.src.lookup, p.prefix, p.mc.rows * p.mc.cols,
                            0);
}

// What a loaded adapter or policy keeps: the load's checks (source, configs, layout, mesh), its
// options, the adapter's plan, device 0's description and the runners of every device's slice.
template <class Runner, class Options>
struct Loaded {
  Prepared p;
  Options opt;
  AdapterPlan plan;
  std::string describe;
  DeviceSlices<Runner> runners;
  Loaded(Prepared prep, const Options& o) : p(std::move(prep)), opt(o), runners(p.mc) {}
};

}  // namespace

// ---- Adapter --------------------------------------------------------------------------------

struct Adapter::Impl : Loaded<VlAdapter, AdapterOptions> {
  using Loaded::Loaded;
};

Adapter::Adapter(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

namespace {
std::shared_ptr<Adapter::Impl> load_adapter(Source src, Version v, const Tensor& token_types,
                                            const AdapterOptions& options, const LoadOptions& lo) {
  auto m = std::make_shared<Adapter::Impl>(prepare(std::move(src), v, token_types, lo, "adapter"),
                                           options);
  m->plan = adapter_plan(m->p, m->opt);
  const Prepared& p = m->p;
  build_slices(m->runners, [&](Device& d) {
    return std::make_unique<VlAdapter>(p.cfg, p.layout, p.src.lookup, m->opt, p.prefix, &d);
  });
  m->describe = first_slice(m->runners).describe();
  return m;
}
}  // namespace

Adapter Adapter::load(const std::string& path, Version version, const Tensor& token_types,
                      const AdapterOptions& options, const LoadOptions& load) {
  return Adapter(load_adapter(open_source(path), version, token_types, options, load));
}

Adapter Adapter::load(const Checkpoint& checkpoint, Version version, const Tensor& token_types,
                      const AdapterOptions& options, const LoadOptions& load) {
  return Adapter(load_adapter(memory_source(checkpoint), version, token_types, options, load));
}

AdapterPlan Adapter::validate(const std::string& path, Version version, const Tensor& token_types,
                              const AdapterOptions& options, const LoadOptions& load) {
  const Prepared p = prepare(open_source(path), version, token_types, load, "adapter");
  AdapterOptions opt = options;
  return adapter_plan(p, opt);
}

AdapterOutputs Adapter::run(const Tensor& features, const Tensor& vl_mask, const Tensor& state,
                            int embodiment) const {
  Impl& m = *impl_;
  const Tensor f = features_as_slots(features, m.p.layout);
  const int axis = m.opt.mesh_axis;
  return run_slices(m.runners, [&](VlAdapter& a, Device& d) {
    const Tensor mask = vl_mask.defined()
                            ? vl_mask
                            : (a.plan().vl_mask_present ? m.p.layout.key_valid_mask() : Tensor());
    AdapterOutputs o = a.forward(f, mask, state, embodiment);
    // The K/V are the runner's persistent buffers, overwritten by its next call: hand out copies
    // (every head: gathered over the axis group on a mesh).
    const bool split = a.plan().tp > 1;
    for (auto& [blk, kv] : o.kv)
      kv = split ? std::make_pair(d.ccl().all_gather(kv.first, 1, axis),
                                  d.ccl().all_gather(kv.second, 1, axis))
                 : std::make_pair(kv.first.clone(), kv.second.clone());
    if (o.state_features.defined()) o.state_features = o.state_features.clone();
    if (auto it = o.taps.find("state_features"); it != o.taps.end()) it->second = o.state_features;
    return o;
  });
}

std::map<std::string, Tensor> Adapter::named_tensors(const AdapterOutputs& out) const {
  const SlotLayout& layout = impl_->p.layout;
  std::map<std::string, Tensor> t;
  t["dit_encoder_hidden_states"] = layout.slots_to_rows(out.vl);
  for (const auto& [name, s] : out.vl_sets) t["vl_set." + name] = s;
  for (const auto& [blk, kv] : out.kv) {
    t["kv." + std::to_string(blk) + ".k"] = kv.first;
    t["kv." + std::to_string(blk) + ".v"] = kv.second;
  }
  if (out.state_features.defined()) t["state_features"] = out.state_features;
  for (const auto& [name, x] : out.taps)
    t["tap." + name] = name == "state_features" ? x : layout.slots_to_rows(x);
  return t;
}

const AdapterPlan& Adapter::plan() const { return impl_->plan; }
std::string Adapter::describe() const { return impl_->describe; }
const Config& Adapter::config() const { return impl_->p.cfg; }
const SlotLayout& Adapter::layout() const { return impl_->p.layout; }
Version Adapter::version() const { return impl_->p.version; }
const MeshConfig& Adapter::mesh() const { return impl_->p.mc; }

// ---- Policy ---------------------------------------------------------------------------------

struct Policy::Impl : Loaded<PolicyRunner, PolicyOptions> {
  using Loaded::Loaded;
  ActionHeadConfig hc;  // the head's dims, from the adapter's config document
};

Policy::Policy(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

namespace {
std::shared_ptr<Policy::Impl> load_policy(Source src, Version v, const Tensor& token_types,
                                          const PolicyOptions& options, const LoadOptions& lo) {
  ActionHeadConfig hc;
  auto m = std::make_shared<Policy::Impl>(
      prepare(std::move(src), v, token_types, lo, "policy", &hc), options);
  m->hc = hc;
  const Prepared& p = m->p;
  const int tp = p.mc.rows * p.mc.cols;
  // The head's checks first (every missing head tensor in one error), then the adapter's plan.
  ActionHead::validate(p.cfg, m->hc, p.src.lookup, p.prefix, tp);
  m->plan = adapter_plan(p, m->opt.adapter);
  m->opt.head.mesh_axis = m->opt.adapter.mesh_axis;
  // The layout is fixed: a cross block whose key set holds no token would attend nothing
  // (upstream's all-masked softmax is undefined), so it is refused here rather than per call.
  const char* vn = version_name(v);
  for (const HoistBlockPlan& hb : m->plan.blocks)
    MESHNN_CHECK(m->plan.key_sets.at(hb.key_set).l_real > 0, vn, ": no ", hb.key_set,
                 " tokens in the token types; the ", hb.key_set,
                 " cross-attention blocks would attend nothing");
  build_slices(m->runners, [&](Device& d) {
    auto r =
        std::make_unique<PolicyRunner>(p.cfg, m->hc, p.layout, p.src.lookup, m->opt, p.prefix, &d);
    if (d.rank() == 0 || p.mc.backend == Backend::mpi) m->describe = r->head().describe();
    return r;
  });
  return m;
}
}  // namespace

Policy Policy::load(const std::string& path, Version version, const Tensor& token_types,
                    const PolicyOptions& options, const LoadOptions& load) {
  return Policy(load_policy(open_source(path), version, token_types, options, load));
}

Policy Policy::load(const Checkpoint& checkpoint, Version version, const Tensor& token_types,
                    const PolicyOptions& options, const LoadOptions& load) {
  return Policy(load_policy(memory_source(checkpoint), version, token_types, options, load));
}

Tensor Policy::get_action(const Tensor& features, const Tensor& vl_mask, const Tensor& state,
                          int embodiment, const Tensor& noise, uint64_t seed, int steps,
                          std::vector<Tensor>* velocities) const {
  Impl& m = *impl_;
  const bool mpi = m.p.mc.backend == Backend::mpi;
  return run_slices(m.runners, [&](PolicyRunner& r, Device& d) {
    // Every device runs the same Euler loop on replicated rows; device 0 reports the steps.
    std::vector<Tensor>* v = d.rank() == 0 || mpi ? velocities : nullptr;
    return r.get_action(features, vl_mask, state, embodiment, noise, seed, steps, v);
  });
}

std::string Policy::describe() const { return impl_->describe; }
const AdapterPlan& Policy::plan() const { return impl_->plan; }
const Config& Policy::config() const { return impl_->p.cfg; }
const ActionHeadConfig& Policy::head_config() const { return impl_->hc; }
const SlotLayout& Policy::layout() const { return impl_->p.layout; }
Version Policy::version() const { return impl_->p.version; }
const MeshConfig& Policy::mesh() const { return impl_->p.mc; }

}  // namespace meshnn::gr00t
