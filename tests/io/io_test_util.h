// Shared helpers for the io/ tests: scratch paths, random tensors of every dtype, byte-level
// equality, and an assertion that a call throws FormatError naming the file and an offset.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>

#include "meshnn/core/error.h"
#include "meshnn/core/tensor.h"

namespace meshnn::test {

// Named by test and process, so two runs of the suite at once (two build trees) never share it.
inline std::filesystem::path scratch_path(const ::testing::TestInfo& info) {
  return std::filesystem::temp_directory_path() /
         (std::string("meshnn_io_") + info.test_suite_name() + "_" + info.name() + "_" +
          std::to_string(::getpid()));
}

// Removes a test's scratch directory when the test ends (pass or fail): the suite leaves nothing
// in the temp folder.
class ScratchCleanup : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& info) override {
    std::error_code ec;
    std::filesystem::remove_all(scratch_path(info), ec);
  }
};

// A fresh per-test scratch directory under the system temp dir, removed when the test ends.
inline std::string scratch_dir() {
  static const bool registered = [] {
    ::testing::UnitTest::GetInstance()->listeners().Append(new ScratchCleanup);
    return true;
  }();
  (void)registered;
  const auto dir = scratch_path(*::testing::UnitTest::GetInstance()->current_test_info());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Random non-zero data of any dtype (f16 / bf16 as random finite bit patterns).
inline Tensor random_tensor(const Shape& shape, DType dt, uint32_t seed) {
  Tensor t = Tensor::empty(shape, dt);
  std::mt19937 rng(seed);
  auto* p = static_cast<uint8_t*>(t.raw());
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    switch (dt) {
      case DType::f32: {
        float v = std::uniform_real_distribution<float>(-3, 3)(rng) + 0.001f;
        std::memcpy(p + 4 * i, &v, 4);
        break;
      }
      case DType::f64: {
        double v = std::uniform_real_distribution<double>(-3, 3)(rng) + 1e-9;
        std::memcpy(p + 8 * i, &v, 8);
        break;
      }
      case DType::bf16:
      case DType::f16: {
        uint16_t v = static_cast<uint16_t>(0x3c00 + rng() % 0x0800);
        std::memcpy(p + 2 * i, &v, 2);
        break;
      }
      case DType::i64: {
        int64_t v = static_cast<int64_t>(rng()) * 4099 - (int64_t{1} << 40) + 1;
        std::memcpy(p + 8 * i, &v, 8);
        break;
      }
      case DType::i32: {
        int32_t v = static_cast<int32_t>(rng() | 1u);
        std::memcpy(p + 4 * i, &v, 4);
        break;
      }
      case DType::u8:
        p[i] = static_cast<uint8_t>(1 + rng() % 255);
        break;
      case DType::boolean:
        p[i] = static_cast<uint8_t>(rng() & 1);
        break;
    }
  }
  return t;
}

inline ::testing::AssertionResult same_bytes(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return ::testing::AssertionFailure() << dtype_name(a.dtype()) << shape_str(a.shape()) << " vs "
                                         << dtype_name(b.dtype()) << shape_str(b.shape());
  if (a.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) != 0)
    return ::testing::AssertionFailure() << "bytes differ";
  return ::testing::AssertionSuccess();
}

// Runs fn, expects FormatError whose message contains `file` and "offset".
inline ::testing::AssertionResult throws_format(const std::function<void()>& fn,
                                                const std::string& file,
                                                const std::string& also = "") {
  try {
    fn();
  } catch (const FormatError& e) {
    const std::string msg = e.what();
    if (msg.find(file) == std::string::npos)
      return ::testing::AssertionFailure() << "message does not name '" << file << "': " << msg;
    if (msg.find("offset") == std::string::npos)
      return ::testing::AssertionFailure() << "message has no offset: " << msg;
    if (!also.empty() && msg.find(also) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks '" << also << "': " << msg;
    return ::testing::AssertionSuccess() << msg;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw something else: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

}  // namespace meshnn::test
