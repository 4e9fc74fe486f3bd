// Time-sharded execution of the audio layers.
//
// A sequence of `real` rows is padded up to `padded = parts · S` rows and device i of the time
// line holds rows [i·S, (i+1)·S) as a (B, S, …) tensor (time = dim 1). The padded tail rows hold
// unspecified values; every op below masks them (zeros before zero-padded convs, the activation
// clamps at the real end) so that the real rows equal the unsharded result exactly. Because the
// shards are always even, a layer that changes the rate (×s transposed conv, ×3 resampler, the
// mel-VAE's ×2 upsample) keeps every device's shard the same size: no re-partitioning.
//
// Halo rows come from the neighbours in time order: over one mesh axis through
// CclManager::neighbor_pad; over both axes the mesh is one line of rows·cols devices in row-major
// time order and halos come from an edge exchange (an all-gather of each device's edge rows), so an
// interior device always receives rows from the devices that hold the adjacent time ranges. (One
// exchange per axis would hand device (1, 0) rows from (0, 0), which does not hold the preceding
// range.)
//
// A default-constructed TimeShard is the unsharded 1×1 path: halos are local zero / replicate pads
// and no communication code runs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "meshnn/core/tensor.h"
#include "meshnn/layers/activation.h"
#include "meshnn/layers/conv.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "meshnn/ops/filter_design.h"

namespace meshnn {

// Can a sequence of `frames` rows be split over `parts` devices with at least `min_rows` each and
// a real row on the last one?
bool time_split_fits(int64_t frames, int parts, int64_t min_rows);
// ShapeError naming the largest device count that fits when `parts` does not; `what` names the
// sequence ("latent", "mel").
void check_time_split(int64_t frames, int parts, int64_t min_rows, const char* what);

// One exchange of a time-sharded run as the TimeShard of one device asked for it (accounting:
// src/api/scale_account.h). Filled only when a log is attached (TimeShard::record_into).
struct ExchangeRecord {
  enum class Kind {
    halo,      // rows from the neighbours: `left` from the previous device, `right` from the next
    tail_row,  // the last real row, one row from every device (an all-gather)
    gather,    // the output shards, every device's `shard_rows` rows (an all-gather)
  };
  Kind kind = Kind::halo;
  std::string layer;       // the layer whose halo it is (halo only)
  int64_t left = 0;        // halo rows asked from the previous device
  int64_t right = 0;       // halo rows asked from the next device
  int64_t row_bytes = 0;   // one time row of the shard over the batch: B × elements × dtype size
  int64_t shard_rows = 0;  // rows of the shard that was exchanged (S)
  std::vector<int64_t> row_shape;  // the shard's dims after time (channels, or width × channels)
};

class TimeShard {
 public:
  TimeShard() = default;
  // Time split over `axes` of `device` (1 or 2 distinct axes; with 2, axes[0] is the major one).
  TimeShard(Device& device, std::vector<int> axes);

  int parts() const { return parts_; }
  int index() const { return index_; }
  bool sharded() const { return parts_ > 1; }

  // Rows per device for a real length: ceil(real / parts).
  int64_t shard_rows(int64_t real) const { return (real + parts_ - 1) / parts_; }
  // Global row of this device's first row for shards of `rows` rows.
  int64_t row0(int64_t rows) const { return index_ * rows; }

  // Replicated full (B, T, …) → this device's (B, S, …) shard, S = shard_rows(T); the padded
  // tail rows are zeros.
  Tensor partition(const Tensor& full) const;
  // Shards (B, S, …) → the full (B, real, …) on every device (padded tail dropped).
  Tensor gather(const Tensor& x, int64_t real) const;

  // x: (B, S, …) → (B, left + S + right, …): neighbour rows inside the line, `mode` at its ends
  // (replicate copies this device's own first / last row). left, right ≤ S.
  // `layer` names the layer for the exchange log.
  Tensor halo(const Tensor& x, int64_t left, int64_t right, PadMode mode,
              std::string_view layer = {}) const;

  // The real row with global index `real − 1`, from whichever device holds it. → (B, 1, …).
  Tensor last_real_row(const Tensor& x, int64_t real) const;

  // Every exchange this TimeShard (and its copies) makes is appended to `log` (null: none). The
  // log must outlive the calls; one log per device thread.
  void record_into(std::vector<ExchangeRecord>* log) { log_ = log; }

 private:
  void record(ExchangeRecord::Kind kind, const Tensor& x, int64_t left, int64_t right,
              std::string_view layer) const;

  Tensor edge_exchange(const Tensor& x, int64_t left, int64_t right, PadMode mode) const;

  Device* device_ = nullptr;
  std::vector<int> axes_;
  int parts_ = 1;
  int index_ = 0;
  std::vector<ExchangeRecord>* log_ = nullptr;
};

// ---- sharded layer forms. Each takes this device's (B, S, C) shard of a sequence with `real`
// real rows and returns its shard of the output sequence (real_out = rate · real rows). ----------

// Conv1d (any padding mode; stride s needs S divisible by s) with the halo given: the rows taken
// from each neighbour (zeros at the sequence ends), as the graph's node asks them
// (graph::halo_of of its reach; on one device the node's pads). On one device with the layer's
// own pads the layer pads itself (no padded copy).
// x: (B, S, C_in) → (B, (S + halo_left + halo_right − K)/s + 1, C_out).
Tensor conv1d_sharded(Conv1d& conv, const Tensor& x, const TimeShard& ts, int64_t real,
                      int64_t halo_left, int64_t halo_right);
// Conv2d with time = H (stride 1 along H), the halo given as for conv1d_sharded.
// x: (B, S, W, C_in) → (B, S + halo_left + halo_right − K_h + 1, W_out, C_out).
Tensor conv2d_sharded(Conv2d& conv, const Tensor& x, const TimeShard& ts, int64_t real,
                      int64_t halo_left, int64_t halo_right);
// ConvTranspose1d via input halos (never a gather of the whole sequence); the halo is the one its
// graph node asks (graph::halo_of of its reach): enough input rows that every output row of the
// shard has all of its inputs. x: (B, S, C_in) → (B, s·S, C_out); needs (k − s) even and output
// exactly s · length.
Tensor conv_transpose1d_sharded(ConvTranspose1d& conv, const Tensor& x, const TimeShard& ts,
                                int64_t real, int64_t halo_left, int64_t halo_right);
// BigVGAN Activation1d. x: (B, S, C) → (B, S, C).
Tensor activation_sharded(const layers::AntiAliasedActivation& act, const Tensor& x,
                          const TimeShard& ts, int64_t real);
// Replicate-padded transposed-FIR upsampler (LTX hann ×3, BigVGAN kaiser ×2).
// x: (B, S, C) → (B, ratio·S, C).
Tensor upsample1d_sharded(const Tensor& x, std::span<const float> taps,
                          const ops::UpsampleGeometry& g, const TimeShard& ts, int64_t real);

}  // namespace meshnn
