// The collectives over a mesh axis on either communicator: the descriptor agreement every one
// starts with, all-gather and reduce-scatter (neighbor_pad and the halo exchange:
// ccl_neighbor_pad.cc).
#include "meshnn/mesh/ccl.h"

#include <cstring>

#include "mesh/ccl_ops.h"
#include "meshnn/core/error.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn {

namespace mesh_detail {

const char* op_name(int32_t op) {
  switch (op) {
    case kAllGather:
      return "all_gather";
    case kReduceScatter:
      return "reduce_scatter";
    case kNeighborPad:
      return "neighbor_pad";
    default:
      return "collective";
  }
}

Shape desc_shape(const OpDesc& d) { return Shape(d.shape, d.shape + d.rank); }

OpDesc make_desc(int32_t op, const Tensor& t, int device, std::initializer_list<int64_t> args) {
  OpDesc d;
  d.op = op;
  d.rank = t.rank();
  d.dtype = static_cast<int32_t>(t.dtype());
  d.device = device;
  for (int i = 0; i < t.rank() && i < kMaxRank; ++i) d.shape[i] = t.shape()[i];
  int i = 0;
  for (int64_t a : args) d.args[i++] = a;
  return d;
}

int norm_dim(int64_t dim, int r, const char* what) {
  MESHNN_CHECK_AS(ShapeError, dim >= -r && dim < r, what, " ", dim, " out of range for a rank-", r,
                  " tensor");
  return static_cast<int>(dim < 0 ? dim + r : dim);
}

void check_rank(const OpDesc& d) {
  MESHNN_CHECK_AS(ShapeError, d.rank >= 1 && d.rank <= kMaxRank, "tensor rank ", d.rank,
                  " outside 1..", kMaxRank);
}

void validate_all(const std::vector<OpDesc>& all, const CheckFn& check) {
  const int n = static_cast<int>(all.size());
  for (const OpDesc& d : all) {
    const std::string where = detail::concat(op_name(d.op), ": device ", d.device, ": ");
    try {
      check(d, n);
    } catch (const ShapeError& e) {
      throw ShapeError(where + e.what());
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(where + e.what());
    }
  }
  const OpDesc& a = all[0];
  for (const OpDesc& b : all) {
    MESHNN_CHECK_AS(CommError, b.op == a.op, "device ", b.device, " called ", op_name(b.op),
                    " while device ", a.device, " called ", op_name(a.op));
    const std::string pair = detail::concat(op_name(a.op), ": device ", b.device, " has ");
    MESHNN_CHECK_AS(InvalidArgument, b.dtype == a.dtype, pair, "dtype ",
                    dtype_name(static_cast<DType>(b.dtype)), " but device ", a.device, " has ",
                    dtype_name(static_cast<DType>(a.dtype)));
    MESHNN_CHECK_AS(ShapeError, desc_shape(b) == desc_shape(a), pair, "shape ",
                    shape_str(desc_shape(b)), " but device ", a.device, " has ",
                    shape_str(desc_shape(a)));
    MESHNN_CHECK_AS(InvalidArgument, std::memcmp(b.args, a.args, sizeof(a.args)) == 0, pair,
                    "different op arguments (dim / pads / axes) than device ", a.device);
  }
}

void agree(Communicator* c, const OpDesc& mine, const void* data, const CheckFn& check) {
  validate_all(c->exchange(mine, data), check);
}

int64_t prod(const Shape& s, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; ++i) p *= s[i];
  return p;
}

std::string key_of(const char* op, const Shape& s, DType dt, const std::vector<int64_t>& args) {
  std::string k = detail::concat(op, shape_str(s), dtype_name(dt));
  for (int64_t a : args) k += detail::concat(",", a);
  return k;
}

Region rows_region(const Shape& s, int d, size_t esize, int64_t r0, int64_t len) {
  const int64_t B = prod(s, d + 1, static_cast<int>(s.size())) * static_cast<int64_t>(esize);
  Region r;
  r.offset = r0 * B;
  r.count = prod(s, 0, d);
  r.block = len * B;
  r.stride = s[d] * B;
  return r;
}

}  // namespace mesh_detail

using namespace mesh_detail;

// ---- CclManager ---------------------------------------------------------------------------

CclManager::CclManager(Device& device, std::vector<std::shared_ptr<Communicator>> comms)
    : device_(device), comms_(std::move(comms)) {
  comms_.resize(3);
}

CclManager::~CclManager() = default;

int CclManager::axis_index(int axis) const {
  MESHNN_CHECK(axis == 0 || axis == 1, "mesh axis must be 0 or 1, got ", axis);
  return axis;
}

int CclManager::axis_size(int axis) const { return device_.axis_size(axis); }

Communicator* CclManager::comm(int axis) const { return comms_[axis].get(); }

Tensor CclManager::pooled(const std::string& key, const Shape& shape, DType dtype) {
  PoolEntry& e = pool_[key];
  Tensor& b = e.buf[e.next];
  // Allocation is local: peers only read buffers published at a later exchange (itself a
  // barrier), so a separate "barrier after allocating a persistent buffer" is not needed.
  if (!b.defined()) b = Tensor::empty(shape, dtype);
  Tensor out = b;
  e.next ^= 1;
  return out;
}

void CclManager::reset() { pool_.clear(); }

void CclManager::barrier(int axis) {
  Communicator* c = axis == -1 ? comms_[2].get() : comm(axis_index(axis));
  if (c) c->barrier();
}

// ---- all_gather ---------------------------------------------------------------------------

Tensor CclManager::all_gather(const Tensor& t, int dim, int axis, bool persistent) {
  MESHNN_CHECK(t.defined(), "all_gather: undefined tensor");
  const int ax = axis_index(axis);
  auto check = [](const OpDesc& d, int) {
    check_rank(d);
    norm_dim(d.args[0], d.rank);
  };
  const OpDesc mine = make_desc(kAllGather, t, device_.rank(), {dim, ax});
  Communicator* c = comm(ax);
  if (!c) {
    check(mine, 1);
    return t;
  }
  agree(c, mine, t.raw(), check);
  const int d = norm_dim(dim, t.rank());
  const int n = c->size();
  Shape os = t.shape();
  os[d] *= n;
  Tensor out = persistent ? pooled(key_of("ag", t.shape(), t.dtype(), {d, ax}), os, t.dtype())
                          : Tensor::empty(os, t.dtype());
  const int64_t outer = prod(t.shape(), 0, d);
  const int64_t chunk = prod(t.shape(), d, t.rank()) * static_cast<int64_t>(dtype_size(t.dtype()));
  c->all_gather(t.raw(), out.raw(), outer, chunk);
  traffic_.gather_calls += 1;
  traffic_.gather_bytes += (n - 1) * outer * chunk;
  return out;
}

// ---- reduce_scatter -----------------------------------------------------------------------

Tensor CclManager::reduce_scatter(const Tensor& t, int dim, int axis, bool persistent) {
  MESHNN_CHECK(t.defined(), "reduce_scatter: undefined tensor");
  const int ax = axis_index(axis);
  auto check = [](const OpDesc& d, int n) {
    check_rank(d);
    const int dd = norm_dim(d.args[0], d.rank);
    const auto dt = static_cast<DType>(d.dtype);
    MESHNN_CHECK_AS(InvalidArgument, dt == DType::f32 || dt == DType::bf16,
                    "reduce_scatter sums f32 or bf16 tensors, got ", dtype_name(dt));
    MESHNN_CHECK_AS(ShapeError, d.shape[dd] % n == 0, "dim ", dd, " of shape ",
                    shape_str(desc_shape(d)), " does not split evenly over ", n, " devices");
  };
  const OpDesc mine = make_desc(kReduceScatter, t, device_.rank(), {dim, ax});
  Communicator* c = comm(ax);
  if (!c) {
    check(mine, 1);
    return t;
  }
  agree(c, mine, t.raw(), check);
  const int d = norm_dim(dim, t.rank());
  const int n = c->size();
  Shape os = t.shape();
  os[d] /= n;
  Tensor out = persistent ? pooled(key_of("rs", t.shape(), t.dtype(), {d, ax}), os, t.dtype())
                          : Tensor::empty(os, t.dtype());
  const int64_t outer = prod(t.shape(), 0, d);
  const int64_t chunk = prod(os, d, t.rank());
  c->reduce_scatter(t.raw(), out.raw(), t.dtype(), outer, chunk);
  return out;
}

}  // namespace meshnn
