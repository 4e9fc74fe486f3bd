// The per-layer account of a time-sharded call (docs/scale_out.md, "Per layer"): every exchange
// the run makes, with its layer, halo rows and bytes, and every layer's FLOPs. The exchanges are
// not computed beside the run: the sharded run itself is made on a local 1xP mesh with an
// exchange log attached to each device's TimeShard (layers/time_shard.h), so the halo rows are the
// ones the graph's nodes ask for; the collective layer's own traffic counters (CclTraffic) are
// taken in the same run as the cross-check.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "meshnn/layers/time_shard.h"
#include "meshnn/mesh/ccl.h"
#include "models/common/audio_description.h"
#include "runtime/scale_rule.h"

namespace meshnn::api {

// One time-sharded layer's exchange, per call.
struct ExchangeRow {
  std::string layer;  // checkpoint key of the layer (or the op: "upsample1d")
  std::string kind;   // conv1d | conv2d | conv_transpose1d | activation | upsample1d | ...
  std::vector<int64_t> row_shape;  // dims of one time row after the batch: (C) or (W, C)
  int64_t left = 0, right = 0;     // halo rows from the previous / next device
  int64_t row_bytes = 0;           // one time row over the batch (B × elements × 4)
  double bytes_per_device = 0;     // an interior device receives (left + right) · row_bytes
  double bytes_line = 0;           // every device of the line: (P − 1)(left + right) · row_bytes
  double flops = 0;                // the layer's FLOPs per call (convolutions; 0 otherwise)
};

struct ScaleAccount {
  std::string model;
  double seconds = 0;             // audio per call
  int devices = 2;                // P, along time
  std::vector<ExchangeRow> rows;  // the halo exchanges in run order (device 0's log)
  double halo_bytes = 0;          // Σ rows' bytes_line: halo bytes per call over the line
  int64_t tail_rows = 0;          // last-real-row fetches (one row from each device)
  double tail_bytes = 0;          // their bytes over the line
  double gather_bytes = 0;        // the final all-gather of the output over the line
  double flops = 0;               // every layer of the model per call (models::flops)
  // Per device: bytes received, from the log (the account) and from the collective layer.
  std::vector<int64_t> logged_halo_bytes, logged_gather_bytes;
  std::vector<CclTraffic> ccl;
  double run_seconds = 0;  // wall time of the sharded run
};

// Bytes device `index` of `parts` receives in the exchange `r` (halo: `left` rows from the
// previous device, `right` from the next, none past the line's ends; tail row and gather: every
// other device's shard of r.shard_rows rows).
int64_t received_bytes(const ExchangeRecord& r, int index, int parts);

// Runs `call(device_index, ts)` on every device of a local 1xP mesh (one thread each) with an
// exchange log on ts, and accounts the logs. `layers`: the model's description entries (FLOPs
// per layer by key) with the model input rows each entry's rate refers to.
struct DescribedLayers {
  models::ModelDesc desc;
  int64_t frames = 0;
};
ScaleAccount account_run(const std::string& model, double seconds, int devices,
                         const std::vector<DescribedLayers>& layers,
                         const std::function<void(int, const TimeShard&)>& call);

// The rule's cost of a call from an account: the measured one-device compute, the derived
// bytes (halos, tail rows and the gather, every direction) and the halo exchanges on the
// critical path.
runtime::CallCost account_cost(const ScaleAccount& a, double compute_seconds);

}  // namespace meshnn::api
