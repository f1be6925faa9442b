// The problem flags every simulating subcommand shares: --batch, --heads, --seqlen, --head-dim,
// --dtype, --causal, --window, --layout, or --problem FILE.toml.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "workloads/kernel_program.h"
#include "workloads/problem.h"

namespace attnsim::cli {

// Holds the flags as text; `problem()` parses and validates them.
struct ProblemOptions {
  std::string batch, heads, seqlen, head_dim, dtype = "bf16", window, layout = "bshd", file;
  std::string causal_align = "bottom-right";
  bool causal = false;

  // Registers the flags; the defaults are the subcommand's default problem.
  void add_to(CLI::App& app, const workloads::Problem& defaults);
  // Contract: throws arch::ConfigError naming the flag and the field on any bad value.
  workloads::Problem problem() const;
};

// `--direction fwd|bwd`. Contract: throws arch::ConfigError naming the flag on anything else.
workloads::Direction parse_direction(const std::string& text);

}  // namespace attnsim::cli
