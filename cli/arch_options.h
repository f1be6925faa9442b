// The `--arch NAME|FILE` and `--set key=value` options every subcommand shares.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "arch/spec_loader.h"

namespace attnsim::cli {

// Holds the parsed options; `load()` resolves, parses and validates the spec.
struct ArchOptions {
  std::string arch = "mi300x";
  std::vector<std::string> sets;

  void add_to(CLI::App& app);
  // Contract: throws arch::ConfigError on an unknown arch, a bad file or a bad override.
  arch::LoadedArch load() const;
};

}  // namespace attnsim::cli
