// Reading a problem from a TOML table that is part of a larger file (a sweep spec's base problem).
#pragma once

#include <string>

#include <toml++/toml.h>

#include "workloads/problem.h"

namespace attnsim::workloads {

// As load_problem_text, for a table already parsed: the same keys, the same strict checks.
// Contract: throws arch::ConfigError naming `file` and, where the table kept them, line and column.
Problem load_problem_table(const toml::table& t, const std::string& file);

}  // namespace attnsim::workloads
