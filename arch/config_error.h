// The error a bad config or override raises: one message naming where, which key, and what was expected.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace attnsim::arch {

// Exit code of the CLI for any invalid input (config, override, flag value).
inline constexpr int kExitBadInput = 2;

// Where a value came from: a file position, or a command-line override.
struct ValueOrigin {
  std::string file;          // config path, or "--set" for an override
  std::uint32_t line = 0;    // 1-based; 0 when unknown
  std::uint32_t column = 0;  // 1-based; 0 when unknown
  std::string override_text; // the whole "key=value" for overrides

  // "file:line:column" or "--set key=value".
  std::string where() const;
};

// Thrown by the loader. what() is the full one-line message, ready to print.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(const ValueOrigin& origin, const std::string& key, const std::string& problem);
  explicit ConfigError(const std::string& message) : std::runtime_error(message) {}

  // The parts of the message, for re-raising at another origin; empty for a plain message.
  const std::string& key() const { return key_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string key_;
  std::string problem_;
};

}  // namespace attnsim::arch
