// A temp folder for one test: named after the running test and this process, empty at the start,
// removed with everything in it at the end.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

namespace meshnn::test {

struct ScratchDir {
  std::filesystem::path dir;
  ScratchDir() {
    const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = t ? std::string(t->test_suite_name()) + "_" + t->name() : "no_test";
    std::replace(name.begin(), name.end(), '/', '_');
    dir = std::filesystem::temp_directory_path() /
          ("meshnn_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  // A path inside the folder.
  std::string at(const std::string& name) const { return (dir / name).string(); }
};

}  // namespace meshnn::test
