// The GR00T slot layout (token → slot, key-set runs, gathers) and the padded state rows.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "meshnn/core/error.h"
#include "meshnn/gr00t_config.h"
#include "models/gr00t/adapter.h"

namespace meshnn::gr00t {

SlotLayout::SlotLayout(std::vector<int64_t> slot_of_token, std::vector<TokenType> types,
                       int64_t s_pad, int64_t row_block)
    : slot_of_token_(std::move(slot_of_token)),
      types_(std::move(types)),
      s_pad_(s_pad),
      row_block_(row_block) {
  MESHNN_CHECK(row_block_ > 0, "slot layout: row_block must be positive, got ", row_block_);
  MESHNN_CHECK(!slot_of_token_.empty(), "slot layout: slot_of_token is empty (S = 0)");
  MESHNN_CHECK(types_.size() == slot_of_token_.size(), "slot_of_token must be (S=", types_.size(),
               ",), got (", slot_of_token_.size(), ",)");
  MESHNN_CHECK(s_pad_ > 0 && s_pad_ % row_block_ == 0, "slot layout: S_pad=", s_pad_,
               " must be a positive multiple of ", row_block_);
  slot_type_.assign(static_cast<size_t>(s_pad_), -1);
  for (size_t t = 0; t < slot_of_token_.size(); ++t) {
    const int64_t s = slot_of_token_[t];
    MESHNN_CHECK(s >= 0 && s < s_pad_, "slot_of_token[", t, "] = ", s,
                 " is outside [0, S_pad=", s_pad_, ")");
    MESHNN_CHECK(slot_type_[s] < 0, "slot_of_token: slot ", s, " holds two tokens");
    const auto ty = static_cast<uint8_t>(types_[t]);
    MESHNN_CHECK(ty <= 2, "token_types[", t, "] = ", int(ty),
                 " (expected 0 text, 1 image, 2 padding)");
    slot_type_[s] = static_cast<int8_t>(ty);
  }
}

SlotLayout SlotLayout::from_token_types(const std::vector<int>& types, int64_t row_block) {
  MESHNN_CHECK(row_block > 0, "slot layout: row_block must be positive");
  std::vector<int64_t> sot(types.size());
  std::vector<TokenType> tt(types.size());
  for (size_t t = 0; t < types.size(); ++t) {
    MESHNN_CHECK(types[t] >= 0 && types[t] <= 2, "token_types[", t, "] = ", types[t],
                 " (expected 0 text, 1 image, 2 padding)");
    sot[t] = static_cast<int64_t>(t);
    tt[t] = static_cast<TokenType>(types[t]);
  }
  const int64_t s = static_cast<int64_t>(types.size());
  return SlotLayout(std::move(sot), std::move(tt),
                    std::max<int64_t>(1, (s + row_block - 1) / row_block) * row_block, row_block);
}

SlotLayout SlotLayout::from_token_types(const Tensor& types, int64_t row_block) {
  MESHNN_CHECK_AS(
      ShapeError,
      types.defined() && (types.rank() == 1 || (types.rank() == 2 && types.dim(0) == 1)),
      "token_types must be (S) or (1, S), got ",
      types.defined() ? shape_str(types.shape()) : "undefined");
  const Tensor d = types.to(DType::f64);
  std::vector<int> v(static_cast<size_t>(d.numel()));
  for (int64_t i = 0; i < d.numel(); ++i) {
    const double x = d.data<double>()[i];
    MESHNN_CHECK(x == 0 || x == 1 || x == 2, "token_types[", i, "] = ", x,
                 " (expected 0 text, 1 image, 2 padding)");
    v[static_cast<size_t>(i)] = static_cast<int>(x);
  }
  return from_token_types(v, row_block);
}

std::vector<uint8_t> SlotLayout::key_valid() const {
  std::vector<uint8_t> k(static_cast<size_t>(s_pad_));
  for (int64_t s = 0; s < s_pad_; ++s) k[s] = slot_type_[s] >= 0;
  return k;
}

Tensor SlotLayout::key_valid_mask() const { return Tensor::from_vector(key_valid(), {s_pad_}); }

int64_t SlotLayout::active_slots() const {
  int64_t last = 0;
  for (int64_t s = 0; s < s_pad_; ++s)
    if (slot_type_[s] >= 0) last = s + 1;
  return last;
}

namespace {
std::vector<Run> runs_of(const std::vector<int8_t>& slot_type, int8_t want) {
  std::vector<Run> runs;
  const int64_t n = static_cast<int64_t>(slot_type.size());
  for (int64_t s = 0; s < n;) {
    if (slot_type[s] != want) {
      ++s;
      continue;
    }
    int64_t e = s;
    while (e < n && slot_type[e] == want) ++e;
    runs.emplace_back(s, e);
    s = e;
  }
  return runs;
}
int64_t runs_length(const std::vector<Run>& r) {
  int64_t n = 0;
  for (auto& [b, e] : r) n += e - b;
  return n;
}
}  // namespace

std::vector<Run> SlotLayout::image_runs() const { return runs_of(slot_type_, 1); }
std::vector<Run> SlotLayout::text_runs() const { return runs_of(slot_type_, 0); }

std::pair<int64_t, int64_t> SlotLayout::key_set_lengths(const std::string& ks) const {
  if (ks == "all") return {s_pad_, s_pad_};
  int64_t l_real;
  if (ks == "image")
    l_real = runs_length(image_runs());
  else if (ks == "text")
    l_real = runs_length(text_runs());
  else
    throw InvalidArgument("unknown key set '" + ks + "'; expected one of (all, text, image)");
  return {l_real, std::max<int64_t>(1, (l_real + row_block_ - 1) / row_block_) * row_block_};
}

std::vector<int64_t> SlotLayout::gather_index(const std::string& ks) const {
  std::vector<int64_t> idx;
  if (ks == "all") {
    for (int64_t s = 0; s < s_pad_; ++s) idx.push_back(s);
    return idx;
  }
  std::vector<Run> runs;
  if (ks == "image")
    runs = image_runs();
  else if (ks == "text")
    runs = text_runs();
  else
    throw InvalidArgument("unknown key set '" + ks + "'; expected one of (all, text, image)");
  for (auto& [b, e] : runs)
    for (int64_t s = b; s < e; ++s) idx.push_back(s);
  return idx;
}

Tensor SlotLayout::onehot_gather_matrix(const std::string& ks) const {
  const auto [l_real, l_pad] = key_set_lengths(ks);
  const std::vector<int64_t> idx = gather_index(ks);
  MESHNN_CHECK_AS(Error, static_cast<int64_t>(idx.size()) == l_real, ks, ": index has ", idx.size(),
                  " entries, expected L_real=", l_real);
  Tensor p({l_pad, s_pad_});
  float* d = p.data<float>();
  for (int64_t r = 0; r < l_real; ++r) d[r * s_pad_ + idx[r]] = 1.f;
  return p;
}

Tensor SlotLayout::rows_to_slots(const Tensor& x_in) const {
  Tensor x = x_in;
  if (x.rank() == 2) x = x.reshape({1, x.dim(0), x.dim(1)});
  MESHNN_CHECK_AS(ShapeError, x.rank() == 3 && x.dim(0) == 1,
                  "rows_to_slots expects [1, S, D] or [S, D], got ", shape_str(x_in.shape()));
  MESHNN_CHECK_AS(ShapeError, x.dim(1) == seq_len(), "rows_to_slots: ", x.dim(1),
                  " rows but the slot layout has S=", seq_len());
  const int64_t D = x.dim(2);
  const Tensor xf = x.to(DType::f32);
  Tensor out({1, 1, s_pad_, D});
  for (int64_t t = 0; t < seq_len(); ++t)
    std::memcpy(out.data<float>() + slot_of_token_[t] * D, xf.data<float>() + t * D, D * 4);
  return out;
}

Tensor SlotLayout::slots_to_rows(const Tensor& x_in) const {
  Tensor x = x_in;
  while (x.rank() > 2 && x.dim(0) == 1) {
    Shape s(x.shape().begin() + 1, x.shape().end());
    x = x.reshape(s);
  }
  MESHNN_CHECK_AS(ShapeError, x.rank() == 2,
                  "slots_to_rows expects [1, 1, S_pad, D], got a tensor that squeezes to ",
                  shape_str(x.shape()));
  MESHNN_CHECK_AS(ShapeError, x.dim(0) == s_pad_, "slots_to_rows: ", x.dim(0),
                  " rows != S_pad=", s_pad_);
  const int64_t D = x.dim(1);
  const Tensor xf = x.to(DType::f32);
  Tensor out = Tensor::empty({1, seq_len(), D});
  for (int64_t t = 0; t < seq_len(); ++t)
    std::memcpy(out.data<float>() + t * D, xf.data<float>() + slot_of_token_[t] * D, D * 4);
  return out;
}

Tensor state_rows(const Tensor& state, int64_t d_pad, int64_t rows) {
  MESHNN_CHECK(state.defined(), "state is undefined");
  const bool ok_rank = state.rank() == 1 || (state.rank() == 2 && state.dim(0) == 1) ||
                       (state.rank() == 3 && state.dim(0) == 1 && state.dim(1) == 1);
  MESHNN_CHECK_AS(ShapeError, ok_rank, "state must be [1, 1, D_max], got ",
                  shape_str(state.shape()));
  const int64_t d = state.dim(-1);
  MESHNN_CHECK(rows > 0 && d_pad > 0, "state_rows: rows and d_pad must be positive");
  MESHNN_CHECK_AS(ShapeError, d <= d_pad, "state width ", d, " does not fit state_dim_pad=", d_pad);
  const Tensor s = state.to(DType::f32);
  const float* p = s.data<float>();
  for (int64_t i = 0; i < d; ++i)
    MESHNN_CHECK(std::isfinite(p[i]), "state contains non-finite values (state[", i, "] = ", p[i],
                 ")");
  Tensor out({1, 1, rows, d_pad});
  std::memcpy(out.data<float>(), p, sizeof(float) * d);
  return out;
}
}  // namespace meshnn::gr00t
