// `attnsim sweep`: run a sweep spec's points (threads, shards or MPI ranks), merge shards, and
// write the HTML report.
#pragma once

#include <CLI/CLI.hpp>

namespace attnsim::cli {

void add_sweep_command(CLI::App& app, int& exit_code);

}  // namespace attnsim::cli
