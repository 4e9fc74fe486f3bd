// The graph's row buffer (a node's held rows of a stream) and the stream-state reader.
#include <algorithm>

#include "graph/graph.h"
#include "graph/node_rows.h"

namespace meshnn::graph {

void RowBuffer::set_shape(const Tensor& like) {
  if (!data_.defined()) data_ = no_rows(like.shape());
}

void RowBuffer::append(const Tensor& x) {
  if (!x.defined()) return;
  MESHNN_CHECK_AS(ShapeError, x.rank() >= 2 && x.dtype() == DType::f32,
                  "stream: rows must be f32 (B, n, …), got ", shape_str(x.shape()));
  if (!data_.defined() || data_.dim(1) == 0) {
    if (data_.defined()) {
      Shape a = data_.shape(), b = x.shape();
      a[1] = b[1] = 0;
      MESHNN_CHECK_AS(ShapeError, a == b, "stream: rows ", shape_str(x.shape()),
                      " do not match the stream's ", shape_str(data_.shape()));
    }
    data_ = x;  // no copy: operators never write into their inputs
    return;
  }
  if (x.dim(1) == 0) return;
  data_ = concat({data_, x}, 1);
}

void RowBuffer::append_zeros(int64_t n) {
  MESHNN_CHECK(data_.defined(), "RowBuffer: zeros appended before the row shape is known");
  if (n <= 0) return;
  Shape s = data_.shape();
  s[1] = n;
  append(Tensor(s));
}

Tensor RowBuffer::rows_between(int64_t from, int64_t to) const {
  MESHNN_CHECK(from >= begin_ && to <= end() && from <= to, "RowBuffer: rows [", from, ", ", to,
               ") outside the held [", begin_, ", ", end(), ")");
  if (from == begin_ && to == end()) return data_;
  return data_.narrow(1, from - begin_, to - from);
}

void RowBuffer::drop_before(int64_t row) {
  if (!data_.defined() || row <= begin_) return;
  row = std::min(row, end());
  data_ = data_.narrow(1, row - begin_, end() - row);
  begin_ = row;
}

Tensor RowBuffer::empty_rows() const { return no_rows(data_.shape()); }

void RowBuffer::clear() {
  data_ = Tensor();
  begin_ = 0;
}

void RowBuffer::save(StreamState& s, int64_t origin) const {
  s.tensors.push_back(data_);
  s.counters.push_back(begin_ - origin);
}

void RowBuffer::load(StateReader& r, int64_t origin) {
  data_ = r.tensor();
  begin_ = r.counter() + origin;
}

Tensor StateReader::tensor() {
  MESHNN_CHECK(t_ < s_.tensors.size(), "stream state: fewer tensors than the graph reads");
  return s_.tensors[t_++];
}

int64_t StateReader::counter() {
  MESHNN_CHECK(c_ < s_.counters.size(), "stream state: fewer counters than the graph reads");
  return s_.counters[c_++];
}

void StateReader::finish() const {
  MESHNN_CHECK(t_ == s_.tensors.size() && c_ == s_.counters.size(),
               "stream state: saved from another graph (", s_.tensors.size() - t_, " tensors, ",
               s_.counters.size() - c_, " counters left)");
}

}  // namespace meshnn::graph
