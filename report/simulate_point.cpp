#include "report/simulate_point.h"

#include "arch/arch_locator.h"
#include "arch/config_error.h"
#include "arch/spec_loader.h"
#include "report/run_report.h"
#include "workloads/schedule.h"
#include "workloads/schedule_for.h"

namespace attnsim::report {

std::vector<workloads::Direction> parse_directions(const std::string& text, const std::string& flag) {
  if (text == "fwd") return {workloads::Direction::fwd};
  if (text == "bwd") return {workloads::Direction::bwd};
  if (text == "both") return {workloads::Direction::fwd, workloads::Direction::bwd};
  throw arch::ConfigError(arch::ValueOrigin{flag + " " + text, 0, 0, {}}, "direction", "expected fwd, bwd or both");
}

void check_trace_option(const PointSpec& spec, bool trace) {
  if (spec.fast_forward && trace) {
    throw arch::ConfigError(arch::ValueOrigin{"--fast-forward", 0, 0, {}}, "fast_forward",
                            "fast-forward skips workgroups, and a trace shows every workgroup: drop --trace or --fast-forward");
  }
}

void check_stats_option(const PointSpec& spec) {
  if (spec.fast_forward && spec.stats) {
    throw arch::ConfigError(arch::ValueOrigin{"--fast-forward", 0, 0, {}}, "fast_forward",
                            "fast-forward skips workgroups, and the channel statistics count what was served: drop --stats or --fast-forward");
  }
  if (spec.warm_up && spec.stats) {
    throw arch::ConfigError(arch::ValueOrigin{"--warm-up", 0, 0, {}}, "warm_up",
                            "the channel statistics would count the warm-up's traffic too: drop --stats or --warm-up");
  }
}

nlohmann::json simulate_point(const PointSpec& spec, const sim::EngineOptions& options, nlohmann::json* trace) {
  const auto loaded = arch::load_arch_file(arch::resolve_arch(spec.arch), spec.sets);
  const workloads::KernelSchedule k = workloads::parse_kernel_spec(spec.kernel);
  std::vector<workloads::PassPrograms> programs;
  for (const workloads::Direction d : parse_directions(spec.direction)) {
    programs.push_back(workloads::build_pass(spec.problem, workloads::schedule_for(k, spec.problem, d, loaded.spec, "--kernel " + spec.kernel),
                                             d, loaded.spec));
  }
  RunInputs in;
  in.gpu = &loaded.spec;
  in.kernel = k.name;
  in.direction = spec.direction;
  for (const auto& pp : programs) in.passes.push_back(&pp);
  sim::EngineOptions o = options;
  o.trace = o.trace || trace != nullptr;
  o.approximate = o.approximate || spec.approximate;
  if (spec.loop_batch > 1 && !o.approximate) {
    throw arch::ConfigError(arch::ValueOrigin{"--loop-batch " + std::to_string(spec.loop_batch), 0, 0, {}}, "loop_batch",
                            "batching loop iterations is part of the approximate mode (add --approximate)");
  }
  // The spec decides the loop batch (options.loop_batch is not used): 0 is the approximate mode's default.
  o.loop_batch = !o.approximate ? 1 : (spec.loop_batch ? spec.loop_batch : sim::kApproximateLoopBatch);
  check_trace_option(spec, o.trace);
  check_stats_option(spec);
  o.fast_forward = spec.fast_forward;
  o.stats = spec.stats;
  o.empty_caches_per_kernel = spec.empty_caches_per_kernel;
  o.warm_up = spec.warm_up;
  const sim::RunResult r = sim::simulate(in.passes, loaded.spec, o);
  if (trace) *trace = trace_json(in, r);
  return run_report(in, r);
}

}  // namespace attnsim::report
