// `attnsim arch ...`: show a GPU's spec and derived figures, list keys and shipped GPUs, lint sources.
#pragma once

#include <CLI/CLI.hpp>

namespace attnsim::cli {

// Registers the `arch` subcommand tree on the app. Handlers write to stdout and throw
// arch::ConfigError on bad input; `exit_code` receives a non-zero code for a failed lint.
void add_arch_command(CLI::App& app, int& exit_code);

}  // namespace attnsim::cli
