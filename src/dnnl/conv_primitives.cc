#include "dnnl/conv_primitives.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <unordered_map>

#include "core/env.h"
#include "dnnl/conv_plan_cache.h"
#include "dnnl/conv_precision.h"
#include "dnnl/conv_weights.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/error.h"

namespace meshnn::dnnl_glue {
namespace {

using dnnl::memory;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dnnl::engine& cpu_engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

using Term = PrecisionTerm;

[[noreturn]] void rethrow_dnnl(const dnnl::error& e, const std::string& what) {
  throw BackendError(detail::concat("oneDNN ", what, " failed: ", e.what(), " (status ",
                                    static_cast<int>(e.status),
                                    "); rerun with ONEDNN_VERBOSE=1 for the cause"));
}

// One primitive and the packed-weights layout it wants.
struct Prim {
  dnnl::primitive prim;
  memory::desc weights_md;
  std::string impl;
  std::vector<std::optional<memory>> weights;  // per weight term, resolved on first use
};

struct Plan {
  memory::desc src_md, dst_md;  // f32 / bf16 src, f32 dst, channels-last
  // The primitive's geometry (oneDNN conventions: zero-based dilation) and the user weights view.
  memory::dims strides, dil, pl, pr;
  memory::desc user_w_md;  // PyTorch buffer described in the plan's rank
  memory::dims w_dims;     // logical weights dims
  // Dilation folding (see fold_dilation): the f32 input is copied into a padded scratch of
  // fold_rows rows (zero halo included), and the conv writes fold_out_rows rows into a scratch
  // that is copied back; both unused (0) on the zero-copy fold and on unfolded plans.
  bool folded = false;
  int64_t fold_rows = 0, fold_out_rows = 0, fold_pl = 0;
  std::vector<float> fold_src, fold_dst;
  // Indexed by (sum post-op ? 2 : 0) | (bias ? 1 : 0); created lazily.
  std::array<std::optional<Prim>, 4> prims;
  std::vector<uint16_t> src_hi_bf16, src_lo_bf16;  // native bf16 path
  std::vector<float> src_hi_f32, src_lo_f32;       // emulated path
};

// Plans kept per ConvPrimitives object (conv_plan_cache.h).
using PlanCache = BoundedPlanCache<ConvPlanKey, Plan, 16>;

}  // namespace

struct ConvPrimitives::Impl {
  ConvSpec spec;
  bool native = false;  // native bf16 primitives in use for the bf16 modes
  std::vector<Term> terms;
  std::vector<float> bias;
  // Weight terms and their packed copies (conv_weights.h): shared with every fork.
  std::shared_ptr<ConvWeightStore> sw;
  PlanCache plans;
  dnnl::stream strm{cpu_engine()};

  bool bf16_mode() const { return spec.precision != Precision::fp32; }
  dt src_dt() const { return native && bf16_mode() ? dt::bf16 : dt::f32; }

  memory::dims spatial_dims(const std::array<int64_t, 2>& v) const {
    return spec.spatial == 1 ? memory::dims{v[0]} : memory::dims{v[0], v[1]};
  }
  memory::dims user_weight_dims() const {
    // Logical oneDNN weights {O, I, K...} for both conv and deconv.
    memory::dims d{spec.c_out, spec.c_in, spec.kernel[0]};
    if (spec.spatial == 2) d.push_back(spec.kernel[1]);
    return d;
  }
  tag user_weight_tag() const {
    if (spec.kind == ConvKind::deconv) return tag::bac;  // PyTorch (I, O, K) buffer, no copy
    return spec.spatial == 1 ? tag::oiw : tag::oihw;
  }
  tag act_tag() const { return spec.spatial == 1 ? tag::nwc : tag::nhwc; }

  int64_t out_extent(int d, int64_t in, const ConvPads& p) const {
    return conv_out_extent(spec, d, in, p);
  }

  // Packed weights for term w in the layout `md`, from the store (reordered from the PyTorch
  // buffer once, or from the first packed copy once the PyTorch-layout buffer is released). The
  // layout key is the descriptor's plain C struct.
  memory packed_for(int w, const memory::desc& user_md, const memory::desc& md) {
    void* data =
        sw->packed(w, &md.data, sizeof(md.data), md.get_size(),
                   [&](const float* user, const PackedWeights* first, void* dst_ptr) {
                     memory src;
                     if (user) {
                       src = memory(user_md, cpu_engine(), const_cast<float*>(user));
                     } else {
                       memory::desc first_md;
                       std::memcpy(&first_md.data, first->layout.data(), sizeof(first_md.data));
                       src = memory(first_md, cpu_engine(), first->data);
                     }
                     memory dst(md, cpu_engine(), dst_ptr);
                     // Also f32 → bf16 (exact: the values are bf16-representable).
                     dnnl::reorder(src, dst).execute(strm, src, dst);
                     strm.wait();
                   });
    return memory(md, cpu_engine(), data);
  }

  // The packed weights of term w for this primitive: looked up in the shared store once, then held
  // by the primitive, so a forward call takes no lock and scans nothing.
  memory weights_for(Prim& pr, const Plan& plan, int w) {
    if (pr.weights.empty()) pr.weights.resize(sw->term_count());
    if (!pr.weights[w]) pr.weights[w] = packed_for(w, plan.user_w_md, pr.weights_md);
    return *pr.weights[w];
  }

  Prim make_prim(const Plan& plan, bool sum, bool with_bias) {
    memory::desc w_md(plan.w_dims, src_dt(), tag::any);
    memory::desc b_md = with_bias ? memory::desc({spec.c_out}, dt::f32, tag::a) : memory::desc();
    dnnl::primitive_attr attr;
    if (sum) {
      dnnl::post_ops po;
      po.append_sum(1.f);
      attr.set_post_ops(po);
    }
    if (spec.kind == ConvKind::conv) {
      dnnl::convolution_forward::desc d(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, plan.src_md,
          w_md, b_md, plan.dst_md, plan.strides, plan.dil, plan.pl, plan.pr);
      dnnl::convolution_forward::primitive_desc pd(d, attr, cpu_engine(), true);
      if (!pd) throw Unsupported("oneDNN has no convolution implementation for this shape/type");
      return Prim{dnnl::convolution_forward(pd), pd.weights_desc(), pd.impl_info_str(), {}};
    }
    dnnl::deconvolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, plan.src_md,
        w_md, b_md, plan.dst_md, plan.strides, plan.dil, plan.pl, plan.pr);
    dnnl::deconvolution_forward::primitive_desc pd(d, attr, cpu_engine(), true);
    if (!pd) throw Unsupported("oneDNN has no deconvolution implementation for this shape/type");
    return Prim{dnnl::deconvolution_forward(pd), pd.weights_desc(), pd.impl_info_str(), {}};
  }

  // Dilation folding. A stride-1 1-D conv with dilation d on (T, C) rows is, with T = d·T',
  // exactly a DENSE 2-D conv with kernel (K, 1) on the same bytes viewed as (T', d, C): output
  // row d·t' + r only reads input rows d·(t' + j) + r. oneDNN 2.6 on AVX2 runs dilated nwc convs
  // as im2col + gemm (x64:gemm:jit) but dense ones with its direct jit:avx2 kernel; measured
  // 2-4x faster for C ≤ 96 and slower from C = 384 up (bench/micro/conv_bench.cc,
  // docs/benchmarks.md), hence the channel threshold.
  static constexpr int64_t kFoldMaxChannels = 192;
  bool fold_dilation() const {
    return spec.kind == ConvKind::conv && spec.spatial == 1 && spec.stride[0] == 1 &&
           spec.dilation[0] > 1 && std::max(spec.c_in, spec.c_out) <= kFoldMaxChannels &&
           fold_enabled_;
  }
  bool fold_enabled_ = true;

  Plan& plan_for(const Shape& s, const ConvPads& p) {
    const int64_t s1 = spec.spatial == 2 ? s[2] : 1;
    const ConvPlanKey key{s[0], s[1], s1, p.l[0], p.r[0], p.l[1], p.r[1], omp_get_max_threads()};
    if (Plan* hit = plans.find(key)) return *hit;
    Plan plan;
    const int64_t B = s[0];
    if (fold_dilation()) {
      const int64_t d = spec.dilation[0], K = spec.kernel[0], T = s[1];
      const int64_t T_out = out_extent(0, T, p);
      plan.folded = true;
      plan.w_dims = {spec.c_out, spec.c_in, K, 1};
      plan.user_w_md = memory::desc(plan.w_dims, dt::f32, tag::oihw);
      plan.strides = {1, 1};
      plan.dil = {0, 0};
      if (T % d == 0 && p.l[0] % d == 0 && p.r[0] % d == 0) {
        // Zero-copy: the pads are whole 2-D rows.
        plan.pl = {p.l[0] / d, 0};
        plan.pr = {p.r[0] / d, 0};
        plan.src_md = memory::desc({B, spec.c_in, T / d, d}, src_dt(), tag::nhwc);
        plan.dst_md = memory::desc({B, spec.c_out, T_out / d, d}, dt::f32, tag::nhwc);
      } else {
        // Materialise the padded input, rounded up to whole 2-D rows; valid conv; copy back.
        const int64_t rows_out = (T_out + d - 1) / d;
        plan.fold_out_rows = rows_out * d;
        plan.fold_rows = (rows_out + K - 1) * d;
        plan.fold_pl = p.l[0];
        plan.pl = {0, 0};
        plan.pr = {0, 0};
        plan.src_md = memory::desc({B, spec.c_in, rows_out + K - 1, d}, src_dt(), tag::nhwc);
        plan.dst_md = memory::desc({B, spec.c_out, rows_out, d}, dt::f32, tag::nhwc);
        plan.fold_src.assign(B * plan.fold_rows * spec.c_in, 0.f);
        plan.fold_dst.resize(B * plan.fold_out_rows * spec.c_out);
      }
    } else {
      std::array<int64_t, 2> in{s[1], s1}, outx{out_extent(0, s[1], p), 1};
      if (spec.spatial == 2) outx[1] = out_extent(1, s1, p);
      memory::dims src_dims{B, spec.c_in}, dst_dims{B, spec.c_out};
      for (int d = 0; d < spec.spatial; ++d) {
        src_dims.push_back(in[d]);
        dst_dims.push_back(outx[d]);
      }
      plan.src_md = memory::desc(src_dims, src_dt(), act_tag());
      plan.dst_md = memory::desc(dst_dims, dt::f32, act_tag());
      plan.w_dims = user_weight_dims();
      plan.user_w_md = memory::desc(plan.w_dims, dt::f32, user_weight_tag());
      plan.strides = spatial_dims(spec.stride);
      plan.dil = spatial_dims({spec.dilation[0] - 1, spec.dilation[1] - 1});
      plan.pl = spatial_dims(p.l);
      plan.pr = spatial_dims(p.r);
    }
    return plans.insert(key, std::move(plan));
  }

  Prim& prim_for(Plan& plan, const ConvPads& p, bool sum, bool with_bias) {
    auto& slot = plan.prims[(sum ? 2 : 0) | (with_bias ? 1 : 0)];
    if (!slot) slot = make_prim(plan, sum, with_bias);
    return *slot;
  }

  // hi = bf16(x), lo = bf16(x − hi), as f32 values (emulated) or bf16 storage (native).
  void split_src(const float* x, int64_t n, bool want_lo, Plan& plan) {
    if (native) {
      plan.src_hi_bf16.resize(n);
      if (want_lo) plan.src_lo_bf16.resize(n);
      split_activations_bf16(x, n, plan.src_hi_bf16.data(),
                             want_lo ? plan.src_lo_bf16.data() : nullptr);
    } else {
      plan.src_hi_f32.resize(n);
      if (want_lo) plan.src_lo_f32.resize(n);
      split_activations_f32(x, n, plan.src_hi_f32.data(),
                            want_lo ? plan.src_lo_f32.data() : nullptr);
    }
  }
  void* src_ptr(Plan& plan, SrcPart part, const float* raw) {
    if (part == SrcPart::raw) return const_cast<float*>(raw);
    if (native)
      return part == SrcPart::hi ? static_cast<void*>(plan.src_hi_bf16.data())
                                 : static_cast<void*>(plan.src_lo_bf16.data());
    return part == SrcPart::hi ? plan.src_hi_f32.data() : plan.src_lo_f32.data();
  }

  void run_conv(const Tensor& src, Tensor& dst, const ConvPads& p, bool accumulate) {
    Plan& plan = plan_for(src.shape(), p);
    const float* x = src.data<float>();
    float* y = dst.data<float>();
    const bool scratch_fold = plan.folded && plan.fold_rows > 0;
    if (scratch_fold) {
      // Padded copy of the input (zero rows stay zero from the plan's creation).
      const int64_t B = src.dim(0), T = src.dim(1), C = spec.c_in;
      for (int64_t b = 0; b < B; ++b)
        std::memcpy(plan.fold_src.data() + (b * plan.fold_rows + plan.fold_pl) * C, x + b * T * C,
                    sizeof(float) * T * C);
      x = plan.fold_src.data();
    }
    const int64_t n_src = scratch_fold ? int64_t(plan.fold_src.size()) : src.numel();
    const bool want_lo = spec.precision == Precision::bf16x3;
    if (bf16_mode()) split_src(x, n_src, want_lo, plan);
    float* y_conv = scratch_fold ? plan.fold_dst.data() : y;
    const bool acc_in_prim = accumulate && !scratch_fold;
    memory dst_m(plan.dst_md, cpu_engine(), y_conv);
    // Small terms first; bias rides on the first executed term; later terms add via the sum
    // post-op (dst += result), as does the first one when the caller asks to accumulate.
    for (size_t n = 0; n < terms.size(); ++n) {
      const Term& t = terms[terms.size() - 1 - n];
      const bool sum = n > 0 || acc_in_prim;
      const bool with_bias = spec.bias && n == 0;
      Prim& pr = prim_for(plan, p, sum, with_bias);
      memory src_m(plan.src_md, cpu_engine(), src_ptr(plan, t.src, x));
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src_m},
                                           {DNNL_ARG_WEIGHTS, weights_for(pr, plan, t.w)},
                                           {DNNL_ARG_DST, dst_m}};
      memory bias_m;
      if (with_bias) {
        bias_m = memory(memory::desc({spec.c_out}, dt::f32, tag::a), cpu_engine(), bias.data());
        args.emplace(DNNL_ARG_BIAS, bias_m);
      }
      pr.prim.execute(strm, args);
    }
    strm.wait();
    if (scratch_fold) {
      const int64_t B = dst.dim(0), To = dst.dim(1), C = spec.c_out;
      for (int64_t b = 0; b < B; ++b) {
        const float* from = plan.fold_dst.data() + b * plan.fold_out_rows * C;
        float* to = y + b * To * C;
        if (accumulate) {
#pragma omp parallel for schedule(static)
          for (int64_t i = 0; i < To * C; ++i) to[i] += from[i];
        } else {
          std::memcpy(to, from, sizeof(float) * To * C);
        }
      }
    }
  }
};

int64_t conv_out_extent(const ConvSpec& spec, int d, int64_t in, const ConvPads& p) {
  const int64_t eff = (spec.kernel[d] - 1) * spec.dilation[d] + 1;
  if (spec.kind == ConvKind::deconv) return (in - 1) * spec.stride[d] - p.l[d] - p.r[d] + eff;
  const int64_t span = in + p.l[d] + p.r[d] - eff;
  return span < 0 ? 0 : span / spec.stride[d] + 1;
}

ConvPrimitives::ConvPrimitives(const ConvSpec& spec, const Tensor& weights, const Tensor& bias)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.spec = spec;
  MESHNN_CHECK(spec.spatial == 1 || spec.spatial == 2, "conv engine: spatial rank ", spec.spatial);
  MESHNN_CHECK(!(spec.kind == ConvKind::deconv && spec.spatial != 1),
               "conv engine: only 1-D deconvolution is supported");
  weights.check_dtype(DType::f32);
  m.terms = precision_terms(spec.precision);
  m.native = cpu_features().avx512_bf16;
  // MESHNN_CONV_FOLD=0 disables dilation folding (for benchmarks and A/B checks).
  m.fold_enabled_ = env_value(EnvSwitch::conv_fold) != "0";
  if (spec.bias) {
    bias.check_dtype(DType::f32);
    m.bias.assign(bias.data<float>(), bias.data<float>() + bias.numel());
  }
  m.sw = std::make_shared<ConvWeightStore>(
      split_weights(weights.data<float>(), weights.numel(), spec.precision));
  try {
    if (m.native && m.bf16_mode()) {
      // Probe a native bf16 primitive once; fall back to exact emulation when unimplemented.
      Plan probe;
      memory::dims sd{1, spec.c_in, 64}, dd{1, spec.c_out, 1};
      if (spec.spatial == 2) {
        sd.push_back(64);
        dd.push_back(1);
      }
      probe.src_md = memory::desc(sd, dt::bf16, m.act_tag());
      ConvPads pads;
      for (int d = 0; d < spec.spatial; ++d)
        dd[2 + d] = std::max<int64_t>(1, m.out_extent(d, 64, pads));
      probe.dst_md = memory::desc(dd, dt::f32, m.act_tag());
      probe.w_dims = m.user_weight_dims();
      probe.strides = m.spatial_dims(spec.stride);
      probe.dil = m.spatial_dims({spec.dilation[0] - 1, spec.dilation[1] - 1});
      probe.pl = m.spatial_dims(pads.l);
      probe.pr = m.spatial_dims(pads.r);
      try {
        m.make_prim(probe, false, false);
      } catch (const Unsupported&) {
        m.native = false;
      }
    }
  } catch (const dnnl::error& e) {
    rethrow_dnnl(e, "conv engine setup");
  }
}

ConvPrimitives::~ConvPrimitives() = default;

bool ConvPrimitives::native_bf16() const { return impl_->native && impl_->bf16_mode(); }
const void* ConvPrimitives::weights_identity() const { return impl_->sw.get(); }

size_t ConvPrimitives::plan_count() const { return impl_->plans.size(); }

std::unique_ptr<ConvPrimitives> ConvPrimitives::fork() const {
  std::unique_ptr<ConvPrimitives> e(new ConvPrimitives());
  e->impl_ = std::make_unique<Impl>();
  Impl& m = *e->impl_;
  const Impl& o = *impl_;
  m.spec = o.spec;
  m.native = o.native;
  m.terms = o.terms;
  m.bias = o.bias;
  m.sw = o.sw;  // shared by reference: no copy, no repacking
  m.fold_enabled_ = o.fold_enabled_;
  return e;
}

void ConvPrimitives::run(const Tensor& src, Tensor& dst, const ConvPads& pads, bool accumulate) {
  try {
    impl_->run_conv(src, dst, pads, accumulate);
  } catch (const dnnl::error& e) {
    rethrow_dnnl(e, "convolution");
  }
}

std::string ConvPrimitives::impl_info(const Shape& src_shape, const ConvPads& pads) {
  Impl& m = *impl_;
  try {
    Plan& plan = m.plan_for(src_shape, pads);
    const size_t nt = m.terms.size();
    std::string info;
    for (size_t n = 0; n < nt; ++n) {
      Prim& pr = m.prim_for(plan, pads, n > 0, m.spec.bias && n == 0);
      (void)m.weights_for(pr, plan, m.terms[nt - 1 - n].w);
      if (n == 0) info = pr.impl;
    }
    if (plan.folded)
      info += plan.fold_rows ? " [dilation folded, padded copy]" : " [dilation folded]";
    if (m.bf16_mode()) info += m.native ? " (native bf16)" : " (bf16 emulated in f32)";
    return info;
  } catch (const dnnl::error& e) {
    rethrow_dnnl(e, "convolution setup");
  }
}

}  // namespace meshnn::dnnl_glue
