#include "meshnn/core/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <cstring>

#include "core/env.h"

namespace meshnn {
namespace {
spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> l = [] {
    auto lg = spdlog::stderr_color_mt("meshnn");
    lg->set_pattern("[meshnn %L] %v");
    lg->set_level(spdlog::level::warn);
    return lg;
  }();
  return *l;
}
}  // namespace

void set_log_level(LogLevel level) {
  static const spdlog::level::level_enum map[] = {spdlog::level::trace, spdlog::level::debug,
                                                  spdlog::level::info,  spdlog::level::warn,
                                                  spdlog::level::err,   spdlog::level::off};
  logger().set_level(map[static_cast<int>(level)]);
}

void init_logging_from_env() {
  const auto v = env_value(EnvSwitch::log);
  if (!v) return;
  static const char* names[] = {"trace", "debug", "info", "warn", "error", "off"};
  for (int i = 0; i < 6; ++i)
    if (*v == names[i]) set_log_level(static_cast<LogLevel>(i));
}

void log_info(const std::string& msg) { logger().info(msg); }
void log_warn(const std::string& msg) { logger().warn(msg); }

}  // namespace meshnn
