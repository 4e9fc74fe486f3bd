// libFuzzer target: the weights-only torch.save reader on arbitrary bytes. Each input is read as a
// whole archive (TorchCheckpoint::from_bytes, every tensor touched; on odd sizes with the CRC-32
// checks off, so mutations reach the pickle and the tensor layouts behind them) and as a bare
// data.pkl (the restricted unpickler alone). A meshnn::Error is the expected outcome for bad
// input; any other exception or crash is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "io/torch_pickle.h"
#include "meshnn/io/torch_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint64_t sum = 0;
  try {
    const auto ck = meshnn::io::TorchCheckpoint::from_bytes(std::vector<uint8_t>(data, data + size),
                                                            "fuzz", size % 2 == 0);
    for (const auto& k : ck.keys()) {
      const meshnn::Tensor t = ck.get(k);
      // Touch every byte so ASan sees any out-of-bounds view.
      const auto* p = static_cast<const uint8_t*>(t.raw());
      for (size_t i = 0; i < t.nbytes(); ++i) sum += p[i];
    }
  } catch (const meshnn::Error&) {
  }
  try {
    const auto sd = meshnn::io::pickle::read_state_dict(data, size, "fuzz");
    for (const auto& [k, spec] : sd.tensors) {
      if (spec.shape.size() != spec.stride.size()) std::abort();
      sum += k.size() + spec.offset;
    }
  } catch (const meshnn::Error&) {
  }
  volatile uint64_t sink = sum;
  (void)sink;
  return 0;
}
