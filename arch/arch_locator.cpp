#include "arch/arch_locator.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "arch/config_error.h"

namespace attnsim::arch {
namespace fs = std::filesystem;

std::vector<std::string> config_search_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("ATTNSIM_CONFIG_DIR"); env && *env) dirs.emplace_back(env);
  dirs.emplace_back(ATTNSIM_SOURCE_CONFIG_DIR);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path().parent_path() / "share" / "attnsim" / "configs").string());
  dirs.emplace_back(ATTNSIM_INSTALL_CONFIG_DIR);
  return dirs;
}

std::vector<std::string> available_arch_names() {
  for (const auto& dir : config_search_dirs()) {
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(fs::path(dir) / "arch", ec)) {
      if (entry.path().extension() == ".toml") names.push_back(entry.path().stem().string());
    }
    if (!names.empty()) {
      std::sort(names.begin(), names.end());
      return names;
    }
  }
  return {};
}

std::string resolve_arch(const std::string& name_or_file) {
  const ValueOrigin where{"--arch " + name_or_file, 0, 0, {}};
  const bool looks_like_path = name_or_file.find('/') != std::string::npos ||
                               (name_or_file.size() > 5 && name_or_file.ends_with(".toml"));
  std::error_code ec;
  if (looks_like_path) {
    if (!fs::is_regular_file(name_or_file, ec)) throw ConfigError(where, "", "no such config file");
    return name_or_file;
  }
  for (const auto& dir : config_search_dirs()) {
    const fs::path candidate = fs::path(dir) / "arch" / (name_or_file + ".toml");
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  }
  std::string names;
  for (const auto& n : available_arch_names()) names += (names.empty() ? "" : ", ") + n;
  throw ConfigError(where, "",
                    "unknown architecture; shipped: " + (names.empty() ? std::string("(none found)") : names) +
                        "; or give the path of a .toml file");
}

}  // namespace attnsim::arch
