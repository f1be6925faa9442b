// `attnsim check`: runs a kernel schedule functionally on the CPU and compares it with naive attention.
#pragma once

#include <CLI/CLI.hpp>

namespace attnsim::cli {

// Exit code when the schedule computes the wrong answer or its byte counts disagree.
inline constexpr int kExitCheckFailed = 3;

// Registers `check`; `exit_code` receives kExitCheckFailed when the check fails.
void add_check_command(CLI::App& app, int& exit_code);

}  // namespace attnsim::cli
