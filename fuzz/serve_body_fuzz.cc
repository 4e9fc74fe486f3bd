// libFuzzer target: the request-body parsers of `meshnn serve` on arbitrary bytes: the one-shot
// bodies (.npy inputs in each served layout, mono and multi-channel WAV), the stream's binary
// frames and text control messages, and the header values (Accept, Content-Type, the stream query).
// A meshnn::Error is the expected answer to bad input; a crash, a hang or any other exception is a
// bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "meshnn/core/error.h"
#include "serve/body.h"

namespace {

template <class F>
void expect_ok_or_error(F&& f) {
  try {
    f();
  } catch (const meshnn::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshnn;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  // The input layouts of the served models: a 4-D latent with one item, a free-batch mel and a
  // free-batch latent.
  for (const AudioIoSpec& spec : {AudioIoSpec{"latent", {1, 8, -1, 16}, 2, 25, 0},
                                  AudioIoSpec{"mel", {-1, 100, -1}, 2, 93.75, 0},
                                  AudioIoSpec{"latent", {-1, 32, -1}, 2, 40, 0}}) {
    expect_ok_or_error([&] {
      const Tensor t = serve::input_from_npy(body, spec);
      if (t.rank() != static_cast<int64_t>(spec.shape.size())) std::abort();
      for (size_t i = 0; i < spec.shape.size(); ++i) {
        const int64_t d = t.dim(static_cast<int>(i));
        if (spec.shape[i] >= 0 && static_cast<int>(i) != spec.time_axis && d != spec.shape[i])
          std::abort();
        if (d < 1 || (spec.shape[i] < 0 && static_cast<int>(i) != spec.time_axis && d > 64))
          std::abort();
      }
    });
  }
  expect_ok_or_error([&] { (void)serve::mono_wav_from_body(body, 24000); });
  expect_ok_or_error([&] {
    const Tensor t = serve::batch_wav_from_body(body, 32000);
    if (t.rank() != 3 || t.dim(0) > 64 || t.dim(1) != 1 || t.dim(2) < 1) std::abort();
  });
  // Frame sizes of the served models: LTX latent frames and 80 / 100 / 128 mel bins.
  for (int64_t frame : {int64_t{80}, int64_t{100}, int64_t{128}}) {
    expect_ok_or_error([&] {
      const Tensor f = serve::frames_from_message(body, frame);
      if (f.rank() != 2 || f.dim(1) != frame || f.nbytes() != size) std::abort();
      const float* p = f.data<float>();
      for (int64_t i = 0; i < f.numel(); ++i)
        if (!std::isfinite(p[i])) std::abort();  // non-finite frames must be refused
    });
  }
  expect_ok_or_error([&] { (void)serve::parse_control(body); });
  expect_ok_or_error([&] {
    const serve::StreamQuery q = serve::parse_stream_query(body);
    if (q.items < 1 || q.items > 64) std::abort();
  });
  expect_ok_or_error([&] {
    const std::string p = serve::decode_path(body);
    if (p.size() > size || p.find('\0') != std::string::npos) std::abort();
  });
  (void)serve::parse_accept(body);
  (void)serve::negotiate(body, {serve::OutputFormat::npy});
  (void)serve::parse_content_type(body);
  return 0;
}
