// A downstream project using the installed meshnn package: builds a tensor, splits it into bf16
// hi/lo parts and checks the split is exact.
#include <cstdio>

#include "meshnn/core/bf16.h"
#include "meshnn/core/tensor.h"

int main() {
  meshnn::Tensor t({2, 3});
  float* p = t.data<float>();
  for (int i = 0; i < 6; ++i) p[i] = 0.1f * static_cast<float>(i + 1);
  for (int i = 0; i < 6; ++i) {
    const meshnn::SplitBf16 s = meshnn::split_bf16(p[i]);
    if (s.hi + s.lo != p[i]) return 1;
  }
  std::printf("meshnn consumer ok: tensor %s\n", meshnn::shape_str(t.shape()).c_str());
  return 0;
}
