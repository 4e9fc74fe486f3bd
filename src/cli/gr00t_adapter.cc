// meshnn gr00t-adapter: backbone features + token types + state (+ embodiment id) → hoisted cross
// K/V, gathered VL rows and state features (.safetensors); --describe prints the plan as JSON.
#include "meshnn/models/gr00t_adapter.h"

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/int_option.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/output.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::cli {

namespace {

struct Args {
  std::string checkpoint, version, features, token_types, state, out, mesh = "1x1", config;
  std::string backend = "local";
  std::string precision = "fp32", hoist_precision = "fp32", gather_mode = "splice";
  int embodiment = 0;
  bool describe = false, taps = false;
};

void run(const Args& a) {
  using namespace gr00t;
  const Version v = parse_version(a.version);
  if (!a.out.empty())
    io::check_output_path(a.out, {a.checkpoint, a.features, a.token_types, a.state, a.config});
  MeshConfig mc = parse_mesh(a.mesh);
  mc.backend = parse_backend(a.backend);
  MESHNN_CHECK(mc.rows == 1 || mc.cols == 1, "--mesh ", a.mesh,
               ": the head-parallel adapter splits heads over one mesh axis (use 1xN or Nx1)");
  const io::SafetensorsFile ck = io::SafetensorsFile::open(a.checkpoint);
  const std::string prefix = detect_weight_prefix(ck.keys());
  // The checkpoint's config (metadata) wins over the version defaults; an explicit --config
  // file replaces the metadata.
  Config cfg;
  if (!a.config.empty()) {
    cfg = Config::from_json_file(a.config, v);
  } else {
    cfg = Config::from_metadata(ck.metadata(), v);
  }
  const Tensor types = io::load_npy(a.token_types);
  const SlotLayout layout = SlotLayout::from_token_types(types, cfg.row_block);
  AdapterOptions opt;
  opt.precision = parse_precision(a.precision);
  opt.state_precision = opt.precision;
  opt.hoist_precision = parse_precision(a.hoist_precision);
  opt.gather_mode = parse_gather_mode(a.gather_mode);
  opt.collect_taps = a.taps;
  opt.mesh_axis = mc.rows > 1 ? 0 : 1;
  const WeightLookup lookup = [&ck](const std::string& k) -> std::optional<Tensor> {
    if (!ck.contains(k)) return std::nullopt;
    return ck.get(k);
  };
  if (a.describe && a.out.empty()) {
    // Validation only: config, layout and every checkpoint key and shape, no packing.
    std::printf("%s\n", AdapterPlan::build(cfg, layout, opt, &lookup, prefix).describe().c_str());
    return;
  }
  MESHNN_CHECK(!a.features.empty() && !a.out.empty(),
               "--features and --out are required "
               "(or --describe alone to print the plan)");
  Tensor feats = io::load_npy(a.features);
  check_finite(feats, a.features);  // before any weight is packed
  // Token rows (1, S, D) / (S, D) from the backbone go into the slot layout; a (1, 1, S_pad, D)
  // tensor is taken as already laid out.
  if (feats.rank() != 4) {
    MESHNN_CHECK_AS(ShapeError, feats.rank() >= 2 && feats.dim(-2) == layout.seq_len(), "features ",
                    shape_str(feats.shape()), " must be [1, S, D] with S=", layout.seq_len(),
                    " (the --token-types length)");
    feats = layout.rows_to_slots(feats);
  }
  const Tensor state = a.state.empty() ? Tensor() : io::load_npy(a.state);
  // SPMD: every device builds its adapter (its heads) and runs forward; K/V heads are
  // all-gathered so device 0 writes the same file as a 1x1 run.
  run_spmd(mc, [&](Device& dev) {
    VlAdapter adapter(cfg, layout, lookup, opt, prefix, &dev);
    if (a.describe && dev.rank() == 0) std::printf("%s\n", adapter.describe().c_str());
    const Tensor mask = adapter.plan().vl_mask_present ? layout.key_valid_mask() : Tensor();
    AdapterOutputs out = adapter.forward(feats, mask, state, a.embodiment);
    std::map<std::string, Tensor> t;
    t["dit_encoder_hidden_states"] = layout.slots_to_rows(out.vl);
    for (auto& [name, s] : out.vl_sets) t["vl_set." + name] = s;
    for (auto& [blk, kv] : out.kv) {
      t["kv." + std::to_string(blk) + ".k"] = dev.ccl().all_gather(kv.first, 1, opt.mesh_axis);
      t["kv." + std::to_string(blk) + ".v"] = dev.ccl().all_gather(kv.second, 1, opt.mesh_axis);
    }
    if (out.state_features.defined()) t["state_features"] = out.state_features;
    for (auto& [name, x] : out.taps)
      t["tap." + name] = name == "state_features" ? x : layout.slots_to_rows(x);
    if (dev.rank() != 0) return;
    io::save_safetensors(a.out, t,
                         {{"plan", adapter.plan().describe()},
                          {"gr00t_version", version_name(v)},
                          {"mesh", a.mesh}});
    std::fprintf(stderr, "gr00t-adapter: %s on mesh %s, %zu tensors → %s\n", version_name(v),
                 a.mesh.c_str(), t.size(), a.out.c_str());
  });
  // MPI was initialised by run_spmd; every rank must finalise before exiting.
  if (mc.backend == Backend::mpi) finalize_backends();
}

const Registrar reg("gr00t-adapter", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "gr00t-adapter",
      "GR00T VL adapter: vlln → VL-SA → gather → hoisted cross K/V + state encoder");
  cmd->add_option("--checkpoint", args->checkpoint, "Isaac-GR00T action head (.safetensors)")
      ->required();
  cmd->add_option("--version", args->version, "n1.5 | n1.6 | n1.7")->required();
  cmd->add_option("--token-types", args->token_types, "(S) .npy: 0 text, 1 image, 2 padding")
      ->required();
  cmd->add_option("--features", args->features, "backbone features .npy (1, S, D)");
  cmd->add_option("--state", args->state, "state .npy (1, 1, d), d ≤ state_dim_pad");
  add_int_option(cmd, "--embodiment", args->embodiment, 0, 1 << 20, "embodiment id");
  cmd->add_option("--out", args->out, "output .safetensors");
  cmd->add_option("--mesh", args->mesh, "mesh RxC: heads split over the axis of extent > 1");
  cmd->add_option("--backend", args->backend, "local | mpi");
  cmd->add_option("--config", args->config, "JSON config (default: the checkpoint's metadata)");
  cmd->add_option("--precision", args->precision, "VL-SA / state precision: fp32 | bf16");
  cmd->add_option("--hoist-precision", args->hoist_precision, "hoist projection: fp32 | bf16");
  cmd->add_option("--gather-mode", args->gather_mode, "splice | onehot");
  cmd->add_flag("--taps", args->taps, "also write the debug taps");
  cmd->add_flag("--describe", args->describe, "print the plan as JSON");
  cmd->callback([args] { run(*args); });
});

}  // namespace

}  // namespace meshnn::cli
