// Helpers for tests that load shipped configs or edited copies of them.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "arch/config_error.h"
#include "arch/spec_loader.h"

namespace attnsim::test {

inline std::string source_path(const std::string& rel) { return std::string(ATTNSIM_SOURCE_DIR) + "/" + rel; }

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

inline std::string shipped_config_text(const std::string& name) {
  return read_text(source_path("configs/arch/" + name + ".toml"));
}

// Replaces the one occurrence of `from` (which must exist exactly once) with `to`.
inline std::string edited(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  if (pos == std::string::npos || text.find(from, pos + 1) != std::string::npos) {
    throw std::runtime_error("fixture edit target not found exactly once: " + from);
  }
  return text.replace(pos, from.size(), to);
}

// 1-based line number of the first line that starts with `prefix`.
inline unsigned line_of(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  unsigned n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.rfind(prefix, 0) == 0) return n;
  }
  throw std::runtime_error("no line starts with " + prefix);
}

// The message a load of `text` fails with ("" if it loads).
inline std::string load_error(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    arch::load_arch_text(text, "cfg.toml", sets);
  } catch (const arch::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace attnsim::test
