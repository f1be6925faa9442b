// Resolves `--arch NAME|FILE` to a config file: a path as given, or a shipped configs/arch/NAME.toml.
#pragma once

#include <string>
#include <vector>

namespace attnsim::arch {

// Directories searched for shipped configs, in order: $ATTNSIM_CONFIG_DIR, the source tree's
// configs/, <exe>/../share/attnsim/configs, and the install prefix's share/attnsim/configs.
std::vector<std::string> config_search_dirs();

// The path for `--arch`. A value containing '/' or ending in ".toml" is a file path; anything
// else is a name looked up as arch/NAME.toml in the search directories.
// Contract: throws ConfigError (with the available names) when nothing matches.
std::string resolve_arch(const std::string& name_or_file);

// Names of the shipped architectures found in the first search directory that has any.
std::vector<std::string> available_arch_names();

}  // namespace attnsim::arch
