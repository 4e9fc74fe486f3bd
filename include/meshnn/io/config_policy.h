// How strictly model configs are read. By default a config field meshnn does not know is an error
// (it may change the architecture). A load that asks for it (CLI --allow-unknown-config, Python
// allow_unknown_config=True, AudioModelOptions / gr00t::LoadOptions::allow_unknown_config) reads
// the configs under an AllowUnknownConfig scope: unknown fields are then logged (warn) and
// ignored. Known fields are checked the same either way (a contradicting value is still refused).
#pragma once

namespace meshnn {

// While an object with `on` = true lives, configs read on this thread accept unknown fields
// (logged, ignored). Scopes nest; an `on` = false scope changes nothing.
class AllowUnknownConfig {
 public:
  explicit AllowUnknownConfig(bool on = true);
  ~AllowUnknownConfig();
  AllowUnknownConfig(const AllowUnknownConfig&) = delete;
  AllowUnknownConfig& operator=(const AllowUnknownConfig&) = delete;

  // Whether configs read now on this thread accept unknown fields.
  static bool active();

 private:
  bool on_;
};

}  // namespace meshnn
