// The one error → status table (meshnn/core/error_codes.h): it covers every error class the
// library declares, and every consumer — serve's HTTP answer and WebSocket error frame, the CLI's
// exit, (tests/python/test_errors.py: the Python exception) — gives each type its row.
#include "meshnn/core/error_codes.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <typeinfo>

#include "cli/failure.h"
#include "meshnn/core/error.h"
#include "serve/errors.h"

namespace fs = std::filesystem;

namespace meshnn {
namespace {

// The names of the classes derived from meshnn::Error in the files under `dir`: the word after
// "class" on every line that says ": public Error" (or meshnn::Error).
std::set<std::string> error_classes_under(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      const bool derived = line.find(": public Error") != std::string::npos ||
                           line.find(": public meshnn::Error") != std::string::npos ||
                           line.find(": public ::meshnn::Error") != std::string::npos;
      const size_t at = line.find("class ");
      if (!derived || at == std::string::npos) continue;
      std::istringstream words(line.substr(at + 6));
      std::string name;
      words >> name;
      names.insert(name);
    }
  }
  return names;
}

TEST(ErrorCodes, CoverEveryErrorClassOfTheLibrary) {
  std::set<std::string> in_table;
  for (const ErrorCode& r : error_codes()) EXPECT_TRUE(in_table.insert(r.type).second) << r.type;
  std::set<std::string> declared;
  for (const char* dir : {"include", "src", "python/src"})
    for (const std::string& n : error_classes_under(fs::path(MESHNN_SOURCE_DIR) / dir))
      declared.insert(n);
  ASSERT_GE(declared.size(), 9u);  // the scan finds error.h's seven and the two beside it
  for (const std::string& n : declared) EXPECT_TRUE(in_table.count(n)) << n << " has no row";
  declared.insert("Error");
  for (const std::string& n : in_table) EXPECT_TRUE(declared.count(n)) << n << " is not declared";
  EXPECT_STREQ(error_codes().back().type, "Error");  // the fallback is last
}

// Each row's thrower throws its own type (the mangled name holds <length><name>), and the lookup
// finds that row again: no row hides another.
TEST(ErrorCodes, EachRowThrowsItsTypeAndIsFoundAgain) {
  for (const ErrorCode& r : error_codes()) {
    try {
      r.raise("message of " + std::string(r.type));
      ADD_FAILURE() << r.type << " did not throw";
    } catch (const std::exception& e) {
      const std::string mangled = typeid(e).name();
      EXPECT_NE(mangled.find(std::to_string(std::string(r.type).size()) + r.type),
                std::string::npos)
          << r.type << " threw " << mangled;
      EXPECT_EQ(&error_code_of(e), &r) << r.type;
      EXPECT_EQ(std::string(e.what()), "message of " + std::string(r.type));
    }
  }
}

// Every row through every C++ consumer: serve's status and code (HTTP body and WebSocket frame,
// with the message shown only when the fault is the client's), the CLI's exit code and message.
TEST(ErrorCodes, EveryConsumerGivesEachTypeItsRow) {
  using namespace serve::internal;
  for (const ErrorCode& r : error_codes()) {
    SCOPED_TRACE(r.type);
    try {
      r.raise("the cause");
    } catch (const std::exception& e) {
      const ErrorStatus st = classify(e);
      EXPECT_EQ(st.status, r.http_status);
      EXPECT_STREQ(st.code, r.code);
      const std::string shown = shown_message(st, e.what(), "r42");
      EXPECT_EQ(shown, r.http_status < 500 || r.http_status == 503
                           ? "the cause"
                           : "internal error (request id r42)");
      const auto body = nlohmann::json::parse(error_json(st.code, shown));
      EXPECT_EQ(body["error"]["code"], r.code);
      EXPECT_EQ(body["error"]["message"], shown);
      const auto frame = nlohmann::json::parse(ws_error_frame(st.code, shown, "r42"));
      EXPECT_EQ(frame["type"], "error");
      EXPECT_EQ(frame["code"], r.code);
      EXPECT_EQ(frame["message"], shown);
      EXPECT_EQ(frame["request_id"], "r42");
      const cli::Failure f = cli::failure_of("meshnn", e);
      EXPECT_EQ(f.exit_code, r.exit_code);
      EXPECT_EQ(f.message, "meshnn: error: the cause");
    }
  }
}

// The statuses the docs promise (docs/serve.md, docs/python.md, docs/reliability.md): a client's
// bad input is 400 / ValueError, a failed mesh 503, the CLI exits 1; and the docs' table of rows
// is this table.
TEST(ErrorCodes, AgreeWithTheDocs) {
  for (const ErrorCode& r : error_codes()) {
    EXPECT_EQ(r.exit_code, 1) << r.type;
    EXPECT_TRUE(r.http_status >= 400 && r.http_status <= 599) << r.type;
  }
  auto row = [](const char* type) {
    for (const ErrorCode& r : error_codes())
      if (std::string(r.type) == type) return r;
    throw std::runtime_error(type);
  };
  EXPECT_EQ(row("InvalidArgument").http_status, 400);
  EXPECT_STREQ(row("ShapeError").python_exception, "ValueError");
  EXPECT_STREQ(row("WeightError").python_exception, "KeyError");
  EXPECT_STREQ(row("CommError").code, "mesh_failed");
  EXPECT_EQ(row("NumericalError").http_status, 422);
  std::ifstream in(fs::path(MESHNN_SOURCE_DIR) / "docs/serve.md");
  std::stringstream docs;
  docs << in.rdbuf();
  for (const ErrorCode& r : error_codes()) {
    const std::string line = "| `" + std::string(r.type) + "` | " + std::to_string(r.http_status) +
                             " | `" + r.code + "` | " + std::to_string(r.exit_code) + " | `" +
                             r.python_exception + "` |";
    EXPECT_NE(docs.str().find(line), std::string::npos) << "docs/serve.md lacks the row " << line;
  }
}

// Exceptions that are not the library's: the fallback row, and the CLI's own messages.
TEST(ErrorCodes, OtherExceptionsAreInternal) {
  const std::bad_alloc oom;
  EXPECT_STREQ(error_code_of(oom).type, "Error");
  EXPECT_EQ(serve::internal::classify(oom).status, 500);
  const cli::Failure f = cli::failure_of("meshnn", oom);
  EXPECT_EQ(f.exit_code, 1);
  EXPECT_NE(f.message.find("out of memory"), std::string::npos) << f.message;
  const std::logic_error bug("x");
  EXPECT_EQ(cli::failure_of("meshnn", bug).message, "meshnn: internal error: x");
}

}  // namespace
}  // namespace meshnn
