#include "dnnl/matmul.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "meshnn/core/bf16.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/error.h"
#include "meshnn/core/profile.h"

namespace meshnn::dnnl_glue {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dnnl::engine& cpu_engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}
dnnl::stream& cpu_stream() {
  // One stream per thread: mesh devices are threads and each runs its own primitives.
  thread_local dnnl::stream s(cpu_engine());
  return s;
}

[[noreturn]] void rethrow(const dnnl::error& e, const std::string& what) {
  throw BackendError(detail::concat("oneDNN matmul ", what, ": ", e.what(), " (status ",
                                    static_cast<int>(e.status),
                                    "); run with ONEDNN_VERBOSE=1 for details"));
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// LinearPrimitive
// ------------------------------------------------------------------------------------------------

// What every fork of a primitive shares: the weights (and bias) as given, and the packed copies
// made for plans. Immutable after construction except the packed store, which only plan building
// touches (under its mutex; never the forward path).
struct LinearPrimitive::Shared {
  int64_t K = 0, N = 0;
  PostOp act = PostOp::none;
  Precision precision = Precision::fp32;
  bool native_bf16 = false;
  Tensor weights;  // f32 (rounded to bf16 values in emulated bf16), user layout
  WeightLayout layout = WeightLayout::in_out;
  Tensor bias;  // (N) f32 or undefined
  dnnl::memory::desc user_wei_md;

  // Packed weights per weights descriptor (the packed layout may depend on M), made once.
  std::mutex packed_mu;
  std::vector<std::pair<dnnl::memory::desc, dnnl::memory>> packed;

  dnnl::memory packed_weights(const dnnl::memory::desc& want) {
    std::lock_guard<std::mutex> lock(packed_mu);
    for (auto& [md, mem] : packed)
      if (md == want) return mem;
    dnnl::memory user(user_wei_md, cpu_engine(), weights.raw());
    dnnl::memory mem;
    if (want == user_wei_md) {
      mem = user;  // the primitive takes the file's layout as is: no copy
    } else {
      // Prepack once (and convert f32 → bf16 for the native path), never per call.
      mem = dnnl::memory(want, cpu_engine());
      dnnl::reorder(user, mem).execute(cpu_stream(), user, mem);
      cpu_stream().wait();
    }
    packed.emplace_back(want, mem);
    return mem;
  }
};

// Per fork: the plans and scratch buffers (mutated by every run).
struct LinearPrimitive::Impl {
  std::shared_ptr<Shared> sh;
  int64_t K = 0, N = 0;  // copies of sh's
  PostOp act = PostOp::none;
  Precision precision = Precision::fp32;
  bool native_bf16 = false;

  struct Plan {
    dnnl::matmul::primitive_desc pd;
    dnnl::matmul prim;
    dnnl::memory src_mem, wei_mem, bias_mem, dst_mem;
    Tensor src_scratch;  // bf16 (native) or bf16-rounded f32 (emulated) copy of src
  };
  // (M, ldd, accumulate) → plan, native bf16 or packed f32
  std::map<std::tuple<int64_t, int64_t, bool>, Plan> plans;
  // fp32 on the matmul primitive with its weights packed once (set_packed_f32): at few rows
  // (M ≈ 50) dnnl_sgemm re-packs the whole weight matrix on every call and ran at a third of
  // the primitive's speed on AVX-512 for GR00T's DiT shapes (M 49, K 1536, N 6144).
  bool packed_f32 = false;
  bool use_primitive() const { return native_bf16 || (packed_f32 && precision == Precision::fp32); }

  // f32 path (fp32 and emulated bf16): oneDNN's sgemm on the weights in their user layout, with
  // the bias written into dst first (beta = 1) and the activation applied in place afterwards.
  // Why not the matmul primitive: on AVX2 its gemm-based implementation runs some shapes on one
  // thread — every call with a sum post-op (the residual accumulate) and e.g. M=256, N=3072 —
  // measured at ~90 GFLOP/s where dnnl_sgemm on the same operands reaches 150-170 on 2 threads.
  std::map<int64_t, Tensor> round_scratch;  // M → (M, K) bf16-rounded src (emulated bf16)
  std::map<std::pair<int64_t, int64_t>, std::pair<dnnl::eltwise_forward, dnnl::memory>> act_plans;

  void apply_activation(float* dst, int64_t M, int64_t ldd) {
    if (act == PostOp::none) return;
    if (act == PostOp::relu) {
#pragma omp parallel for schedule(static)
      for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) dst[r * ldd + c] = std::max(dst[r * ldd + c], 0.f);
      return;
    }
    // GELU-tanh through oneDNN's eltwise (the same formula its fused post-op used), in place.
    const auto key = std::make_pair(M, ldd);
    auto it = act_plans.find(key);
    if (it == act_plans.end()) {
      dnnl::memory::desc md({M, N}, dt::f32, dnnl::memory::dims{ldd, 1});
      dnnl::eltwise_forward::primitive_desc pd(
          dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                      dnnl::algorithm::eltwise_gelu_tanh, md, 0.f, 0.f),
          cpu_engine());
      it = act_plans
               .emplace(key, std::make_pair(dnnl::eltwise_forward(pd),
                                            dnnl::memory(md, cpu_engine(), DNNL_MEMORY_NONE)))
               .first;
    }
    auto& [prim, mem] = it->second;
    mem.set_data_handle(dst);
    prim.execute(cpu_stream(), {{DNNL_ARG_SRC, mem}, {DNNL_ARG_DST, mem}});
    cpu_stream().wait();
  }

  // dst (M, N; ldd) = act(src (M, K; lda) · W + b), or += src · W + b.
  void run_sgemm(const float* src, int64_t M, int64_t lda, float* dst, int64_t ldd,
                 bool accumulate) {
    float beta = accumulate ? 1.f : 0.f;
    if (sh->bias.defined()) {
      const float* b = sh->bias.data<float>();
#pragma omp parallel for schedule(static)
      for (int64_t r = 0; r < M; ++r) {
        float* d = dst + r * ldd;
        if (accumulate)
          for (int64_t c = 0; c < N; ++c) d[c] += b[c];
        else
          std::memcpy(d, b, sizeof(float) * N);
      }
      beta = 1.f;
    }
    const bool out_in = sh->layout == WeightLayout::out_in;
    const dnnl_status_t st = dnnl_sgemm('N', out_in ? 'T' : 'N', M, N, K, 1.f, src, lda,
                                        sh->weights.data<float>(), out_in ? K : N, beta, dst, ldd);
    if (st != dnnl_success)
      throw BackendError(detail::concat("oneDNN sgemm M=", M, " K=", K, " N=", N,
                                        " failed (status ", static_cast<int>(st), ")"));
    apply_activation(dst, M, ldd);
  }

  // Native bf16 only (f32 and emulated bf16 go through run_sgemm): the primitive reads a
  // contiguous bf16 copy of the activations, so the caller's row stride is not part of the plan.
  Plan& plan(int64_t M, int64_t ldd, bool accumulate) {
    const auto key = std::make_tuple(M, ldd, accumulate);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
    try {
      dnnl::post_ops po;
      if (accumulate) po.append_sum(1.f);
      if (act == PostOp::relu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      if (act == PostOp::gelu_tanh)
        po.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_tanh, 0.f, 0.f);
      dnnl::primitive_attr attr;
      attr.set_post_ops(po);
      const dt src_dt = native_bf16 ? dt::bf16 : dt::f32;
      dnnl::memory::desc src_md({M, K}, src_dt, dnnl::memory::dims{K, 1});
      dnnl::memory::desc wei_md({K, N}, src_dt, tag::any);
      dnnl::memory::desc dst_md({M, N}, dt::f32, dnnl::memory::dims{ldd, 1});
      dnnl::memory::desc bias_md;
      if (sh->bias.defined()) bias_md = dnnl::memory::desc({1, N}, dt::f32, tag::ab);
      dnnl::matmul::desc d = sh->bias.defined()
                                 ? dnnl::matmul::desc(src_md, wei_md, bias_md, dst_md)
                                 : dnnl::matmul::desc(src_md, wei_md, dst_md);
      Plan p;
      p.pd = dnnl::matmul::primitive_desc(d, attr, cpu_engine());
      p.prim = dnnl::matmul(p.pd);
      p.wei_mem = sh->packed_weights(p.pd.weights_desc());
      p.src_mem = dnnl::memory(src_md, cpu_engine(), DNNL_MEMORY_NONE);
      p.dst_mem = dnnl::memory(dst_md, cpu_engine(), DNNL_MEMORY_NONE);
      if (sh->bias.defined()) p.bias_mem = dnnl::memory(bias_md, cpu_engine(), sh->bias.raw());
      p.src_scratch = Tensor::empty({M, K}, native_bf16 ? DType::bf16 : DType::f32);
      return plans.emplace(key, std::move(p)).first->second;
    } catch (const dnnl::error& e) {
      rethrow(e, detail::concat("plan M=", M, " K=", K, " N=", N));
    }
  }
};

LinearPrimitive::LinearPrimitive(const Tensor& weights, WeightLayout layout, const Tensor& bias,
                                 PostOp act, Precision precision)
    : impl_(std::make_unique<Impl>()) {
  auto sh = std::make_shared<Shared>();
  MESHNN_CHECK_AS(ShapeError, weights.defined() && weights.rank() == 2,
                  "LinearPrimitive: weights must be 2-D, got ",
                  weights.defined() ? shape_str(weights.shape()) : "undefined");
  weights.check_dtype(DType::f32);
  MESHNN_CHECK_AS(Unsupported, precision == Precision::fp32 || precision == Precision::bf16,
                  "LinearPrimitive: precision ", precision_name(precision),
                  " is not implemented for matmul (fp32 | bf16)");
  Shared& m = *sh;
  m.layout = layout;
  m.K = layout == WeightLayout::in_out ? weights.dim(0) : weights.dim(1);
  m.N = layout == WeightLayout::in_out ? weights.dim(1) : weights.dim(0);
  m.act = act;
  m.precision = precision;
  if (bias.defined()) {
    MESHNN_CHECK_AS(ShapeError, bias.numel() == m.N, "LinearPrimitive: bias has ", bias.numel(),
                    " values, expected ", m.N);
    m.bias = bias.dtype() == DType::f32 ? bias : bias.to(DType::f32);
  }
  m.weights = weights;
  if (precision == Precision::bf16) {
    // Probe the native kernel once; AVX2 machines report unimplemented.
    if (cpu_features().avx512_bf16) {
      try {
        dnnl::memory::desc s({1, m.K}, dt::bf16, tag::ab), w({m.K, m.N}, dt::bf16, tag::any),
            dd({1, m.N}, dt::f32, tag::ab);
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(s, w, dd), cpu_engine(), true);
        m.native_bf16 = static_cast<bool>(pd);
      } catch (const dnnl::error&) {
        m.native_bf16 = false;
      }
    }
    if (!m.native_bf16) {
      // Emulation: bf16-valued weights kept in f32 (a private copy; the caller's tensor is
      // untouched).
      m.weights = weights.clone();
      float* w = m.weights.data<float>();
      for (int64_t i = 0; i < m.weights.numel(); ++i) w[i] = round_to_bf16(w[i]);
    }
  }
  m.user_wei_md = layout == WeightLayout::in_out ? dnnl::memory::desc({m.K, m.N}, dt::f32, tag::ab)
                                                 : dnnl::memory::desc({m.K, m.N}, dt::f32, tag::ba);
  impl_->sh = sh;
  impl_->K = m.K;
  impl_->N = m.N;
  impl_->act = m.act;
  impl_->precision = m.precision;
  impl_->native_bf16 = m.native_bf16;
}

LinearPrimitive::LinearPrimitive(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::unique_ptr<LinearPrimitive> LinearPrimitive::fork() const {
  auto impl = std::make_unique<Impl>();
  impl->sh = impl_->sh;
  impl->K = impl_->K;
  impl->N = impl_->N;
  impl->act = impl_->act;
  impl->precision = impl_->precision;
  impl->native_bf16 = impl_->native_bf16;
  impl->packed_f32 = impl_->packed_f32;
  return std::unique_ptr<LinearPrimitive>(new LinearPrimitive(std::move(impl)));
}

LinearPrimitive::~LinearPrimitive() = default;

int64_t LinearPrimitive::in_features() const { return impl_->K; }
int64_t LinearPrimitive::out_features() const { return impl_->N; }
bool LinearPrimitive::native_bf16() const { return impl_->native_bf16; }

void LinearPrimitive::set_packed_f32(bool on) {
  MESHNN_CHECK(impl_->plans.empty(), "LinearPrimitive: set_packed_f32 after the first run");
  impl_->packed_f32 = on;
}

void LinearPrimitive::prepare(int64_t M, bool accumulate) {
  if (impl_->use_primitive()) impl_->plan(M, impl_->N, accumulate);
}

std::string LinearPrimitive::impl_info(int64_t M, bool accumulate) {
  if (!impl_->use_primitive()) return "dnnl_sgemm";
  return impl_->plan(M, impl_->N, accumulate).pd.impl_info_str();
}

void LinearPrimitive::run(const float* src, int64_t M, int64_t lda, float* dst, int64_t ldd,
                          bool accumulate) {
  Impl& m = *impl_;
  MESHNN_CHECK(!(accumulate && m.act != PostOp::none),
               "LinearPrimitive: accumulate with an activation is not supported");
  if (M == 0) return;
  ProfileScope prof("matmul");
  if (!m.use_primitive()) {
    if (m.precision == Precision::fp32) return m.run_sgemm(src, M, lda, dst, ldd, accumulate);
    // Emulated bf16: the activations rounded to bf16 values, as the native kernel's input is.
    Tensor& scratch = m.round_scratch[M];
    if (!scratch.defined()) scratch = Tensor::empty({M, m.K});
    float* s = scratch.data<float>();
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < M; ++r)
      for (int64_t k = 0; k < m.K; ++k) s[r * m.K + k] = round_to_bf16(src[r * lda + k]);
    return m.run_sgemm(s, M, m.K, dst, ldd, accumulate);
  }
  // Native bf16: the activations converted to bf16 for the primitive; packed f32: read in place
  // when dense, else copied to dense rows.
  Impl::Plan& p = m.plan(M, ldd, accumulate);
  const void* src_ptr = src;
  if (m.native_bf16) {
    bf16* s = p.src_scratch.data<bf16>();
    // Few rows (the DiT's ≈ 50): converting serially is cheaper than waking the thread team,
    // which costs a scheduler tick per region on a loaded machine.
#pragma omp parallel for schedule(static) if (M * m.K > (int64_t{1} << 20))
    for (int64_t r = 0; r < M; ++r)
      for (int64_t k = 0; k < m.K; ++k) s[r * m.K + k] = to_bf16(src[r * lda + k]);
    src_ptr = s;
  } else if (lda != m.K) {
    float* s = p.src_scratch.data<float>();
    for (int64_t r = 0; r < M; ++r) std::memcpy(s + r * m.K, src + r * lda, sizeof(float) * m.K);
    src_ptr = s;
  }
  try {
    p.src_mem.set_data_handle(const_cast<void*>(src_ptr));
    p.dst_mem.set_data_handle(dst);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, p.src_mem}, {DNNL_ARG_WEIGHTS, p.wei_mem}, {DNNL_ARG_DST, p.dst_mem}};
    if (m.sh->bias.defined()) args.emplace(DNNL_ARG_BIAS, p.bias_mem);
    p.prim.execute(cpu_stream(), args);
    cpu_stream().wait();
  } catch (const dnnl::error& e) {
    rethrow(e, detail::concat("execute M=", M, " K=", m.K, " N=", m.N));
  }
}

// ------------------------------------------------------------------------------------------------
// strided batched matmul
// ------------------------------------------------------------------------------------------------

namespace {

struct StridedPlan {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  dnnl::memory src_mem, wei_mem, dst_mem;
};

// The thread budget is part of the key: a oneDNN primitive fixes its work split when it is
// created, and on some ISAs (AVX2's gemm-based matmul) that split is over K, so a plan made under
// 2 threads and reused under 1 sums in another order (seen: a 1-thread GR00T policy after a
// 2-thread adapter in one process differed from a fresh process by 1 ulp).
using StridedKey = std::tuple<int64_t, int64_t, int64_t, int64_t, std::vector<int64_t>, float, int>;

StridedKey strided_key(const StridedMatmul& d) {
  std::vector<int64_t> s;
  for (int i = 0; i < 3; ++i) {
    s.push_back(d.src_strides[i]);
    s.push_back(d.wei_strides[i]);
    s.push_back(d.dst_strides[i]);
  }
  return {d.batch, d.M, d.K, d.N, std::move(s), d.scale, omp_get_max_threads()};
}

StridedPlan& strided_plan(const StridedMatmul& d) {
  thread_local std::map<StridedKey, StridedPlan> cache;
  const StridedKey key = strided_key(d);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  MESHNN_CHECK_AS(ShapeError, d.batch > 0 && d.M > 0 && d.K > 0 && d.N > 0,
                  "strided_matmul: empty dims batch=", d.batch, " M=", d.M, " K=", d.K, " N=", d.N);
  try {
    auto md = [](int64_t b, int64_t r, int64_t c, const int64_t* st) {
      return dnnl::memory::desc({b, r, c}, dt::f32, dnnl::memory::dims{st[0], st[1], st[2]});
    };
    dnnl::memory::desc src_md = md(d.batch, d.M, d.K, d.src_strides);
    dnnl::memory::desc wei_md = md(d.batch, d.K, d.N, d.wei_strides);
    dnnl::memory::desc dst_md = md(d.batch, d.M, d.N, d.dst_strides);
    dnnl::primitive_attr attr;
    if (d.scale != 1.f) attr.set_output_scales(0, {d.scale});
    StridedPlan p;
    p.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src_md, wei_md, dst_md), attr,
                                        cpu_engine());
    p.prim = dnnl::matmul(p.pd);
    p.src_mem = dnnl::memory(src_md, cpu_engine(), DNNL_MEMORY_NONE);
    p.wei_mem = dnnl::memory(wei_md, cpu_engine(), DNNL_MEMORY_NONE);
    p.dst_mem = dnnl::memory(dst_md, cpu_engine(), DNNL_MEMORY_NONE);
    return cache.emplace(key, std::move(p)).first->second;
  } catch (const dnnl::error& e) {
    rethrow(e, detail::concat("strided plan batch=", d.batch, " M=", d.M, " K=", d.K, " N=", d.N));
  }
}

}  // namespace

void strided_matmul(const StridedMatmul& d, const float* src, const float* wei, float* dst) {
  ProfileScope prof("batched_matmul");
  StridedPlan& p = strided_plan(d);
  try {
    p.src_mem.set_data_handle(const_cast<float*>(src));
    p.wei_mem.set_data_handle(const_cast<float*>(wei));
    p.dst_mem.set_data_handle(dst);
    p.prim.execute(
        cpu_stream(),
        {{DNNL_ARG_SRC, p.src_mem}, {DNNL_ARG_WEIGHTS, p.wei_mem}, {DNNL_ARG_DST, p.dst_mem}});
    cpu_stream().wait();
  } catch (const dnnl::error& e) {
    rethrow(e, "strided execute");
  }
}

}  // namespace meshnn::dnnl_glue
