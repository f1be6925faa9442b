#include "arch/config_error.h"

namespace attnsim::arch {

std::string ValueOrigin::where() const {
  // Appends piecewise: GCC 12 misreports `literal + string` here as -Wrestrict (PR 105329).
  std::string s;
  if (!override_text.empty()) {
    s.append("--set ").append(override_text);
    return s;
  }
  s.append(file);
  if (line > 0) {
    s.append(":").append(std::to_string(line));
    if (column > 0) s.append(":").append(std::to_string(column));
  }
  return s;
}

namespace {
std::string compose(const ValueOrigin& origin, const std::string& key, const std::string& problem) {
  std::string msg = origin.where() + ": error: ";
  if (!key.empty()) msg += "key '" + key + "': ";
  return msg + problem;
}
}  // namespace

ConfigError::ConfigError(const ValueOrigin& origin, const std::string& key, const std::string& problem)
    : std::runtime_error(compose(origin, key, problem)), key_(key), problem_(problem) {}

}  // namespace attnsim::arch
