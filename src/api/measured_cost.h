// What a call of each audio model costs, for the scale-out rule (runtime/scale_rule.h) that
// `--mesh auto` follows on the mpi backend: the runtime names no model, so each model's call hands
// it its cost (runtime::MeshRequest::cost).
#pragma once

#include <string>

#include "runtime/scale_rule.h"

namespace meshnn::api {

// Per model kind ("ltx-2.3", "ltx-2", "bigvgan", "minimax-h3") for a call producing `seconds` of
// audio per item: the compute measured on one device (docs/scale_out.md's table, real-size
// models, 1 thread), the halo bytes and exchanges derived from the graph (`meshnn-bench scale`,
// api/scale_account.h) plus the output's gather. Unknown kinds cost like LTX-2.3 (the most
// halo-bound).
runtime::CallCost measured_cost(const std::string& kind, double seconds);

}  // namespace meshnn::api
