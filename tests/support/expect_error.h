// Test helper: a call must throw meshnn error type E whose message names every given part.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>

#include "meshnn/core/error.h"

namespace meshnn::test {

// Expects fn() to throw E (another exception type propagates and fails the test) with a message
// containing every one of `parts`.
template <class E = Error>
void expect_error(const std::function<void()>& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "accepted";
  } catch (const E& e) {
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << p << " not in: " << e.what();
  }
}

}  // namespace meshnn::test
