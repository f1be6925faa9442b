// One simulated point from its full description (arch, overrides, problem, kernel, direction):
// what `attnsim run` does, and what validate and sweep do for each of their points.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine.h"
#include "workloads/kernel_program.h"
#include "workloads/problem.h"

namespace attnsim::report {

struct PointSpec {
  std::string arch = "mi300x";    // name or TOML file
  std::vector<std::string> sets;  // --set key=value overrides
  workloads::Problem problem;
  std::string kernel = "aiter-v3";  // PRESET[,field=value,...]
  std::string direction = "both";   // fwd, bwd or both (forward then backward)
  bool approximate = false;         // the engine's approximate tag mode (docs/model.md)
  // Loop iterations per loop step in the approximate mode (0: sim::kApproximateLoopBatch). Contract:
  // more than 1 only with `approximate` (the exact mode times every iteration).
  std::uint32_t loop_batch = 0;
  // Skip rounds of large grids and interpolate them from measured windows (sim/fast_forward.h).
  // Contract: not with a trace (a trace shows every workgroup).
  bool fast_forward = false;
  // Per-channel statistics in the report (`stats`, docs/output.md). Contract: not with fast_forward
  // (the channels serve only what was simulated).
  bool stats = false;
  // Each kernel starts with empty caches, as under a profiler's cache control
  // (sim::EngineOptions::empty_caches_per_kernel).
  bool empty_caches_per_kernel = false;
  // Simulate the passes once before the measured run (sim::EngineOptions::warm_up). Contract: not
  // with stats.
  bool warm_up = false;
};

// The passes of a direction text. Contract: throws arch::ConfigError naming `flag` unless fwd, bwd or both.
std::vector<workloads::Direction> parse_directions(const std::string& text, const std::string& flag = "--direction");

// Contract: throws arch::ConfigError when a trace is asked for a fast-forwarded point (a trace
// shows every workgroup; fast-forward skips some).
void check_trace_option(const PointSpec& spec, bool trace);
// Contract: throws arch::ConfigError when stats are asked for a fast-forwarded or warmed-up point.
void check_stats_option(const PointSpec& spec);

// Simulates the point and returns its report (report/run_report.h); with `trace` set, also the
// Perfetto trace. `options` may ask for the approximate mode and a trace; the loop batch is the
// spec's (`options.loop_batch` is not used). Contract: throws arch::ConfigError on any invalid
// part of the spec.
nlohmann::json simulate_point(const PointSpec& spec, const sim::EngineOptions& options = {},
                              nlohmann::json* trace = nullptr);

}  // namespace attnsim::report
