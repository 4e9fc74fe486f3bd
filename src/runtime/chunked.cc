#include "runtime/chunked.h"

#include <algorithm>
#include <cstring>

#include "meshnn/core/error.h"

namespace meshnn::runtime {
namespace {

// Stage s's rate, a whole number of output rows per input row.
int64_t whole_rate(const graph::Reach& r, size_t s) {
  MESHNN_CHECK_AS(InvalidArgument, r.rate.den == 1 && r.rate.num >= 1, "stage ", s, " gives ",
                  r.rate.num, "/", r.rate.den,
                  " output rows per input row: chunks need a whole number");
  return r.rate.num;
}

// A window of `len` rows as near `want` as [0, total) allows (shifted inward at the ends).
int64_t place(int64_t want, int64_t len, int64_t total) {
  return std::clamp<int64_t>(want, 0, total - len);
}

// dst rows [to, to + count) on `axis` ← src rows [from, from + count); the other dims equal.
void put_rows(Tensor& dst, const Tensor& src, int axis, int64_t from, int64_t count, int64_t to) {
  const Shape& s = dst.shape();
  const int64_t outer = shape_numel(Shape(s.begin(), s.begin() + axis));
  const int64_t inner = shape_numel(Shape(s.begin() + axis + 1, s.end()));
  const size_t es = dtype_size(src.dtype());
  const char* in = static_cast<const char*>(src.raw());
  char* out = static_cast<char*>(dst.raw());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out + ((o * dst.dim(axis) + to) * inner) * es,
                in + ((o * src.dim(axis) + from) * inner) * es,
                static_cast<size_t>(count * inner) * es);
}

}  // namespace

std::vector<StageContext> chunk_context(const ChunkChain& chain) {
  MESHNN_CHECK_AS(InvalidArgument, !chain.stages.empty(), "a chunked run of no stages");
  std::vector<StageContext> out;
  int64_t per_unit = 1;  // a later stage's input rows per unit
  for (size_t s = 0; s < chain.stages.size(); ++s) {
    const graph::Reach& r = chain.stages[s];
    MESHNN_CHECK_AS(
        InvalidArgument,
        r.left < graph::Rows(graph::kWholePast) && r.right < graph::Rows(graph::kWholePast),
        "the graph reads its whole past (a causal attention): it cannot run in chunks");
    const int64_t rate = whole_rate(r, s);
    if (s == 0) {
      MESHNN_CHECK_AS(InvalidArgument, chain.offset >= 0 && chain.offset < rate, "a chain of ",
                      rate, "·n − ", chain.offset, " units per n frames");
      out.push_back({r.left.ceil(), r.right.ceil()});
      continue;
    }
    // Unit u aligns with this stage's input row per_unit·u: its reach over per_unit rows a unit.
    const graph::Rows to_units(1, per_unit);
    out.push_back({(r.left * to_units).ceil(), (r.right * to_units).ceil()});
    per_unit *= rate;
  }
  return out;
}

// Every chunk's windows: the later stages' last to first (each widened by its context around
// the one after it, the last around the kept units), then the input frames stage 0 needs for the
// first later stage's window (or the kept units).
std::vector<ChunkWindow> chunk_windows(const ChunkChain& chain, int64_t frames, int64_t chunk) {
  MESHNN_CHECK_AS(InvalidArgument, chunk >= 1, "chunks of ", chunk, " frames; need at least 1");
  MESHNN_CHECK_AS(InvalidArgument, frames >= 1, "a chunked run of ", frames, " frames");
  const std::vector<StageContext> ctx = chunk_context(chain);
  const size_t S = ctx.size();
  const int64_t rate = chain.stages[0].rate.num, off = chain.offset, units = rate * frames - off;
  auto unit_start = [&](int64_t t) { return t == 0 ? int64_t{0} : rate * t - off; };
  auto owner = [&](int64_t u) { return (u + off) / rate; };  // the frame that owns unit u
  // Window lengths, fixed over the chunks. Stage 0: the frames owning `w` units (one more, as
  // they need not start at a frame's first unit) and its context; with offset > 0 one frame more
  // on the left, whose dropped first units a window lacks.
  const int64_t drop = off > 0 ? 1 : 0;
  std::vector<int64_t> len(S);
  int64_t w = std::min(units, rate * chunk);
  for (size_t s = S - 1; s >= 1; --s) len[s] = w = std::min(units, w + ctx[s].left + ctx[s].right);
  len[0] = std::min(frames, ctx[0].left + ctx[0].right + (w + rate - 1) / rate + 1 + drop);
  std::vector<ChunkWindow> out;
  for (int64_t a = 0; a < frames; a += chunk) {
    ChunkWindow cw;
    cw.keep_begin = a;
    cw.keep_end = std::min(frames, a + chunk);
    cw.unit_begin = unit_start(a);
    cw.unit_end = unit_start(cw.keep_end);
    cw.stages.resize(S);
    int64_t lo = cw.unit_begin, hi = cw.unit_end;  // the units the window after needs
    for (size_t s = S - 1; s >= 1; --s) {
      const int64_t start = place(lo - ctx[s].left, len[s], units);
      MESHNN_CHECK(start <= std::max<int64_t>(0, lo - ctx[s].left) &&
                       start + len[s] >= std::min(units, hi + ctx[s].right),
                   "internal: stage ", s, " window [", start, ", ", start + len[s],
                   ") misses context");
      cw.stages[s] = {start, len[s]};
      lo = start;
      hi = start + len[s];
    }
    const int64_t want = owner(lo) - std::max(ctx[0].left, drop);
    const int64_t a0 = place(want, len[0], frames), a1 = a0 + len[0];
    MESHNN_CHECK(a0 <= std::max<int64_t>(0, want) && rate * a0 <= lo &&
                     a1 >= std::min(frames, owner(hi - 1) + 1 + ctx[0].right) &&
                     rate * a1 - off >= hi,
                 "internal: chunk window [", a0, ", ", a1, ") misses context");
    cw.stages[0] = {a0, len[0]};
    out.push_back(std::move(cw));
  }
  return out;
}

Tensor run_chunked(const ChunkChain& chain, const Tensor& input, int axis, int64_t chunk,
                   const std::function<Tensor(const Tensor&, const ChunkStep&)>& run_stage,
                   const std::function<void(int, int, const char*)>& progress) {
  MESHNN_CHECK(axis >= 0 && axis < input.rank(), "run_chunked: axis ", axis, " of ",
               shape_str(input.shape()));
  const std::vector<ChunkWindow> windows = chunk_windows(chain, input.dim(axis), chunk);
  const int64_t rate = chain.stages[0].rate.num;
  const int64_t units = rate * input.dim(axis) - chain.offset;
  Tensor out;
  const int n = static_cast<int>(windows.size());
  for (int k = 0; k < n; ++k) {
    const ChunkWindow& cw = windows[k];
    ChunkStep step{k, n, 0};
    const ChunkWindow::Span& head = cw.stages[0];
    Tensor y = run_stage(input.narrow(axis, head.start, head.length), step);
    MESHNN_CHECK(axis < y.rank() && y.dim(axis) >= rate * head.length - chain.offset,
                 "internal: a window of ", head.length, " frames gave ", shape_str(y.shape()));
    int64_t y_unit = rate * head.start, per_unit = 1;  // y's first row's unit; y's rows per unit
    for (size_t s = 1; s < cw.stages.size(); ++s) {
      const ChunkWindow::Span& sp = cw.stages[s];
      const Tensor x = y.narrow(axis, per_unit * (sp.start - y_unit), per_unit * sp.length);
      y = Tensor();  // the previous stage's output, freed before this stage runs
      step.stage = static_cast<int>(s);
      y = run_stage(x, step);
      const int64_t r = chain.stages[s].rate.num;
      MESHNN_CHECK(axis < y.rank() && y.dim(axis) == r * x.dim(axis), "internal: stage ", s,
                   " gave ", shape_str(y.shape()), " for ", shape_str(x.shape()));
      per_unit *= r;
      y_unit = sp.start;
    }
    if (!out.defined()) {
      Shape s = y.shape();
      s[static_cast<size_t>(axis)] = per_unit * units;
      out = Tensor::empty(s, y.dtype());
    }
    put_rows(out, y, axis, per_unit * (cw.unit_begin - y_unit),
             per_unit * (cw.unit_end - cw.unit_begin), per_unit * cw.unit_begin);
    if (progress) progress(k + 1, n, "chunk");
  }
  return out;
}

}  // namespace meshnn::runtime
