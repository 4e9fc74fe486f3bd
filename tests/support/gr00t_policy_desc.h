// The whole GR00T policy's weights table for tests: the adapter's, then the action head's layers
// the adapter does not already list (the product loads the two parts separately).
#pragma once

#include <set>
#include <string>

#include "models/gr00t/description.h"

namespace meshnn::test {

inline gr00t::ModelDesc describe_gr00t_policy(const gr00t::Config& c,
                                              const gr00t::ActionHeadConfig& hc,
                                              const std::string& prefix) {
  gr00t::ModelDesc out = gr00t::describe_adapter(c, prefix);
  std::set<std::string> seen;
  for (const gr00t::LayerDesc& l : out) seen.insert(l.key);
  for (const gr00t::LayerDesc& l : gr00t::describe_action_head(c, hc, prefix))
    if (!seen.count(l.key)) out.push_back(l);
  return out;
}

}  // namespace meshnn::test
