#include "api/scale_account.h"

#include <chrono>
#include <map>
#include <mutex>

#include "core/enum_names.h"
#include "meshnn/core/error.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::api {
namespace {

using Kind = ExchangeRecord::Kind;

using LayerKind = models::LayerDesc::Kind;
constexpr EnumNames<LayerKind, 4> kKindNames{"layer kind",
                                             {{LayerKind::conv1d, "conv1d"},
                                              {LayerKind::conv2d, "conv2d"},
                                              {LayerKind::conv_transpose1d, "conv_transpose1d"},
                                              {LayerKind::activation, "activation"}}};
const char* kind_name(LayerKind k) { return kKindNames.name(k, "tensor"); }

// A layer's description entry by its name as the layer carries it (convs: the key; activations:
// the key and a '.'), with the model input rows its rate refers to.
struct Described {
  const models::LayerDesc* desc = nullptr;
  int64_t frames = 0;
};

Described find_layer(const std::map<std::string, Described>& by_key, std::string name) {
  if (!name.empty() && name.back() == '.') name.pop_back();
  const auto it = by_key.find(name);
  return it == by_key.end() ? Described{} : it->second;
}

}  // namespace

int64_t received_bytes(const ExchangeRecord& r, int index, int parts) {
  if (parts <= 1) return 0;
  if (r.kind == Kind::halo)
    return ((index > 0 ? r.left : 0) + (index < parts - 1 ? r.right : 0)) * r.row_bytes;
  return static_cast<int64_t>(parts - 1) * r.shard_rows * r.row_bytes;
}

ScaleAccount account_run(const std::string& model, double seconds, int devices,
                         const std::vector<DescribedLayers>& layers,
                         const std::function<void(int, const TimeShard&)>& call) {
  MESHNN_CHECK_AS(InvalidArgument, devices >= 2 && devices <= 64,
                  "scale account: devices must be 2..64 along time, got ", devices);
  ScaleAccount a;
  a.model = model;
  a.seconds = seconds;
  a.devices = devices;
  std::vector<std::vector<ExchangeRecord>> logs(devices);
  a.ccl.resize(devices);
  MeshConfig mc;
  mc.rows = 1;
  mc.cols = devices;
  mc.threads_per_device = 1;
  const auto t0 = std::chrono::steady_clock::now();
  run_spmd(mc, [&](Device& d) {
    TimeShard ts(d, {1});
    ts.record_into(&logs[d.rank()]);
    d.ccl().reset_traffic();
    call(d.rank(), ts);
    a.ccl[d.rank()] = d.ccl().traffic();
  });
  a.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::map<std::string, Described> by_key;
  for (const DescribedLayers& l : layers) {
    for (const models::LayerDesc& d : l.desc) by_key[d.key] = {&d, l.frames};
    a.flops += models::flops(l.desc, l.frames);
  }
  const int p = devices;
  for (const ExchangeRecord& r : logs[0]) {
    if (r.kind == Kind::tail_row) {
      a.tail_rows += 1;
      a.tail_bytes += static_cast<double>(p) * received_bytes(r, 0, p);
      continue;
    }
    if (r.kind == Kind::gather) {
      a.gather_bytes += static_cast<double>(p) * received_bytes(r, 0, p);
      continue;
    }
    ExchangeRow row;
    row.layer = r.layer;
    row.row_shape = r.row_shape;
    row.left = r.left;
    row.right = r.right;
    row.row_bytes = r.row_bytes;
    row.bytes_per_device = static_cast<double>((r.left + r.right) * r.row_bytes);
    row.bytes_line = static_cast<double>(p - 1) * row.bytes_per_device;
    const Described d = find_layer(by_key, r.layer);
    row.kind = d.desc ? kind_name(d.desc->kind) : r.layer;
    if (d.desc) row.flops = models::flops({*d.desc}, d.frames);
    a.halo_bytes += row.bytes_line;
    a.rows.push_back(std::move(row));
  }
  for (int i = 0; i < p; ++i) {
    int64_t halo = 0, gather = 0;
    for (const ExchangeRecord& r : logs[i])
      (r.kind == Kind::halo ? halo : gather) += received_bytes(r, i, p);
    a.logged_halo_bytes.push_back(halo);
    a.logged_gather_bytes.push_back(gather);
  }
  return a;
}

runtime::CallCost account_cost(const ScaleAccount& a, double compute_seconds) {
  runtime::CallCost c;
  c.compute_seconds = compute_seconds;
  c.halo_bytes = a.halo_bytes + a.tail_bytes + a.gather_bytes;
  // The rule's rounds are the halo exchanges (its per-exchange cost was measured per halo
  // exchange); the few tail-row fetches and the one gather ride on that measurement.
  c.rounds = static_cast<double>(a.rows.size());
  return c;
}

}  // namespace meshnn::api
