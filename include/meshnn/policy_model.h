// One way in for every robot policy model (observations → an action chunk): PolicyModel::load(path)
// finds the model from what the path holds through the registry of policy models meshnn knows
// (src/models/<family>/entry.cc, listed in src/models/registry.cc) and runs it whatever it is —
// the whole policy, or a part of it alone (e.g. the vision-language adapter of a
// vision-language-action model) — as meshnn/audio_model.h does for the audio models. The models
// themselves are internal.
//
// Life of a load: the checkpoint is opened once (mmapped); the config, the inputs fixed at load
// (PolicyModelOptions::inputs, e.g. the token layout), the mesh split and every checkpoint key
// and shape are validated before any weight is converted or packed; then each device of the mesh
// packs its slice once.
//
// Life of a call: run() takes the observations by name (the catalog's inputs), validates them
// before any compute and runs one SPMD launch of the mesh (local: one thread per device; MPI: this
// process is its rank's device, every rank makes the same calls in the same order, and every rank
// gets the outputs). A loaded model may be used from any number of threads at once (each call
// takes its own runners over the shared weights; MPI calls are serialised).
//
// Errors: meshnn::Error subclasses (meshnn/core/error.h): InvalidArgument / ShapeError for bad
// inputs, options or configs, WeightError for checkpoint keys, FormatError for malformed files.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn {

// A named input or setting of a policy model, as its catalog entry describes it.
struct PolicyField {
  std::string name;      // e.g. "features": the key of run()'s inputs (the CLI's --features)
  std::string help;      // one line for help texts (shape, meaning)
  bool at_load = false;  // inputs: fixed at load (PolicyModelOptions::inputs), not per call
  bool flag = false;     // settings: on / off (value "1" or "")
};

// What a model runs: the whole policy, or a part of it alone.
struct PolicyPart {
  std::string name;         // "policy" (the whole model), or a part such as "adapter"
  std::string description;  // one line for help texts
  // The command name the CLI keeps for this part of this model (a command older than `policy`),
  // "" when none; it runs `policy --model NAME --part PART` with the same options.
  std::string command;
  // What a call of this part needs: input names, and "embodiment" / "out" for the CLI's options.
  std::vector<std::string> required;
  // Whether run() returns one tensor (the CLI writes it as .npy) or several by name (.safetensors
  // with metadata()).
  bool one_output = true;
  // Whether validate() alone is worth a call for this part (the CLI's --describe without --out:
  // only the inputs fixed at load are needed then).
  bool validates_alone = false;
};

// A registered policy model as the registry describes it before any path is given
// (PolicyModel::catalog): what a program needs to list the models and build its options.
struct PolicyModelEntry {
  std::string name;                   // as registered(), e.g. the family's name
  std::string description;            // one line
  std::string path;                   // what a path of it is, in a few words (help texts)
  std::vector<std::string> variants;  // the versions PolicyModelOptions::variant names
  std::vector<PolicyField> inputs;    // tensors by name: at load, then per call
  std::vector<PolicyField> settings;  // PolicyModelOptions::settings by name
  std::vector<PolicyPart> parts;      // "policy" first
};

struct PolicyModelOptions {
  // Load as this registered model without asking the others ("" = the first that recognises the
  // path): the model's own loader then reports its own errors.
  std::string model;
  std::string variant;          // the model version (one of the entry's variants)
  std::string part = "policy";  // one of the entry's parts
  // "1x1", or "1xN" / "Nx1": the model's heads split over the N devices of that axis.
  std::string mesh = "1x1";
  Backend backend = Backend::local;  // mpi: this process is one rank of an mpiexec launch
  int threads = 0;                   // OpenMP threads per device; 0 = cores / devices
  // A JSON config replacing the checkpoint's own, as text or from a file (at most one of the two;
  // "" = the checkpoint's: a folder's config.json or the file's "config" metadata).
  std::string config_json, config_path;
  // Config fields meshnn does not know are logged (warn) and ignored instead of refused.
  bool allow_unknown_config = false;
  // The entry's settings by name (e.g. "precision" → "bf16"; a flag: "1"); unnamed ones keep the
  // model's defaults, an unknown name is an InvalidArgument naming the known ones.
  std::map<std::string, std::string> settings;
  // The inputs the entry marks at_load (they fix the model's static shapes), by name.
  std::map<std::string, Tensor> inputs;
};

// One call: the observations and how to run the steps.
struct PolicyStep {
  std::map<std::string, Tensor> inputs;  // the entry's per-call inputs by name
  int embodiment = 0;                    // the robot's embodiment id
  uint64_t seed = 0;                     // of the initial noise, when no "noise" input is given
  int steps = 0;                         // denoising steps; 0 = the model's (default_steps())
};

class PolicyModel {
 public:
  // path: a checkpoint file or folder; the first registered model that recognises it (or
  // options.model) loads it; when none does, the InvalidArgument says for each why not.
  static PolicyModel load(const std::string& path, const PolicyModelOptions& options);
  // The checks of load() that need no packing → the plan as JSON. What they cover is the model's
  // (GR00T: config, token layout, mesh split and every adapter key and shape; the whole policy's
  // action-head keys are checked by load()).
  static std::string validate(const std::string& path, const PolicyModelOptions& options);
  static std::vector<std::string> registered();  // the names, in the order load() asks them
  static std::vector<PolicyModelEntry> catalog();
  // The registered name of the model load() would take `path` for (headers read, no weights).
  static std::string identify(const std::string& path, const PolicyModelOptions& options = {});
  // The files load() reads for `path` (the checkpoint, config.json, shards), from their names:
  // what a program must never write over.
  static std::vector<std::string> files(const std::string& path,
                                        const PolicyModelOptions& options = {});

  std::string model() const;     // the registry name
  std::string variant() const;   // the version loaded, e.g. "n1.7"
  std::string part() const;      // the part loaded
  std::string describe() const;  // the loaded runner's plan as JSON
  // What an output file of run() records beside its tensors (the plan, the version).
  std::map<std::string, std::string> metadata() const;
  int default_steps() const;  // the denoising steps of a call with steps = 0 (0: none)
  // → the part's outputs by name (the whole policy: "actions" (1, T, A) in the model's normalised
  // action space), copies the caller owns.
  std::map<std::string, Tensor> run(const PolicyStep& step) const;

  struct Impl;

 private:
  explicit PolicyModel(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace meshnn
