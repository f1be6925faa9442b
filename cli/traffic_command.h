// `attnsim traffic`: the bytes a pass moves at every level and the predicted profiler counters.
#pragma once

#include <CLI/CLI.hpp>

namespace attnsim::cli {

void add_traffic_command(CLI::App& app);

}  // namespace attnsim::cli
