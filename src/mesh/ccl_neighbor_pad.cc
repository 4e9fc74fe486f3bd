// CclManager::neighbor_pad (halo rows from the neighbours along one or two mesh axes, the edge
// rule at the ends of the line), its halo-only form and halo_scatter.
#include <algorithm>
#include <cstring>

#include "mesh/ccl_ops.h"
#include "meshnn/core/error.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn {

using namespace mesh_detail;

namespace {

// ---- neighbor_pad plan ----------------------------------------------------------------------

struct NpArgs {
  int nd = 1;
  int64_t dim[2] = {0, 0};
  int64_t pl[2] = {0, 0};
  int64_t pr[2] = {0, 0};
  int64_t mode = 0;
  int64_t axis[2] = {0, 0};
  int64_t tfp = 0;
  int64_t lh = 0;
};

NpArgs np_from_desc(const OpDesc& d) {
  NpArgs a;
  a.nd = static_cast<int>(d.args[0]);
  a.dim[0] = d.args[1];
  a.dim[1] = d.args[2];
  a.pl[0] = d.args[3];
  a.pr[0] = d.args[4];
  a.pl[1] = d.args[5];
  a.pr[1] = d.args[6];
  a.mode = d.args[7];
  a.axis[0] = d.args[8];
  a.axis[1] = d.args[9];
  a.tfp = d.args[10];
  a.lh = d.args[11];
  return a;
}

// Shape checks of neighbor_pad / halo-only on one device's descriptor.
void check_np(const OpDesc& d, int) {
  check_rank(d);
  const NpArgs a = np_from_desc(d);
  const Shape s = desc_shape(d);
  int nd[2] = {0, 0};
  for (int i = 0; i < a.nd; ++i) {
    nd[i] = norm_dim(a.dim[i], d.rank, "pad dim");
    MESHNN_CHECK_AS(InvalidArgument, a.pl[i] >= 0 && a.pr[i] >= 0, "negative pad (", a.pl[i], ", ",
                    a.pr[i], ") on dim ", nd[i]);
    MESHNN_CHECK_AS(ShapeError, a.pl[i] <= s[nd[i]] && a.pr[i] <= s[nd[i]], "pad (", a.pl[i], ", ",
                    a.pr[i], ") on dim ", nd[i], " exceeds the shard length ", s[nd[i]]);
  }
  if (a.nd == 2)
    MESHNN_CHECK_AS(InvalidArgument, nd[0] != nd[1], "the two pad dims are both ", nd[0]);
  MESHNN_CHECK_AS(InvalidArgument, a.tfp >= 0 && a.lh >= 0, "t_front_pad ", a.tfp,
                  " and logical_h ", a.lh, " must be ≥ 0");
  if (a.tfp > 0) {
    MESHNN_CHECK_AS(ShapeError, nd[0] >= 1, "t_front_pad needs a dim before pad dim ", nd[0]);
    MESHNN_CHECK_AS(ShapeError, prod(s, 0, nd[0] - 1) == 1,
                    "t_front_pad needs every dim before the T dim to be 1 (batch 1), shape ",
                    shape_str(s));
  }
  if (d.op == kHaloOnly) {
    const int r = d.rank;
    MESHNN_CHECK_AS(ShapeError, nd[0] <= r - 2, "halo-only: H dim ", nd[0],
                    " must come before the channel dim of a rank-", r, " tensor");
    if (a.nd == 2)
      MESHNN_CHECK_AS(ShapeError, nd[1] == nd[0] + 1 && nd[1] == r - 2,
                      "halo-only: 2-D form needs dims (H, W) = (rank−3, rank−2), got (", nd[0],
                      ", ", nd[1], ")");
  }
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

// Interior of neighbor_pad: t → core[pl0 : pl0 + S0, pl1 : pl1 + S1] (core: shape cs, the
// padded dims d[0] (and d[1])).
void copy_interior(const Tensor& t, Tensor& core, const Shape& cs, const NpArgs& a,
                   const int d[2]) {
  const int r = t.rank();
  const size_t es = dtype_size(t.dtype());
  const int lo = a.nd == 2 ? std::min(d[0], d[1]) : d[0];
  const int hi = a.nd == 2 ? std::max(d[0], d[1]) : d[0];
  const int64_t plo = a.nd == 2 ? (lo == d[0] ? a.pl[0] : a.pl[1]) : a.pl[0];
  const int64_t phi = a.nd == 2 ? (hi == d[0] ? a.pl[0] : a.pl[1]) : a.pl[0];
  const Shape& s = t.shape();
  const int64_t inner = prod(s, hi + 1, r) * static_cast<int64_t>(es);  // bytes per hi row
  const int64_t A = prod(s, 0, lo);
  const int64_t M = (a.nd == 2) ? prod(s, lo + 1, hi) : 1;
  const int64_t Slo = s[lo], Shi = s[hi];
  const int64_t Clo = cs[lo], Chi = cs[hi];
  const auto* src = static_cast<const uint8_t*>(t.raw());
  auto* dst = static_cast<uint8_t*>(core.raw());
  if (a.nd == 1) {
    mesh_detail::copy_region(t.raw(), core.raw(), rows_region(s, lo, es, 0, Slo),
                             rows_region(cs, lo, es, plo, Slo));
  } else {
    for (int64_t o = 0; o < A; ++o)
      for (int64_t i = 0; i < Slo; ++i)
        for (int64_t m = 0; m < M; ++m) {
          const uint8_t* sp = src + ((o * Slo + i) * M + m) * Shi * inner;
          uint8_t* dp = dst + (((o * Clo + plo + i) * M + m) * Chi + phi) * inner;
          std::memcpy(dp, sp, static_cast<size_t>(Shi * inner));
        }
  }
}

// Edge rule at the true ends of the line only (first / last member of the group): zeros or
// copies of the end row into the pl rows before and the pr rows after the S rows along dd.
void pad_line_ends(Tensor& core, const Shape& cs, int dd, size_t es, int64_t S, int64_t pl,
                   int64_t pr, int64_t mode, bool first, bool last) {
  if (first && pl > 0) {
    if (mode == 0)
      zero_region(core.raw(), rows_region(cs, dd, es, 0, pl));
    else
      replicate_rows(core.raw(), cs, dd, es, pl, 0, pl);
  }
  if (last && pr > 0) {
    if (mode == 0)
      zero_region(core.raw(), rows_region(cs, dd, es, pl + S, pr));
    else
      replicate_rows(core.raw(), cs, dd, es, pl + S - 1, pl + S, pr);
  }
}

}  // namespace

// ---- neighbor_pad -------------------------------------------------------------------------

Tensor CclManager::neighbor_pad(const Tensor& t, const std::vector<int>& dims,
                                const std::vector<int64_t>& pad_left,
                                const std::vector<int64_t>& pad_right, PadMode mode,
                                const std::vector<int>& axes, int64_t t_front_pad,
                                int64_t logical_h, bool persistent) {
  MESHNN_CHECK(t.defined(), "neighbor_pad: undefined tensor");
  const size_t nd = dims.size();
  MESHNN_CHECK(nd == 1 || nd == 2, "neighbor_pad: 1 or 2 dims, got ", nd);
  MESHNN_CHECK(pad_left.size() == nd && pad_right.size() == nd && axes.size() == nd,
               "neighbor_pad: need one pad_left, pad_right and axis per dim (", nd, " dims, ",
               pad_left.size(), ", ", pad_right.size(), ", ", axes.size(), ")");
  for (int a : axes) axis_index(a);
  const int64_t d1 = nd == 2 ? dims[1] : 0;
  const OpDesc mine = make_desc(
      kNeighborPad, t, device_.rank(),
      {static_cast<int64_t>(nd), dims[0], d1, pad_left[0], pad_right[0], nd == 2 ? pad_left[1] : 0,
       nd == 2 ? pad_right[1] : 0, mode == PadMode::zeros ? 0 : 1, axes[0], nd == 2 ? axes[1] : 0,
       t_front_pad, logical_h});
  return neighbor_pad_impl(t, mine, persistent);
}

Tensor CclManager::neighbor_pad_impl(const Tensor& t, const OpDesc& mine, bool persistent) {
  const NpArgs a = np_from_desc(mine);
  // Validation: one agreement over every device the op touches (the whole mesh when both steps
  // communicate, so a bad device in one column cannot leave another column's devices waiting).
  Communicator* step_comm[2] = {comm(static_cast<int>(a.axis[0])),
                                a.nd == 2 ? comm(static_cast<int>(a.axis[1])) : nullptr};
  Communicator* vcomm = step_comm[0] ? step_comm[0] : step_comm[1];
  if (step_comm[0] && step_comm[1] && a.axis[0] != a.axis[1]) vcomm = comms_[2].get();
  bool local_ok = true;
  try {
    check_np(mine, 1);
  } catch (const Error&) {
    local_ok = false;
  }
  if (!vcomm) {
    try {
      check_np(mine, 1);
    } catch (const ShapeError& e) {
      throw ShapeError(std::string(op_name(mine.op)) + ": " + e.what());
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string(op_name(mine.op)) + ": " + e.what());
    }
  }
  // With a single communicating group the validation rides on that step's exchange (one barrier
  // fewer); a device that failed its own check joins that exchange without preparing anything.
  const bool fused = vcomm && vcomm == (step_comm[0] ? step_comm[0] : step_comm[1]);
  if (vcomm && (!fused || !local_ok)) agree(vcomm, mine, nullptr, check_np);

  const int r = t.rank();
  const size_t es = dtype_size(t.dtype());
  int d[2] = {norm_dim(a.dim[0], r), a.nd == 2 ? norm_dim(a.dim[1], r) : 0};
  Shape cs = t.shape();  // core: the padded tensor without the t_front_pad frames
  for (int i = 0; i < a.nd; ++i) cs[d[i]] += a.pl[i] + a.pr[i];
  Shape os = cs;
  if (a.tfp > 0) os[d[0] - 1] += a.tfp;
  Tensor out = persistent
                   ? pooled(key_of(mine.op == kHaloOnly ? "np_scratch" : "np", t.shape(), t.dtype(),
                                   std::vector<int64_t>(mine.args, mine.args + 12)),
                            os, t.dtype())
                   : Tensor::empty(os, t.dtype());
  Tensor core = out;
  if (a.tfp > 0) {
    out.slab(d[0] - 1, 0, a.tfp).fill_zero();
    core = out.slab(d[0] - 1, a.tfp, t.shape()[d[0] - 1]);
  }

  // Interior: t → core[pl0 : pl0 + S0, pl1 : pl1 + S1] (the lower of the two dims outermost).
  copy_interior(t, core, cs, a, d);
  // logical_h: rows of dims[0] with global index ≥ logical_h are zeros before padding.
  if (a.lh > 0) {
    const int64_t S0 = t.shape()[d[0]];
    const int64_t g0 = static_cast<int64_t>(device_.coord(static_cast<int>(a.axis[0]))) * S0;
    const int64_t first = std::max<int64_t>(0, a.lh - g0);
    if (first < S0) zero_region(core.raw(), rows_region(cs, d[0], es, a.pl[0] + first, S0 - first));
  }

  for (int st = 0; st < a.nd; ++st) {
    const int dd = d[st];
    const int ax = static_cast<int>(a.axis[st]);
    const int64_t S = t.shape()[dd];
    const int64_t pl = a.pl[st], pr = a.pr[st];
    const int n = axis_size(ax);
    const int i = device_.coord(ax);
    // Edge rule at the true ends of the line only.
    pad_line_ends(core, cs, dd, es, S, pl, pr, a.mode, i == 0, i == n - 1);
    Communicator* c = step_comm[st];
    if (!c) continue;
    // Publish the core (interior done, earlier steps done), then pull the neighbours' edge rows.
    const std::vector<OpDesc> all = c->exchange(mine, core.raw());
    if (fused && c == vcomm && st == (step_comm[0] ? 0 : 1)) validate_all(all, check_np);
    const Region prev = rows_region(cs, dd, es, 0, pl), next = rows_region(cs, dd, es, pl + S, pr);
    c->halo(core.raw(), rows_region(cs, dd, es, pl, pr), rows_region(cs, dd, es, pl + S - pl, pl),
            prev, next);
    // What the transport fills from devices i − 1 and i + 1 (none past the line's ends).
    traffic_.halo_bytes +=
        (i > 0 ? prev.count * prev.block : 0) + (i < n - 1 ? next.count * next.block : 0);
  }
  if (step_comm[0] || step_comm[1]) traffic_.halo_calls += 1;
  return out;
}

// ---- halo-only and scatter ----------------------------------------------------------------

Tensor CclManager::neighbor_pad_halo_only(const Tensor& t, const std::vector<int>& dims,
                                          const std::vector<int64_t>& pads, PadMode mode,
                                          const std::vector<int>& axes, int64_t logical_h,
                                          bool persistent) {
  MESHNN_CHECK(t.defined(), "neighbor_pad_halo_only: undefined tensor");
  const size_t nd = dims.size();
  MESHNN_CHECK(nd == 1 || nd == 2, "neighbor_pad_halo_only: 1 or 2 dims, got ", nd);
  MESHNN_CHECK(pads.size() == nd && axes.size() == nd,
               "neighbor_pad_halo_only: need one pad and one axis per dim");
  for (int a : axes) axis_index(a);
  const OpDesc mine =
      make_desc(kHaloOnly, t, device_.rank(),
                {static_cast<int64_t>(nd), dims[0], nd == 2 ? dims[1] : 0, pads[0], pads[0],
                 nd == 2 ? pads[1] : 0, nd == 2 ? pads[1] : 0, mode == PadMode::zeros ? 0 : 1,
                 axes[0], nd == 2 ? axes[1] : 0, 0, logical_h});
  // The exchange runs through a persistent padded scratch and the sections are cut out of it.
  // (A copy-free producer that fills the sections straight from the neighbours is possible; the
  // layout below is what consumers rely on.)
  const Tensor padded = neighbor_pad_impl(t, mine, /*persistent=*/true);
  const int r = t.rank();
  const int h = t.norm_dim(dims[0]);
  const int64_t pH = pads[0], pW = nd == 2 ? pads[1] : 0;
  const Shape& s = t.shape();
  const int64_t outer = prod(s, 0, h);
  const int64_t H = s[h], W = prod(s, h + 1, r - 1), C = s[r - 1];
  const int64_t Hp = H + 2 * pH, Wp = W + 2 * pW;
  const int64_t total = outer * 2 * pH * W + outer * 2 * pW * Hp;
  Tensor out = persistent
                   ? pooled(key_of("np_halo", s, t.dtype(), {h, pH, nd == 2 ? h + 1 : -1, pW}),
                            {total, C}, t.dtype())
                   : Tensor::empty({total, C}, t.dtype());
  const int64_t stick = C * static_cast<int64_t>(dtype_size(t.dtype()));
  const auto* P = static_cast<const uint8_t*>(padded.raw());
  auto* O = static_cast<uint8_t*>(out.raw());
  auto at = [&](int64_t o, int64_t row, int64_t col) {
    return P + ((o * Hp + row) * Wp + col) * stick;
  };
  int64_t pos = 0;
  auto put = [&](const uint8_t* src, int64_t sticks) {
    std::memcpy(O + pos * stick, src, static_cast<size_t>(sticks * stick));
    pos += sticks;
  };
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t y = 0; y < pH; ++y) put(at(o, y, pW), W);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t y = 0; y < pH; ++y) put(at(o, H + pH + y, pW), W);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t y = 0; y < Hp; ++y) put(at(o, y, 0), pW);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t y = 0; y < Hp; ++y) put(at(o, y, W + pW), pW);
  return out;
}

void CclManager::halo_scatter(const Tensor& compact, Tensor& padded, int h_dim, int64_t pH,
                              int64_t pW, const Tensor* interior) {
  MESHNN_CHECK(compact.defined() && padded.defined(), "halo_scatter: undefined tensor");
  const int r = padded.rank();
  const int h = padded.norm_dim(h_dim);
  MESHNN_CHECK_AS(ShapeError, h <= r - 2, "halo_scatter: H dim ", h,
                  " must come before the channel dim of ", shape_str(padded.shape()));
  MESHNN_CHECK_AS(ShapeError, pW == 0 || h == r - 3, "halo_scatter: a W pad needs (…, H, W, C)");
  MESHNN_CHECK(pH >= 0 && pW >= 0, "halo_scatter: negative pad");
  MESHNN_CHECK(compact.dtype() == padded.dtype(), "halo_scatter: dtype ",
               dtype_name(compact.dtype()), " vs ", dtype_name(padded.dtype()));
  const Shape& s = padded.shape();
  const int64_t outer = prod(s, 0, h);
  const int64_t Hp = s[h], Wp = prod(s, h + 1, r - 1), C = s[r - 1];
  const int64_t H = Hp - 2 * pH, W = Wp - 2 * pW;
  MESHNN_CHECK_AS(ShapeError, H >= 0 && W >= 0, "halo_scatter: pads exceed ", shape_str(s));
  const int64_t total = outer * 2 * pH * W + outer * 2 * pW * Hp;
  MESHNN_CHECK_AS(ShapeError, compact.shape() == Shape({total, C}), "halo_scatter: compact buffer ",
                  shape_str(compact.shape()), " does not match ", shape_str(s), " with pads (", pH,
                  ", ", pW, "): expected ", shape_str({total, C}));
  const int64_t stick = C * static_cast<int64_t>(dtype_size(padded.dtype()));
  auto* P = static_cast<uint8_t*>(padded.raw());
  const auto* I = static_cast<const uint8_t*>(compact.raw());
  auto at = [&](int64_t o, int64_t row, int64_t col) {
    return P + ((o * Hp + row) * Wp + col) * stick;
  };
  int64_t pos = 0;
  auto get = [&](uint8_t* dst, int64_t sticks) {
    std::memcpy(dst, I + pos * stick, static_cast<size_t>(sticks * stick));
    pos += sticks;
  };
  if (interior) {
    Shape want = s;
    want[h] = H;
    if (pW > 0) want[h + 1] = W;
    MESHNN_CHECK_AS(ShapeError, interior->shape() == want && interior->dtype() == padded.dtype(),
                    "halo_scatter: interior ", shape_str(interior->shape()), " ",
                    dtype_name(interior->dtype()), ", expected ", shape_str(want), " ",
                    dtype_name(padded.dtype()));
    const auto* src = static_cast<const uint8_t*>(interior->raw());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t y = 0; y < H; ++y)
        std::memcpy(at(o, pH + y, pW), src + (o * H + y) * W * stick,
                    static_cast<size_t>(W * stick));
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t y = 0; y < pH; ++y) get(at(o, y, pW), W);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t y = 0; y < pH; ++y) get(at(o, H + pH + y, pW), W);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t y = 0; y < Hp; ++y) get(at(o, y, 0), pW);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t y = 0; y < Hp; ++y) get(at(o, y, W + pW), pW);
}

}  // namespace meshnn
