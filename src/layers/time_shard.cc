#include "meshnn/layers/time_shard.h"

#include <algorithm>
#include <cstring>

#include "meshnn/core/profile.h"
#include "meshnn/ops/padding.h"
#include "meshnn/ops/resample.h"

namespace meshnn {

bool time_split_fits(int64_t frames, int parts, int64_t min_rows) {
  if (parts <= 1) return true;
  const int64_t rows = (frames + parts - 1) / parts;
  return rows >= min_rows && (parts - 1) * rows < frames;
}

void check_time_split(int64_t frames, int parts, int64_t min_rows, const char* what) {
  if (time_split_fits(frames, parts, min_rows)) return;
  int best = parts;
  while (best > 1 && !time_split_fits(frames, best, min_rows)) --best;
  throw ShapeError(detail::concat("a ", what, " of ", frames, " frames cannot be split over ",
                                  parts, " devices (each needs at least ", min_rows,
                                  " frames and the last one a real frame); at most ", best,
                                  " device(s) fit"));
}
namespace {

// Rows [start, start + len) of dim 1 of a (B, T, …) tensor, as a dense copy (B may be > 1).
Tensor rows(const Tensor& x, int64_t start, int64_t len) { return x.narrow(1, start, len); }

// Pads dim 1 locally: `left`/`right` rows of zeros or copies of the edge row.
Tensor local_pad(const Tensor& x, int64_t left, int64_t right, PadMode mode) {
  if (left == 0 && right == 0) return x;
  std::vector<Tensor> parts;
  const int64_t t = x.dim(1);
  auto edge = [&](int64_t row, int64_t count) {
    Shape s = x.shape();
    s[1] = count;
    if (mode == PadMode::zeros) return Tensor(s, x.dtype());
    std::vector<Tensor> reps(static_cast<size_t>(count), rows(x, row, 1));
    return concat(reps, 1);
  };
  if (left) parts.push_back(edge(0, left));
  parts.push_back(x);
  if (right) parts.push_back(edge(t - 1, right));
  return concat(parts, 1);
}

// Zero-padded halo of a (B, S, …) shard whose rows with global index ≥ real (the padded tail)
// read as zeros, as they would past the end of the unsharded sequence. The tail is zeroed in the
// padded tensor (a fresh buffer from the halo step; cloned only when no halo was needed), so the
// caller's shard is never copied or changed.
Tensor zero_padded_halo(const Tensor& x, const TimeShard& ts, int64_t real, int64_t left,
                        int64_t right, std::string_view layer) {
  const int64_t s = x.dim(1);
  Tensor padded = ts.halo(x, left, right, PadMode::zeros, layer);
  // Global row of padded row 0, and the first padded row at or past the real end.
  const int64_t g0 = ts.row0(s) - left;
  const int64_t t = padded.dim(1);
  const int64_t first_pad = std::clamp<int64_t>(real - g0, 0, t);
  if (first_pad >= t) return padded;
  if (padded.raw() == x.raw()) padded = padded.clone();
  int64_t inner = 1;
  for (int d = 2; d < padded.rank(); ++d) inner *= padded.dim(d);
  const size_t row_bytes = static_cast<size_t>(inner) * dtype_size(padded.dtype());
  char* p = static_cast<char*>(padded.raw());
  for (int64_t b = 0; b < padded.dim(0); ++b)
    std::memset(p + (b * t + first_pad) * row_bytes, 0, (t - first_pad) * row_bytes);
  return padded;
}

}  // namespace

TimeShard::TimeShard(Device& device, std::vector<int> axes)
    : device_(&device), axes_(std::move(axes)) {
  MESHNN_CHECK(axes_.size() == 1 || axes_.size() == 2, "TimeShard: 1 or 2 mesh axes, got ",
               axes_.size());
  if (axes_.size() == 2)
    MESHNN_CHECK(axes_[0] != axes_[1], "TimeShard: the two time axes must differ");
  parts_ = 1;
  index_ = 0;
  for (int a : axes_) {
    const int n = device.axis_size(a);  // InvalidArgument for a nonexistent axis
    index_ = index_ * n + device.coord(a);
    parts_ *= n;
  }
}

Tensor TimeShard::partition(const Tensor& full) const {
  const int64_t real = full.dim(1);
  const int64_t s = shard_rows(real);
  const int64_t start = std::min(real, row0(s));
  const int64_t have = std::min(s, real - start);
  Tensor part = rows(full, start, have);
  if (have == s) return part;
  Shape tail = full.shape();
  tail[1] = s - have;
  return concat({part, Tensor(tail, full.dtype())}, 1);
}

Tensor TimeShard::gather(const Tensor& x, int64_t real) const {
  Tensor full = x;
  if (sharded()) {
    record(ExchangeRecord::Kind::gather, x, 0, 0, {});
    // Gather the minor axis first, so the concatenation order is the row-major time order.
    for (int i = static_cast<int>(axes_.size()) - 1; i >= 0; --i)
      full = device_->ccl().all_gather(full, 1, axes_[i]);
  }
  MESHNN_CHECK_AS(ShapeError, full.dim(1) >= real, "TimeShard::gather: ", full.dim(1),
                  " rows gathered, fewer than the real length ", real);
  return full.dim(1) == real ? full : rows(full, 0, real);
}

void TimeShard::record(ExchangeRecord::Kind kind, const Tensor& x, int64_t left, int64_t right,
                       std::string_view layer) const {
  if (!log_) return;
  ExchangeRecord r;
  r.kind = kind;
  r.layer = std::string(layer);
  r.left = left;
  r.right = right;
  r.shard_rows = x.dim(1);
  r.row_bytes = x.dim(1) > 0 ? static_cast<int64_t>(x.nbytes()) / x.dim(1) : 0;
  for (int d = 2; d < x.rank(); ++d) r.row_shape.push_back(x.dim(d));
  log_->push_back(std::move(r));
}

Tensor TimeShard::halo(const Tensor& x, int64_t left, int64_t right, PadMode mode,
                       std::string_view layer) const {
  ProfileScope prof("halo");
  MESHNN_CHECK(left >= 0 && right >= 0, "TimeShard::halo: negative pad (", left, ", ", right, ")");
  if (!sharded()) return local_pad(x, left, right, mode);
  // No rows (a k1 conv): nothing to fetch, so no exchange — each one is a round trip on a mesh
  // across hosts. Every device has the same pads, so all of them skip it.
  if (left == 0 && right == 0) return x;
  MESHNN_CHECK_AS(ShapeError, left <= x.dim(1) && right <= x.dim(1), "TimeShard::halo: halo (",
                  left, ", ", right, ") larger than the shard of ", x.dim(1),
                  " rows; use fewer devices for this sequence length");
  record(ExchangeRecord::Kind::halo, x, left, right, layer);
  if (axes_.size() == 1)
    return device_->ccl().neighbor_pad(x, {1}, {left}, {right}, mode, {axes_[0]});
  return edge_exchange(x, left, right, mode);
}

// Both axes: every device contributes [its last `left` rows | its first `right` rows]; after an
// all-gather over both axes each device picks its time-order neighbours' edges.
Tensor TimeShard::edge_exchange(const Tensor& x, int64_t left, int64_t right, PadMode mode) const {
  const int64_t s = x.dim(1);
  Tensor edges = concat({rows(x, s - left, left), rows(x, 0, right)}, 1);
  Tensor all = edges;
  for (int i = static_cast<int>(axes_.size()) - 1; i >= 0; --i)
    all = device_->ccl().all_gather(all, 1, axes_[i]);
  const int64_t per = left + right;
  std::vector<Tensor> parts;
  if (left) {
    parts.push_back(index_ > 0 ? rows(all, (index_ - 1) * per, left)
                               : local_pad(rows(x, 0, 1), left, 0, mode).narrow(1, 0, left));
  }
  parts.push_back(x);
  if (right) {
    parts.push_back(index_ < parts_ - 1
                        ? rows(all, (index_ + 1) * per + left, right)
                        : local_pad(rows(x, s - 1, 1), 0, right, mode).narrow(1, 1, right));
  }
  return concat(parts, 1);
}

Tensor TimeShard::last_real_row(const Tensor& x, int64_t real) const {
  const int64_t s = x.dim(1);
  const int64_t local = real - 1 - row0(s);
  if (!sharded()) return rows(x, local, 1);
  // Each device offers one row (its own last real row if it holds global row real − 1, else
  // zeros); the owner's row is picked after an all-gather. One row per device: negligible traffic.
  Shape one = x.shape();
  one[1] = 1;
  Tensor offer = (local >= 0 && local < s) ? rows(x, local, 1) : Tensor(one, x.dtype());
  record(ExchangeRecord::Kind::tail_row, offer, 0, 0, {});
  Tensor all = offer;
  for (int i = static_cast<int>(axes_.size()) - 1; i >= 0; --i)
    all = device_->ccl().all_gather(all, 1, axes_[i]);
  return rows(all, (real - 1) / s, 1);
}

// On one device the whole sequence is here (S = real): the layer pads it itself (oneDNN and the
// direct kernel take the pads as implicit zero rows), so no padded copy of the input is made.
Tensor conv1d_sharded(Conv1d& conv, const Tensor& x, const TimeShard& ts, int64_t real,
                      int64_t halo_left, int64_t halo_right) {
  ProfileScope prof("conv1d");
  if (!ts.sharded() && x.dim(1) == real && halo_left == conv.pad_left() &&
      halo_right == conv.pad_right())
    return conv.forward(x);
  return conv.forward_padded(zero_padded_halo(x, ts, real, halo_left, halo_right, conv.name()));
}

Tensor conv2d_sharded(Conv2d& conv, const Tensor& x, const TimeShard& ts, int64_t real,
                      int64_t halo_left, int64_t halo_right) {
  ProfileScope prof("conv2d");
  if (!ts.sharded() && x.dim(1) == real && halo_left == conv.pad_left() &&
      halo_right == conv.pad_right())
    return conv.forward(x);
  return conv.forward_padded(zero_padded_halo(x, ts, real, halo_left, halo_right, conv.name()));
}

Tensor conv_transpose1d_sharded(ConvTranspose1d& conv, const Tensor& x, const TimeShard& ts,
                                int64_t real, int64_t halo_left, int64_t halo_right) {
  ProfileScope prof("conv_transpose1d");
  const int64_t s = conv.config().stride;
  Tensor padded = zero_padded_halo(x, ts, real, halo_left, halo_right, conv.name());
  Tensor full = conv.forward_padded(padded);  // uncropped
  // Row j of `full` is global pre-crop row s·(a − halo_left) + j; this shard's rows are pre-crop
  // rows s·a + pad_left + [0, s·S).
  return rows(full, s * halo_left + conv.pad_left(), s * x.dim(1));
}

Tensor activation_sharded(const layers::AntiAliasedActivation& act, const Tensor& x,
                          const TimeShard& ts, int64_t real) {
  ProfileScope prof("anti_aliased_activation");
  const int64_t s = x.dim(1);
  const int64_t r0 = ts.row0(s);
  if (!ts.sharded()) return act.forward_padded(x, 0, 0, 0, real);
  const int64_t ctx = layers::AntiAliasedActivation::context_rows();
  // Replicate mode: at the line's ends the halo is unused (the kernel clamps at the real ends).
  Tensor slab = ts.halo(x, ctx, ctx, PadMode::replicate, act.name());
  if (r0 >= real) return Tensor(x.shape());  // wholly in the padded tail: nothing real here
  return act.forward_padded(slab, ctx, ctx, r0, real);
}

Tensor upsample1d_sharded(const Tensor& x, std::span<const float> taps,
                          const ops::UpsampleGeometry& g, const TimeShard& ts, int64_t real) {
  ProfileScope prof("upsample1d");
  const int64_t s = x.dim(1);
  Tensor xin = x;
  // The tail must hold copies of the last real row, as if the global sequence ended there. Every
  // device knows whether the line has a tail, so they all take part in fetching that row.
  if (ts.parts() * s > real) {
    Tensor fill = ts.last_real_row(x, real);
    if (ts.row0(s) + s > real) {
      xin = x.clone();
      ops::set_tpad_tail(xin, ts.row0(s), real, ops::TailMode::replicate, &fill);
    }
  }
  if (!ts.sharded()) return ops::upsample1d(xin, taps, g);
  // Output rows of input rows [a, b) depend on input rows [a − pad, b + pad) only. With that halo,
  // upsampling the window (whose own replicate padding only affects rows we crop) is exact.
  Tensor window = ts.halo(xin, g.pad, g.pad, PadMode::replicate, "upsample1d");
  Tensor up = ops::upsample1d(window, taps, g);
  return rows(up, g.ratio * g.pad, g.ratio * s);
}

}  // namespace meshnn
