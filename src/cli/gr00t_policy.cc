// meshnn gr00t-policy: backbone features + token types + state + embodiment id → action chunk
// (1, T, A) .npy in the model's normalised space: VL adapter, then the flow-matching DiT head
// (K Euler steps on cross K/V hoisted once). Every input is validated before any compute; on an
// error nothing is written.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/gr00t.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::cli {

namespace {

struct Args {
  std::string checkpoint, version, features, token_types, state, noise, out, mesh = "1x1";
  std::string backend = "local", precision = "fp32";
  int embodiment = -1, steps = 0, threads = 0;
  uint64_t seed = 0;
  bool describe = false, allow_unknown_config = false;
};

void run(const Args& a) {
  using namespace gr00t;
  const Version v = parse_version(a.version);
  LoadOptions lo;
  lo.mesh = a.mesh;
  lo.backend = parse_backend(a.backend);
  lo.allow_unknown_config = a.allow_unknown_config;
  lo.threads = a.threads;
  const Tensor types = io::load_npy(a.token_types);
  const Tensor feats = io::load_npy(a.features);
  const Tensor state = io::load_npy(a.state);
  const Tensor noise = a.noise.empty() ? Tensor() : io::load_npy(a.noise);
  PolicyOptions opt;
  const Precision p = parse_precision(a.precision);
  opt.adapter.precision = opt.adapter.hoist_precision = opt.adapter.state_precision = p;
  opt.head.precision = p;
  // A checkpoint of another version fails here (its metadata names the version), as do bad
  // configs, missing keys and a head split the mesh cannot make; Policy owns the SPMD launch.
  const Policy pol = Policy::load(a.checkpoint, v, types, opt, lo);
  const bool rank0 = process_rank(lo.backend) == 0;
  if (a.describe && rank0) std::printf("%s\n", pol.describe().c_str());
  const Tensor actions =
      pol.get_action(feats, Tensor(), state, a.embodiment, noise, a.seed, a.steps);
  if (lo.backend == Backend::mpi) finalize_backends();
  if (!rank0) return;  // every rank has the actions; rank 0 writes them
  io::save_npy(a.out, actions);
  std::fprintf(stderr, "gr00t-policy: %s, embodiment %d, %d steps, mesh %s → %s %s\n",
               version_name(v), a.embodiment, a.steps ? a.steps : pol.head_config().num_steps,
               a.mesh.c_str(), shape_str(actions.shape()).c_str(), a.out.c_str());
}

const Registrar reg("gr00t-policy", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("gr00t-policy",
                                 "GR00T action head: features + state → action chunk (adapter, "
                                 "DiT, flow-matching Euler steps)");
  cmd->add_option("--checkpoint", args->checkpoint,
                  "Isaac-GR00T action head .safetensors, or a Hugging Face checkpoint folder "
                  "(config.json + model.safetensors or shards + model.safetensors.index.json)")
      ->required();
  cmd->add_option("--version", args->version, "n1.5 | n1.6 | n1.7")->required();
  cmd->add_option("--features", args->features, "backbone features .npy (1, S, D)")->required();
  cmd->add_option("--token-types", args->token_types, "(S) .npy: 0 text, 1 image, 2 padding")
      ->required();
  cmd->add_option("--state", args->state, "state .npy (1, 1, d), d ≤ max_state_dim")->required();
  add_int_option(cmd, "--embodiment", args->embodiment, 0, 1 << 20,
                 "embodiment id (0 … max_num_embodiments − 1)")
      ->required();
  add_int_option(cmd, "--steps", args->steps, 1, 1 << 20,
                 "Euler steps, at most the checkpoint's timestep buckets (1000) (default: the "
                 "checkpoint's, 4)");
  auto* seed = add_int_option(cmd, "--seed", args->seed, uint64_t{0}, ~uint64_t{0},
                              "seed of the initial noise (meshnn's generator)");
  auto* noise = cmd->add_option("--noise", args->noise, "initial noise .npy (1, T, A)");
  seed->excludes(noise);
  cmd->add_option("--out", args->out, "output actions .npy (1, T, A)")->required();
  cmd->add_option("--mesh", args->mesh, "mesh RxC: heads split over the axis of extent > 1");
  cmd->add_option("--backend", args->backend, "local | mpi");
  cmd->add_option("--precision", args->precision, "fp32 | bf16 (bf16 operands, f32 accumulation)");
  add_int_option(cmd, "--threads", args->threads, 0, max_threads(),
                 "OpenMP threads per device (0 = cores / devices)");
  cmd->add_flag("--describe", args->describe, "print the head's plan as JSON");
  cmd->add_flag("--allow-unknown-config", args->allow_unknown_config,
                "accept config fields meshnn does not know (logged and ignored)");
  cmd->callback([args] { run(*args); });
});

}  // namespace

}  // namespace meshnn::cli
