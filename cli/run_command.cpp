#include "cli/run_command.h"

#include <fstream>
#include <iostream>
#include <memory>

#include "arch/config_error.h"
#include "cli/arch_options.h"
#include "cli/problem_options.h"
#include "report/run_report.h"
#include "report/simulate_point.h"

namespace attnsim::cli {
namespace {

struct RunState {
  ArchOptions arch;
  ProblemOptions problem;
  std::string kernel = "aiter-v3";
  std::string direction = "both";
  std::string trace;
  bool json = false;
  bool approximate = false;
  std::uint32_t loop_batch = 0;
  bool fast_forward = false;
  bool stats = false;
  bool empty_caches = false;
  bool warm_up = false;
};

void run(const RunState& st) {
  report::PointSpec spec;
  spec.arch = st.arch.arch;
  spec.sets = st.arch.sets;
  spec.problem = st.problem.problem();
  spec.kernel = st.kernel;
  spec.direction = st.direction;
  spec.approximate = st.approximate;
  spec.loop_batch = st.loop_batch;
  spec.fast_forward = st.fast_forward;
  spec.stats = st.stats;
  spec.empty_caches_per_kernel = st.empty_caches;
  spec.warm_up = st.warm_up;
  report::check_trace_option(spec, !st.trace.empty());
  nlohmann::json trace;
  std::ofstream trace_file;
  if (!st.trace.empty()) {
    // Open first, so that an unwritable path fails before the simulation, not after.
    trace_file.open(st.trace);
    if (!trace_file) {
      throw arch::ConfigError(arch::ValueOrigin{"--trace " + st.trace, 0, 0, {}}, "trace", "cannot open the file for writing");
    }
  }
  const nlohmann::json r = report::simulate_point(spec, {}, st.trace.empty() ? nullptr : &trace);
  if (!st.trace.empty()) trace_file << trace.dump() << "\n";
  if (st.json) {
    std::cout << r.dump(2) << "\n";
  } else {
    std::cout << report::render_run_report(r);
    if (!st.trace.empty()) std::cout << "  trace written to " << st.trace << " (open in ui.perfetto.dev)\n";
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto st = std::make_shared<RunState>();
  CLI::App* c = app.add_subcommand("run", "Simulate a pass's kernels on the GPU: time, TFLOP/s, traffic, utilisation");
  st->arch.add_to(*c);
  workloads::Problem defaults;
  defaults.batch = 1;
  defaults.heads_q = 64;
  defaults.heads_kv = 8;
  defaults.seqlen_q = defaults.seqlen_k = 8192;
  defaults.causal = true;
  st->problem.add_to(*c, defaults);
  c->add_option("--kernel", st->kernel, "PRESET[,field=value,...]")->capture_default_str();
  c->add_option("--direction", st->direction, "fwd, bwd or both (forward then backward)")->capture_default_str();
  c->add_option("--trace", st->trace, "write a Perfetto/Chrome trace JSON of the timeline to FILE");
  c->add_flag("--json", st->json, "print the report as JSON (keys in docs/output.md)");
  c->add_flag("--approximate", st->approximate,
              "keep cache tags per group of a tile's lines and time large kernels' loop iterations in batches: "
              "several times faster, within 1 % in time and 2 % in bytes per level of the exact mode on the tested "
              "problems (docs/model.md)");
  c->add_option("--loop-batch", st->loop_batch,
                "approximate mode: at most N loop iterations timed as one step (default " +
                    std::to_string(sim::kApproximateLoopBatch) + ", halved down to " +
                    std::to_string(sim::kHalvedLoopBatchFloor) +
                    " for a kernel whose passes are short; 1 times every iteration)")
      ->check(CLI::Range(1, 64));
  c->add_flag("--fast-forward", st->fast_forward,
              "simulate only some rounds of large grids (warm-up, measured windows, drain) and interpolate the "
              "rounds skipped between them: several times faster on grids of many rounds; its departure from a full "
              "run is in docs/model.md (Fast-forward); not with --trace");
  c->add_flag("--stats", st->stats,
              "report every L2, MALL and HBM channel's requests, bytes and busy time (JSON key stats, docs/output.md) "
              "and a line on how evenly the channels were loaded; not with --fast-forward");
  c->add_flag("--empty-caches", st->empty_caches,
              "start every kernel with empty caches, their dirty lines written back outside any kernel's counters and "
              "time, as a profiler's cache control does (ncu --cache-control all, Nsight Compute's default): "
              "predicts profiled counters");
  c->add_flag("--warm-up", st->warm_up,
              "simulate the direction's kernels once before the measured run, as a benchmark's warm-up calls do: "
              "the measured run finds the caches (dirty lines included), queues and clock the previous call left; "
              "not with --stats");
  c->footer(
      "Examples:\n"
      "  attnsim run                                                 MI300X, aiter-v3, B=1 Hq=64 Hkv=8 N=8192 causal, fwd+bwd\n"
      "  attnsim run --direction fwd --no-causal --batch 8 --heads 32:8 --seqlen 4096 --json\n"
      "  attnsim run --set clock.engine=1.9GHz --trace run.json\n"
      "  attnsim run --approximate --fast-forward --batch 8 --seqlen 16384   the largest preset case in seconds\n"
      "  attnsim run --arch mi300x --set cu.lds_size=160KiB --kernel aiter-v3,fwd.block_n=64");
  c->callback([st] { run(*st); });
}

}  // namespace attnsim::cli
