// The per-stage precision of a multi-stage model (docs/precision.md): a mode for every stage, a
// preset, or stage=mode pairs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "meshnn/core/precision.h"

namespace meshnn {

// The precision of each stage of a model. The LTX decoders' stages are "vae" (mel-VAE decoder),
// "vocoder" and, for LTX-2.3, "bwe" (bandwidth extension); NVIDIA BigVGAN has "vocoder".
// Text forms (parse):
//   a mode            "bf16"                          every stage at that mode
//   a preset          "bf16-safe"                     LTX decoders: vae and vocoder bf16, bwe fp32
//                     "auto"                          bf16-safe's stages on a native bf16 CPU
//                                                     (avx512_bf16), fp32 elsewhere
//   stage=mode pairs  "vae=bf16,vocoder=bf16,bwe=fp32" stages not named run fp32
// A Precision converts implicitly (every stage at that mode), so load(path, Precision::bf16)
// keeps its meaning.
class StagePrecision {
 public:
  StagePrecision(Precision every = Precision::fp32);  // NOLINT(google-explicit-constructor)
  // Strict: an empty text, an unknown mode, stage or preset, a stage given twice or an entry
  // that is not stage=mode is an InvalidArgument naming the valid values.
  static StagePrecision parse(const std::string& text);

  // The mode of each of a model's stages (names in chain order). InvalidArgument naming the
  // model's stages when a named stage is not one of them (a preset's optional stages — bwe of
  // bf16-safe — are skipped on models without them).
  // The preset auto resolves against bf16_datapath_native() (meshnn/core/precision.h).
  std::vector<Precision> resolve(const std::vector<std::string>& stages,
                                 const std::string& model) const;
  // The same with the CPU's bf16 datapath given (tests force both ways).
  std::vector<Precision> resolve(const std::vector<std::string>& stages, const std::string& model,
                                 bool native_bf16) const;
  // The one mode of a model that runs a single precision everywhere (MiniMax-H3): InvalidArgument
  // when the text named stages or a preset; fp32 for the preset auto (no per-stage table).
  Precision uniform(const std::string& model) const;
  bool is_uniform() const { return preset_.empty() && stages_.empty(); }
  // The text form: the mode, the preset's name, or the pairs in the order given.
  std::string str() const;

  // The stage names (a model lists its stages with these; they are not checkpoint keys, though
  // "vocoder" is spelled like one of LTX's).
  static constexpr const char* kVae = "vae";
  static constexpr const char* kVocoder = "vocoder";
  static constexpr const char* kBwe = "bwe";
  // Every stage name any model has.
  static const std::vector<std::string>& known_stages();

 private:
  Precision every_ = Precision::fp32;                      // stages not named
  std::string preset_;                                     // "" unless parsed from a preset
  std::vector<std::pair<std::string, Precision>> stages_;  // as given
  std::vector<std::string> optional_;                      // preset stages a model may lack
  bool native_only_ = false;                               // auto: stages only on native bf16
};

}  // namespace meshnn
