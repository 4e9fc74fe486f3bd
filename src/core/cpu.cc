#include "meshnn/core/cpu.h"

#include <cpuid.h>
#include <sched.h>

#include <cstdint>
#include <cstring>

namespace meshnn {
namespace {

uint64_t xgetbv0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = (c >> 27) & 1;
  const bool fma = (c >> 12) & 1;
  const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool os_avx = (xcr0 & 0x6) == 0x6;                    // XMM + YMM state
  const bool os_avx512 = (xcr0 & 0xe6) == 0xe6;               // + opmask, ZMM_Hi256, Hi16_ZMM
  const bool os_amx = (xcr0 & (3ull << 17)) == (3ull << 17);  // XTILECFG + XTILEDATA
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.avx2 = os_avx && ((b >> 5) & 1);
    f.fma = os_avx && fma;
    f.avx512f = os_avx512 && ((b >> 16) & 1);
    f.avx512bw = os_avx512 && ((b >> 30) & 1);
    f.amx_bf16 = os_amx && ((d >> 22) & 1);
    f.amx_tile = os_amx && ((d >> 24) & 1);
    unsigned a1, b1, c1, d1;
    if (__get_cpuid_count(7, 1, &a1, &b1, &c1, &d1)) f.avx512_bf16 = f.avx512f && ((a1 >> 5) & 1);
  }
  unsigned brand[12];
  if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
    for (unsigned i = 0; i < 3; ++i)
      __get_cpuid(0x80000002 + i, &brand[4 * i], &brand[4 * i + 1], &brand[4 * i + 2],
                  &brand[4 * i + 3]);
    char s[49];
    std::memcpy(s, brand, 48);
    s[48] = 0;
    f.brand = s;
    while (!f.brand.empty() && f.brand.back() == ' ') f.brand.pop_back();
    while (!f.brand.empty() && f.brand.front() == ' ') f.brand.erase(0, 1);
  }
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

std::string cpu_features_str() {
  const CpuFeatures& f = cpu_features();
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (on) s += s.empty() ? name : std::string(" ") + name;
  };
  add(f.avx2, "avx2");
  add(f.fma, "fma");
  add(f.avx512f, "avx512f");
  add(f.avx512bw, "avx512bw");
  add(f.avx512_bf16, "avx512_bf16");
  add(f.amx_tile, "amx_tile");
  add(f.amx_bf16, "amx_bf16");
  return s.empty() ? "baseline x86-64" : s;
}

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  const int n = CPU_COUNT(&set);
  return n > 0 ? n : 1;
}

}  // namespace meshnn
