// `attnsim micro`: microbenchmarks on the simulated hardware (compute patterns on one CU).
#pragma once

#include <CLI/CLI.hpp>

namespace attnsim::cli {

void add_micro_command(CLI::App& app);

}  // namespace attnsim::cli
