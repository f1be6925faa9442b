// `attnsim validate`: simulate every measured case of measurements CSVs and report the errors.
#pragma once

#include <CLI/CLI.hpp>

namespace attnsim::cli {

void add_validate_command(CLI::App& app, int& exit_code);

}  // namespace attnsim::cli
