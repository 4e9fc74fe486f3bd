// The toy audio VAE's checkpoint: its layers as a struct of named LayerDescs (the description
// type every audio model uses, models/common/audio_description.h), walked by for_each_layer; the
// one file that spells the toy's checkpoint keys. From it: the all-keys-at-once check of a file
// (check_tensor_set), and a seeded random checkpoint folder for tests.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "meshnn/core/tensor.h"
#include "models/common/audio_description.h"
#include "support/toy_model/config.h"

namespace meshnn::test::toy {

struct Weights {
  // decode: latents (B, T, C) rows → pre (k3) → up (transposed, ×hop) → act (anti-aliased
  // SnakeBeta) → post (k3, H → 1).
  models::LayerDesc dec_pre, dec_up, dec_act, dec_post;
  // encode: samples (B, L, 1) rows → pre (k3, 1 → H) → down (k = 2·hop, stride hop) → heads (k1,
  // H → 2C: [mean | logs]).
  models::LayerDesc enc_pre, enc_down, enc_heads;

  template <class F>
  void for_each_layer(F&& f) const {
    for (const models::LayerDesc* d :
         {&dec_pre, &dec_up, &dec_act, &dec_post, &enc_pre, &enc_down, &enc_heads})
      f(*d);
  }
};

Weights weights(const Config& cfg);

// tensors: every key of the file → shape. WeightError naming `where` and every missing,
// misshaped and unknown key at once (the activation's anti-aliasing filters may be absent).
void require_tensors(const Config& cfg, const std::map<std::string, Shape>& tensors,
                     const std::string& where);

// A toy model folder at `dir` (created): config.json and seeded random weights.
void write_random_folder(const std::string& dir, const Config& cfg, uint64_t seed);

}  // namespace meshnn::test::toy
