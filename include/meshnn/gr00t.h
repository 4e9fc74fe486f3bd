// GR00T for programs: the VL adapter and the whole policy (adapter + flow-matching action head)
// loaded from an Isaac-GR00T checkpoint, ready to run from any thread (as meshnn/audio_model.h is
// for the audio models; the CLI's gr00t-adapter / gr00t-policy and Python's meshnn.gr00t call
// these). Their configs, options, plan and outputs: meshnn/gr00t_config.h.
//
// Life of a load: the checkpoint is opened once (mmapped; a folder's shards each); the config (a
// folder's config.json, the checkpoint metadata, or an explicit JSON, read strictly), the slot
// layout of the token types, the head split over the mesh and every checkpoint key and shape are
// validated before any weight is converted or packed. Then each device of the mesh packs its head
// slice once (one SPMD launch); these packed runners are the immutable weights.
//
// Life of a call: one SPMD launch of the mesh (local: one thread per device; MPI: this process is
// its rank's device, every rank makes the same calls in the same order). Each device takes a
// runner of its slice from a pool (weights shared, plans, scratch and K/V buffers its own), so
// concurrent calls on one object run in parallel and give the serial results; under MPI calls are
// serialised. A call blocks until its output is ready; every input is validated before compute.
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
#include "meshnn/gr00t_config.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::gr00t {

// Where a loaded adapter / policy runs and how it reads its config; fixed at load (each device
// packs the slice of its heads).
struct LoadOptions {
  // "1x1", or "1xN" / "Nx1": attention heads split over the N devices of the axis of extent > 1.
  std::string mesh = "1x1";
  Backend backend = Backend::local;  // mpi: this process is one rank of an mpiexec launch
  int threads = 0;                   // OpenMP threads per device; 0 = cores / devices
  // A JSON config (Isaac-GR00T style, see Config::from_json) replacing the checkpoint's own (a
  // checkpoint folder's config.json, or a file's "config" metadata); "" = the checkpoint's over
  // the version's defaults.
  std::string config_json;
  std::string config_path;  // the same from a JSON file (at most one of the two)
  // Config fields meshnn does not know are logged (warn) and ignored instead of refused (known
  // fields are checked either way). The CLI's --allow-unknown-config.
  bool allow_unknown_config = false;
};

// The checkpoint as tensors in memory (tests, converted models): what a .safetensors file holds.
struct Checkpoint {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;  // "config", "gr00t_version", …
};

// The VL adapter (vlln → VL-SA → gather → hoisted cross K/V, and the state encoder).
class Adapter {
 public:
  // path: an Isaac-GR00T action head .safetensors (config in its "config" metadata), or a
  // Hugging Face checkpoint folder: config.json + model.safetensors, or sharded
  // model-0000k-of-0000n.safetensors with model.safetensors.index.json (every shard mmapped, the
  // index checked against them; io/sharded_safetensors.h). Head keys under "action_head." (or a
  // LeRobot copy's prefix; the backbone's keys are ignored); token_types: (S) | (1, S) integers 0
  // text / 1 image / 2 padding (fixes the slot layout); options.mesh_axis is set from load.mesh.
  static Adapter load(const std::string& path, Version version, const Tensor& token_types,
                      const AdapterOptions& options = {}, const LoadOptions& load = {});
  static Adapter load(const Checkpoint& checkpoint, Version version, const Tensor& token_types,
                      const AdapterOptions& options = {}, const LoadOptions& load = {});
  // Everything load() checks, without packing: → the plan of device 0 (what --describe prints).
  static AdapterPlan validate(const std::string& path, Version version, const Tensor& token_types,
                              const AdapterOptions& options = {}, const LoadOptions& load = {});

  // features: (1, S, D) | (S, D) token rows, or (1, 1, S_pad, D) already in the slot layout, f32
  // finite; vl_mask: (S_pad) 0/1 key-valid mask, undefined = the layout's (when the version has
  // VL-SA); state: (1, 1, d) | (1, d) | (d) or undefined (no state encoder run).
  // → VlAdapter::forward's outputs as copies the caller owns, with every head's K/V
  // (1, Nh, L_pad, Dh) gathered from the mesh; every rank of an MPI launch gets them all.
  AdapterOutputs run(const Tensor& features, const Tensor& vl_mask, const Tensor& state,
                     int embodiment) const;
  // The command line's output file, by name: dit_encoder_hidden_states (1, S, D) token rows,
  // vl_set.<set>, kv.<block>.k / .v, state_features, tap.<name> (token rows).
  std::map<std::string, Tensor> named_tensors(const AdapterOutputs& out) const;

  const AdapterPlan& plan() const;  // device 0's (MPI: this rank's)
  std::string describe() const;     // VlAdapter::describe of device 0's runner (JSON)
  const Config& config() const;
  const SlotLayout& layout() const;
  Version version() const;
  const MeshConfig& mesh() const;

  struct Impl;

 private:
  explicit Adapter(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// The policy after the backbone: adapter + action head + K Euler steps → an action chunk.
class Policy {
 public:
  // As Adapter::load; the head's config (ActionHeadConfig) comes from the same JSON. The layout
  // must hold a token of every key set the cross blocks read (N1.6 / N1.7: text and image).
  static Policy load(const std::string& path, Version version, const Tensor& token_types,
                     const PolicyOptions& options = {}, const LoadOptions& load = {});
  static Policy load(const Checkpoint& checkpoint, Version version, const Tensor& token_types,
                     const PolicyOptions& options = {}, const LoadOptions& load = {});

  // features: as Adapter::run; state: (1, 1, d) | (1, d) | (d), d ≤ max_state_dim, finite;
  // embodiment: 0 … max_num_embodiments − 1; noise: (1, T, A) finite, or undefined to draw
  // seeded_noise(T, A, seed); steps: 1 … num_timestep_buckets, 0 = the config's.
  // velocities: when non-null, receives each step's velocity (1, T, A).
  // → actions (1, T, A) f32 in the model's normalised action space (every MPI rank gets them).
  Tensor get_action(const Tensor& features, const Tensor& vl_mask, const Tensor& state,
                    int embodiment, const Tensor& noise = Tensor(), uint64_t seed = 0,
                    int steps = 0, std::vector<Tensor>* velocities = nullptr) const;

  std::string describe() const;  // ActionHead::describe of device 0's runner (JSON)
  const AdapterPlan& plan() const;
  const Config& config() const;
  const ActionHeadConfig& head_config() const;
  const SlotLayout& layout() const;
  Version version() const;
  const MeshConfig& mesh() const;

  struct Impl;

 private:
  explicit Policy(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace meshnn::gr00t
