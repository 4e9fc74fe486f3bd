// CclManager::neighbor_pad: halo rows from the neighbours along one mesh axis, the edge rule at
// the ends of the line.
#include <cstring>

#include "mesh/ccl_ops.h"
#include "meshnn/core/error.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn {

using namespace mesh_detail;

namespace {

// Descriptor arguments of neighbor_pad: {dim, pad_left, pad_right, mode (0 zeros, 1 replicate),
// axis}.
enum NpArg { kDim, kPadLeft, kPadRight, kMode, kAxis, kNpArgs };

// Shape checks of neighbor_pad on one device's descriptor.
void check_np(const OpDesc& d, int) {
  check_rank(d);
  const Shape s = desc_shape(d);
  const int dim = norm_dim(d.args[kDim], d.rank, "pad dim");
  const int64_t pl = d.args[kPadLeft], pr = d.args[kPadRight];
  MESHNN_CHECK_AS(InvalidArgument, pl >= 0 && pr >= 0, "negative pad (", pl, ", ", pr, ") on dim ",
                  dim);
  MESHNN_CHECK_AS(ShapeError, pl <= s[dim] && pr <= s[dim], "pad (", pl, ", ", pr, ") on dim ", dim,
                  " exceeds the shard length ", s[dim]);
}

void zero_region(void* buf, const Region& r) {
  auto* p = static_cast<uint8_t*>(buf) + r.offset;
  for (int64_t i = 0; i < r.count; ++i) std::memset(p + i * r.stride, 0, r.block);
}

// Rows [dst_r, dst_r + len) along d ← copies of row src_r (replicate padding).
void replicate_rows(void* buf, const Shape& s, int d, size_t esize, int64_t src_r, int64_t dst_r,
                    int64_t len) {
  for (int64_t j = 0; j < len; ++j)
    mesh_detail::copy_region(buf, buf, rows_region(s, d, esize, src_r, 1),
                             rows_region(s, d, esize, dst_r + j, 1));
}

// Edge rule at the true ends of the line only (first / last member of the group): zeros or
// copies of the end row into the pl rows before and the pr rows after the S rows along dd.
void pad_line_ends(Tensor& out, const Shape& os, int dd, size_t es, int64_t S, int64_t pl,
                   int64_t pr, bool replicate, bool first, bool last) {
  if (first && pl > 0) {
    if (!replicate)
      zero_region(out.raw(), rows_region(os, dd, es, 0, pl));
    else
      replicate_rows(out.raw(), os, dd, es, pl, 0, pl);
  }
  if (last && pr > 0) {
    if (!replicate)
      zero_region(out.raw(), rows_region(os, dd, es, pl + S, pr));
    else
      replicate_rows(out.raw(), os, dd, es, pl + S - 1, pl + S, pr);
  }
}

}  // namespace

// ---- neighbor_pad -------------------------------------------------------------------------

Tensor CclManager::neighbor_pad(const Tensor& t, int dim, int64_t pad_left, int64_t pad_right,
                                PadMode mode, int axis, bool persistent) {
  MESHNN_CHECK(t.defined(), "neighbor_pad: undefined tensor");
  const int ax = axis_index(axis);
  const OpDesc mine = make_desc(kNeighborPad, t, device_.rank(),
                                {dim, pad_left, pad_right, mode == PadMode::zeros ? 0 : 1, ax});
  Communicator* c = comm(ax);
  bool local_ok = true;
  try {
    check_np(mine, 1);
  } catch (const ShapeError& e) {
    if (!c) throw ShapeError(std::string("neighbor_pad: ") + e.what());
    local_ok = false;
  } catch (const InvalidArgument& e) {
    if (!c) throw InvalidArgument(std::string("neighbor_pad: ") + e.what());
    local_ok = false;
  }
  // The validation rides on the exchange below (one barrier fewer); a device that failed its own
  // check first agrees with the others, so every device raises the same error.
  if (c && !local_ok) agree(c, mine, nullptr, check_np);

  const int r = t.rank();
  const size_t es = dtype_size(t.dtype());
  const int dd = norm_dim(dim, r);
  const int64_t S = t.shape()[dd];
  Shape os = t.shape();
  os[dd] += pad_left + pad_right;
  Tensor out = persistent ? pooled(key_of("np", t.shape(), t.dtype(),
                                          std::vector<int64_t>(mine.args, mine.args + kNpArgs)),
                                   os, t.dtype())
                          : Tensor::empty(os, t.dtype());
  // Interior: t → out[pad_left : pad_left + S].
  mesh_detail::copy_region(t.raw(), out.raw(), rows_region(t.shape(), dd, es, 0, S),
                           rows_region(os, dd, es, pad_left, S));
  const int n = axis_size(ax);
  const int i = device_.coord(ax);
  pad_line_ends(out, os, dd, es, S, pad_left, pad_right, mode == PadMode::replicate, i == 0,
                i == n - 1);
  if (!c) return out;
  // Publish the output (interior and line ends done), then pull the neighbours' edge rows.
  validate_all(c->exchange(mine, out.raw()), check_np);
  const int64_t pl = pad_left, pr = pad_right;
  const Region prev = rows_region(os, dd, es, 0, pl), next = rows_region(os, dd, es, pl + S, pr);
  c->halo(out.raw(), rows_region(os, dd, es, pl, pr), rows_region(os, dd, es, pl + S - pl, pl),
          prev, next);
  // What the transport fills from devices i − 1 and i + 1 (none past the line's ends).
  traffic_.halo_bytes +=
      (i > 0 ? prev.count * prev.block : 0) + (i < n - 1 ? next.count * next.block : 0);
  traffic_.halo_calls += 1;
  return out;
}

}  // namespace meshnn
