// meshnn policy: a robot policy model of the registry (PolicyModel) on .npy observations → its
// action chunk (.npy), or a part of it alone → its tensors (.safetensors); --describe prints the
// plan as JSON. The models, their inputs, settings and versions come from PolicyModel::catalog();
// each part a model names a command for (an older command of that model) is registered as that
// command too: `policy --model NAME --part PART` with the same options, output and exit codes.
// Every input is validated before any compute; on an error nothing is written.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/output.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/mesh/mesh.h"
#include "meshnn/policy_model.h"

namespace meshnn::cli {

namespace {

struct Args {
  std::string checkpoint, model, part = "policy", version, out, mesh = "1x1", config;
  std::string backend = "local";
  std::map<std::string, std::string> inputs;    // input name → .npy path
  std::map<std::string, std::string> settings;  // setting name → value
  std::map<std::string, bool> flags;            // flag setting name → on
  int embodiment = 0, steps = 0, threads = 0;
  uint64_t seed = 0;
  bool describe = false, allow_unknown_config = false;
  CLI::App* cmd = nullptr;  // to ask which options were given
};

std::string option_of(const std::string& name) {
  std::string s = "--" + name;
  for (char& c : s)
    if (c == '_') c = '-';
  return s;
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// The catalog entry of the model the call loads (named, or the one that recognises the path).
PolicyModelEntry entry_of(const Args& a) {
  PolicyModelOptions o;
  o.model = a.model;
  const std::string name = PolicyModel::identify(a.checkpoint, o);
  for (PolicyModelEntry& e : PolicyModel::catalog())
    if (e.name == name) return e;
  throw Error("internal: identified policy model " + name + " is not in the catalog");
}

const PolicyPart& part_of(const PolicyModelEntry& e, const std::string& part) {
  std::vector<std::string> names;
  for (const PolicyPart& p : e.parts) {
    if (p.name == part) return p;
    names.push_back(p.name);
  }
  throw InvalidArgument(e.name + " has no part '" + part + "' (" + joined(names, ", ") + ")");
}

bool at_load(const PolicyModelEntry& e, const std::string& name) {
  for (const PolicyField& f : e.inputs)
    if (f.name == name) return f.at_load;
  return false;
}

// A part that validates alone: a --describe without --out needs only the inputs fixed at load.
bool describe_alone(const PolicyPart& p) { return p.validates_alone; }

// The part's required options that were not given: InvalidArgument naming them. A part that
// validates alone needs only its inputs at load with --describe and no --out; when it misses
// another, the error names every option the run adds to those.
void check_required(const Args& a, const PolicyModelEntry& e, const PolicyPart& p) {
  const bool alone = describe_alone(p) && a.describe && a.out.empty();
  std::vector<std::string> missing, for_run;
  for (const std::string& r : p.required) {
    if (!at_load(e, r)) for_run.push_back(option_of(r));
    if (a.cmd->count(option_of(r)) == 0 && (!alone || at_load(e, r)))
      missing.push_back(option_of(r));
  }
  if (missing.empty()) return;
  if (describe_alone(p) && !alone) missing = for_run;
  const std::string why = !describe_alone(p) ? " for the " + p.name + " part of " + e.name
                          : alone            ? " for --describe"
                                             : " (or --describe alone to print the plan)";
  throw InvalidArgument(joined(missing, " and ") + (missing.size() > 1 ? " are" : " is") +
                        " required" + why);
}

PolicyModelOptions options_of(const Args& a) {
  PolicyModelOptions o;
  o.model = a.model;
  o.variant = a.version;
  o.part = a.part;
  o.mesh = a.mesh;
  o.backend = parse_backend(a.backend);
  o.threads = a.threads;
  o.config_path = a.config;
  o.allow_unknown_config = a.allow_unknown_config;
  for (const auto& [k, v] : a.settings)
    if (!v.empty()) o.settings[k] = v;
  for (const auto& [k, on] : a.flags)
    if (on) o.settings[k] = "1";
  return o;
}

// Writes the part's outputs (rank 0): one tensor as .npy, several as .safetensors with the
// model's metadata and the mesh; a summary line on stderr.
void save(const Args& a, const PolicyModel& m, const PolicyPart& p, const PolicyStep& step,
          const std::map<std::string, Tensor>& out) {
  const char* cmd = a.cmd->get_name().c_str();
  if (p.one_output) {
    const Tensor& t = out.begin()->second;
    io::save_npy(a.out, t);
    std::fprintf(stderr, "%s: %s, embodiment %d, %d steps, mesh %s → %s %s\n", cmd,
                 m.variant().c_str(), step.embodiment, step.steps ? step.steps : m.default_steps(),
                 a.mesh.c_str(), shape_str(t.shape()).c_str(), a.out.c_str());
    return;
  }
  std::map<std::string, std::string> meta = m.metadata();
  meta["mesh"] = a.mesh;
  io::save_safetensors(a.out, out, meta);
  std::fprintf(stderr, "%s: %s on mesh %s, %zu tensors → %s\n", cmd, m.variant().c_str(),
               a.mesh.c_str(), out.size(), a.out.c_str());
}

void run(const Args& a) {
  const PolicyModelEntry e = entry_of(a);
  const PolicyPart& p = part_of(e, a.part);
  check_required(a, e, p);
  PolicyModelOptions o = options_of(a);
  if (!a.out.empty()) {  // never over an input, a file of the model's folder included
    std::vector<std::string> inputs = PolicyModel::files(a.checkpoint, o);
    for (const auto& [name, path] : a.inputs) inputs.push_back(path);
    io::check_output_path(a.out, inputs);
  }
  PolicyStep step;
  step.embodiment = a.embodiment;
  step.seed = a.seed;
  step.steps = a.steps;
  for (const auto& [name, path] : a.inputs)
    if (!path.empty() && at_load(e, name)) o.inputs[name] = io::load_npy(path);
  if (describe_alone(p) && a.describe && a.out.empty()) {
    // Validation only: config, inputs at load and every checkpoint key and shape, no packing.
    std::printf("%s\n", PolicyModel::validate(a.checkpoint, o).c_str());
    return;
  }
  for (const auto& [name, path] : a.inputs) {
    if (path.empty() || at_load(e, name)) continue;
    step.inputs[name] = io::load_npy(path);
    check_finite(step.inputs[name], path);  // before any weight is packed
  }
  // SPMD on the mesh (the model owns the launch): every rank gets the outputs; rank 0 writes them.
  const PolicyModel m = PolicyModel::load(a.checkpoint, o);
  const bool rank0 = process_rank(o.backend) == 0;
  if (a.describe && rank0) std::printf("%s\n", m.describe().c_str());
  const std::map<std::string, Tensor> out = m.run(step);
  if (rank0) save(a, m, p, step, out);
  // MPI was initialised by the load; every rank must finalise before exiting.
  if (o.backend == Backend::mpi) finalize_backends();
}

// What a command offers: the inputs and settings of its models (the first help of a name wins).
struct Offer {
  std::vector<PolicyField> inputs, settings;
  std::vector<std::string> required;  // marked required at parse (an alias's part)
  std::string checkpoint_help, version_help;
};

void add_unique(std::vector<PolicyField>& to, const std::vector<PolicyField>& from) {
  for (const PolicyField& f : from) {
    bool seen = false;
    for (const PolicyField& g : to) seen = seen || g.name == f.name;
    if (!seen) to.push_back(f);
  }
}

bool in(const std::vector<std::string>& v, const std::string& x) {
  for (const std::string& y : v)
    if (y == x) return true;
  return false;
}

// The options every policy command has, in the order --help lists them.
void add_options(CLI::App* cmd, Args* a, const Offer& of) {
  auto req = [&](CLI::Option* o, const std::string& name) {
    return in(of.required, name) ? o->required() : o;
  };
  cmd->add_option("--checkpoint", a->checkpoint, of.checkpoint_help)->required();
  cmd->add_option("--version", a->version, of.version_help)->required();
  CLI::Option* noise = nullptr;
  for (const PolicyField& f : of.inputs) {
    CLI::Option* o = req(cmd->add_option(option_of(f.name), a->inputs[f.name], f.help), f.name);
    if (f.name == "noise") noise = o;
  }
  req(add_int_option(cmd, "--embodiment", a->embodiment, 0, 1 << 20,
                     "embodiment id (0 … max_num_embodiments − 1)"),
      "embodiment");
  add_int_option(cmd, "--steps", a->steps, 1, 1 << 20,
                 "denoising steps, at most the checkpoint's timestep buckets (default: the "
                 "checkpoint's)");
  auto* seed = add_int_option(cmd, "--seed", a->seed, uint64_t{0}, ~uint64_t{0},
                              "seed of the initial noise (meshnn's generator)");
  if (noise) seed->excludes(noise);
  req(cmd->add_option("--out", a->out, "output: one tensor .npy, several .safetensors"), "out");
  cmd->add_option("--mesh", a->mesh, "mesh RxC: heads split over the axis of extent > 1");
  cmd->add_option("--backend", a->backend, "local | mpi");
  add_int_option(cmd, "--threads", a->threads, 0, max_threads(),
                 "OpenMP threads per device (0 = cores / devices)");
  cmd->add_option("--config", a->config, "JSON config (default: the checkpoint's)");
  for (const PolicyField& f : of.settings) {
    if (f.flag)
      cmd->add_flag(option_of(f.name), a->flags[f.name], f.help);
    else
      cmd->add_option(option_of(f.name), a->settings[f.name], f.help);
  }
  cmd->add_flag("--describe", a->describe, "print the plan as JSON");
  cmd->add_flag("--allow-unknown-config", a->allow_unknown_config,
                "accept config fields meshnn does not know (logged and ignored)");
  a->cmd = cmd;
}

// `policy`: every registered model, every part.
void add_policy(CLI::App& app, const std::vector<PolicyModelEntry>& catalog) {
  auto args = std::make_shared<Args>();
  Offer of;
  std::vector<std::string> names, parts, versions;
  for (const PolicyModelEntry& e : catalog) {
    add_unique(of.inputs, e.inputs);
    add_unique(of.settings, e.settings);
    names.push_back(e.name);
    of.checkpoint_help += (of.checkpoint_help.empty() ? "" : "; ") + e.name + ": " + e.path;
    versions.push_back(e.name + ": " + joined(e.variants, " | "));
    for (const PolicyPart& p : e.parts)
      if (!in(parts, p.name)) parts.push_back(p.name);
  }
  of.version_help = "model version (" + joined(versions, "; ") + ")";
  auto* cmd = app.add_subcommand(
      "policy", "Run a robot policy model: observations → action chunk, or a part alone (" +
                    joined(names, ", ") + ")");
  add_options(cmd, args.get(), of);
  cmd->add_option("--model", args->model,
                  "registered policy model: " + joined(names, ", ") +
                      " (default: the one that recognises the checkpoint)");
  cmd->add_option("--part", args->part,
                  "what to run: " + joined(parts, " | ") + " (default: policy)");
  cmd->callback([args] { run(*args); });
}

// A part's own command: `policy --model NAME --part PART`, its required options at parse.
void add_part_command(CLI::App& app, const PolicyModelEntry& e, const PolicyPart& p) {
  auto args = std::make_shared<Args>();
  args->model = e.name;
  args->part = p.name;
  Offer of{e.inputs, e.settings, {}, e.path, joined(e.variants, " | ")};
  for (const std::string& r : p.required)
    if (!describe_alone(p) || at_load(e, r)) of.required.push_back(r);
  auto* cmd = app.add_subcommand(p.command, p.description);
  add_options(cmd, args.get(), of);
  cmd->callback([args] { run(*args); });
}

const Registrar reg("policy", [](CLI::App& app) {
  const std::vector<PolicyModelEntry> catalog = PolicyModel::catalog();
  add_policy(app, catalog);
  for (const PolicyModelEntry& e : catalog)
    for (const PolicyPart& p : e.parts)
      if (!p.command.empty()) add_part_command(app, e, p);
});

}  // namespace

}  // namespace meshnn::cli
