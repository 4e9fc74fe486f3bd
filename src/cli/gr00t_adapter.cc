// meshnn gr00t-adapter: backbone features + token types + state (+ embodiment id) → hoisted cross
// K/V, gathered VL rows and state features (.safetensors); --describe prints the plan as JSON.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/gr00t.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/output.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/io/sharded_safetensors.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::cli {

namespace {

struct Args {
  std::string checkpoint, version, features, token_types, state, out, mesh = "1x1", config;
  std::string backend = "local";
  std::string precision = "fp32", hoist_precision = "fp32", gather_mode = "splice";
  int embodiment = 0;
  bool describe = false, allow_unknown_config = false, taps = false;
};

void run(const Args& a) {
  using namespace gr00t;
  const Version v = parse_version(a.version);
  if (!a.out.empty()) {
    std::vector<std::string> inputs{a.checkpoint, a.features, a.token_types, a.state, a.config};
    if (io::is_safetensors_folder(a.checkpoint)) {  // every file the folder's model opens
      inputs.push_back(a.checkpoint + "/config.json");
      for (const std::string& f : io::ShardedSafetensors::open_folder(a.checkpoint).files())
        inputs.push_back(f);
    }
    io::check_output_path(a.out, inputs);
  }
  LoadOptions lo;
  lo.mesh = a.mesh;
  lo.backend = parse_backend(a.backend);
  lo.allow_unknown_config = a.allow_unknown_config;
  // The checkpoint's config (metadata) wins over the version defaults; an explicit --config
  // file replaces the metadata.
  lo.config_path = a.config;
  const Tensor types = io::load_npy(a.token_types);
  AdapterOptions opt;
  opt.precision = parse_precision(a.precision);
  opt.state_precision = opt.precision;
  opt.hoist_precision = parse_precision(a.hoist_precision);
  opt.gather_mode = parse_gather_mode(a.gather_mode);
  opt.collect_taps = a.taps;
  if (a.describe && a.out.empty()) {
    // Validation only: config, layout and every checkpoint key and shape, no packing.
    std::printf("%s\n", Adapter::validate(a.checkpoint, v, types, opt, lo).describe().c_str());
    return;
  }
  MESHNN_CHECK(!a.features.empty() && !a.out.empty(),
               "--features and --out are required "
               "(or --describe alone to print the plan)");
  const Tensor feats = io::load_npy(a.features);
  check_finite(feats, a.features);  // before any weight is packed
  const Tensor state = a.state.empty() ? Tensor() : io::load_npy(a.state);
  // SPMD on the mesh (Adapter owns the launch): K/V heads are all-gathered, so rank 0 writes the
  // same file as a 1x1 run.
  const Adapter adapter = Adapter::load(a.checkpoint, v, types, opt, lo);
  const bool rank0 = process_rank(lo.backend) == 0;
  if (a.describe && rank0) std::printf("%s\n", adapter.describe().c_str());
  const std::map<std::string, Tensor> t =
      adapter.named_tensors(adapter.run(feats, Tensor(), state, a.embodiment));
  if (rank0) {
    io::save_safetensors(a.out, t,
                         {{"plan", adapter.plan().describe()},
                          {"gr00t_version", version_name(v)},
                          {"mesh", a.mesh}});
    std::fprintf(stderr, "gr00t-adapter: %s on mesh %s, %zu tensors → %s\n", version_name(v),
                 a.mesh.c_str(), t.size(), a.out.c_str());
  }
  // MPI was initialised by the load; every rank must finalise before exiting.
  if (lo.backend == Backend::mpi) finalize_backends();
}

const Registrar reg("gr00t-adapter", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "gr00t-adapter",
      "GR00T VL adapter: vlln → VL-SA → gather → hoisted cross K/V + state encoder");
  cmd->add_option("--checkpoint", args->checkpoint,
                  "Isaac-GR00T action head .safetensors, or a Hugging Face checkpoint folder "
                  "(config.json + model.safetensors or shards + model.safetensors.index.json)")
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
  cmd->add_flag("--allow-unknown-config", args->allow_unknown_config,
                "accept config fields meshnn does not know (logged and ignored)");
  cmd->callback([args] { run(*args); });
});

}  // namespace

}  // namespace meshnn::cli
