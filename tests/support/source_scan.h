// Helpers of the source-scanning tests ("one softmax", "one permute", ...): which files to read
// and their code with // comments blanked, line numbers kept.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

namespace meshnn::test {

// The .cc / .h / .cpp files under root/<dir> for each dir (missing dirs skipped), sorted.
std::vector<std::filesystem::path> source_files(const std::filesystem::path& root,
                                                std::initializer_list<const char*> dirs);

// A file's text with // comments blanked (line numbers kept).
std::string code_without_comments(const std::filesystem::path& file);

// 1-based line of byte offset pos in text.
int line_at(const std::string& text, size_t pos);

}  // namespace meshnn::test
