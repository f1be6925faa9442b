// `attnsim run`: simulate a direction's kernels end to end and report time, throughput, traffic
// at every level, utilisation and where the time went.
#pragma once

#include <CLI/CLI.hpp>

namespace attnsim::cli {

void add_run_command(CLI::App& app);

}  // namespace attnsim::cli
