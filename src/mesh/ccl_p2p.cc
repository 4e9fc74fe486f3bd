// CclManager::send / recv: the point-to-point hand-over of pipeline stages (rules in
// include/meshnn/mesh/ccl.h and docs/mesh.md). Validation is local (only two devices take part,
// there is no group-wide descriptor exchange); the backends carry shape and dtype.
#include "mesh/communicator.h"
#include "meshnn/core/error.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn {

namespace {

// The group communicator for a point-to-point call and this device's index in it.
mesh_detail::Communicator* p2p_comm(
    const std::vector<std::shared_ptr<mesh_detail::Communicator>>& c, const Device& d, int axis,
    int peer, const char* op) {
  MESHNN_CHECK(axis == 0 || axis == 1 || axis == -1, op, ": mesh axis must be 0, 1 or -1 (whole ",
               "mesh), got ", axis);
  const int n = axis == -1 ? d.mesh().size() : d.axis_size(axis);
  const int me = axis == -1 ? d.rank() : d.coord(axis);
  MESHNN_CHECK(n > 1, op, " on mesh axis ", axis, " of extent 1: there is no other device");
  MESHNN_CHECK(peer >= 0 && peer < n && peer != me, op, ": peer ", peer, " on mesh axis ", axis,
               " must be another device of the group (0..", n - 1, ", this device is ", me, ")");
  mesh_detail::Communicator* comm = c[axis == -1 ? 2 : axis].get();
  MESHNN_CHECK(comm, op, ": no communicator for mesh axis ", axis);
  return comm;
}

}  // namespace

// t: any shape / dtype → the same tensor on device `to` of the group along `axis`
void CclManager::send(const Tensor& t, int to, int axis) {
  MESHNN_CHECK(t.defined(), "send: undefined tensor");
  MESHNN_CHECK_AS(ShapeError, t.rank() <= kMaxRank, "send: rank ", t.rank(), " above ", kMaxRank);
  p2p_comm(comms_, device_, axis, to, "send")->send(t, to);
  traffic_.p2p_sends += 1;
  traffic_.p2p_bytes += static_cast<int64_t>(t.nbytes());
}

Tensor CclManager::recv(int from, int axis) {
  return p2p_comm(comms_, device_, axis, from, "recv")->recv(from);
}

}  // namespace meshnn
