// Logging: a thin front over spdlog so that no spdlog type leaks into public headers.
#pragma once

#include <string>

namespace meshnn {

enum class LogLevel { trace, debug, info, warn, error, off };

void set_log_level(LogLevel level);
// Reads MESHNN_LOG (trace|debug|info|warn|error|off); default warn.
void init_logging_from_env();
void log_info(const std::string& msg);
void log_warn(const std::string& msg);

}  // namespace meshnn
