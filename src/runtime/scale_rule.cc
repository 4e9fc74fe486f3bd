#include "runtime/scale_rule.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "core/env.h"
#include "meshnn/core/error.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::runtime {

LinkProfile parse_link(const std::string& text) {
  if (text == "shm") return {"shm", 10e9, 1e-6};  // one host: Open MPI's shared memory
  if (text == "100g") return {"100g", 100e9 / 8, 5e-6};
  if (text == "10g") return {"10g", 10e9 / 8, 50e-6};
  if (text == "1g") return {"1g", 1e9 / 8, 200e-6};
  // GBITS:MICROSECONDS, each digits with an optional fraction (no sign, no exponent)
  const auto number = [](std::string_view t) -> std::optional<double> {
    if (t.size() > 16) return std::nullopt;  // keeps std::stod in range
    const auto dot = t.find('.');
    const auto digits = [](std::string_view d) {
      return !d.empty() &&
             std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (!digits(t.substr(0, dot)) || (dot != std::string_view::npos && !digits(t.substr(dot + 1))))
      return std::nullopt;
    return std::stod(std::string(t));
  };
  const std::string_view view(text);
  if (const auto colon = view.find(':'); colon != std::string_view::npos) {
    const auto gbit = number(view.substr(0, colon)), us = number(view.substr(colon + 1));
    if (gbit && us && *gbit > 0 && *gbit <= 1e4 && *us <= 1e6)
      return {text, *gbit * 1e9 / 8, *us * 1e-6};
  }
  throw InvalidArgument(detail::concat(
      "link '", text,
      "': expected shm, 100g, 10g, 1g or GBITS:MICROSECONDS (e.g. 25:10; 0 < GBITS ≤ 10000, "
      "MICROSECONDS ≤ 10⁶) (MESHNN_LINK)"));
}

LinkProfile auto_link() {
  if (const auto v = env_value(EnvSwitch::link)) return parse_link(*v);
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (local && world && std::string(local) == world) return parse_link("shm");
  return parse_link("10g");
}

ScalePlan plan_scale(int devices, int64_t items, const CallCost& cost, const LinkProfile& link) {
  ScalePlan plan;
  if (devices <= 1) {
    plan.kind = SplitKind::items;
    plan.reason = "one device";
    return plan;
  }
  const double p = devices;
  const double link_s =
      cost.rounds * link.latency_seconds + cost.halo_bytes / link.bytes_per_second;
  const double split_s = cost.compute_seconds / p + link_s;
  plan.time_split_efficiency = split_s > 0 ? cost.compute_seconds / (p * split_s) : 0;
  if (items >= devices && items % devices == 0) {
    plan.kind = SplitKind::items;
    plan.parts = devices;
    plan.reason = detail::concat(items, " independent items over ", devices,
                                 " devices: no halos (items before time)");
  } else if (plan.time_split_efficiency >= kMinTimeSplitEfficiency) {
    plan.kind = SplitKind::time;
    plan.parts = devices;
    plan.reason = detail::concat("time split over ", devices, " devices on link ", link.name,
                                 ": predicted efficiency ", plan.time_split_efficiency);
  } else {
    plan.kind = SplitKind::replicas;
    plan.reason = detail::concat(
        "a time split over ", devices, " devices on link ", link.name, " would spend ", link_s,
        " s on halos (", cost.rounds, " exchanges, ", cost.halo_bytes, " bytes) against ",
        cost.compute_seconds / p, " s of compute per device: predicted efficiency ",
        plan.time_split_efficiency, " < ", kMinTimeSplitEfficiency,
        "; run replicas instead (one process per host behind a balancer: docs/scale_out.md)");
  }
  return plan;
}

MeshConfig auto_mpi_mesh(const std::string& what, double seconds, const CallCost& per_item,
                         int64_t items) {
  // The launch's size from Open MPI's environment (no MPI call: a process not started by
  // mpiexec is refused here instead of becoming a 1-rank world).
  const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
  MESHNN_CHECK_AS(InvalidArgument, world != nullptr,
                  "mesh \"auto\" on the mpi backend needs an mpiexec.openmpi launch "
                  "(OMPI_COMM_WORLD_SIZE is not set); give the mesh (RxC = ranks)");
  const int n = std::atoi(world);
  MESHNN_CHECK_AS(InvalidArgument, n >= 1, "OMPI_COMM_WORLD_SIZE '", world, "' is not a size");
  CallCost cost = per_item;  // compute and halos grow with the items
  cost.compute_seconds *= static_cast<double>(std::max<int64_t>(items, 1));
  cost.halo_bytes *= static_cast<double>(std::max<int64_t>(items, 1));
  const ScalePlan plan = plan_scale(n, items, cost, auto_link());
  MESHNN_CHECK_AS(InvalidArgument, plan.kind != SplitKind::replicas,
                  "mesh \"auto\" on the mpi backend (", what, ", ", seconds, " s): ", plan.reason,
                  "; or give the mesh (RxC = ranks) to split anyway");
  return parse_mesh("1x" + std::to_string(n));
}

}  // namespace meshnn::runtime
