#include "cli/traffic_command.h"

#include <iostream>
#include <memory>

#include "arch/config_error.h"
#include "cli/arch_options.h"
#include "cli/problem_options.h"
#include "report/text_table.h"
#include "sim/engine.h"
#include "workloads/analytic.h"
#include "workloads/schedule_for.h"

namespace attnsim::cli {

using report::fixed;
using report::TextTable;
namespace {

struct TrafficState {
  ArchOptions arch;
  ProblemOptions problem;
  std::string kernel = "aiter-v3";
  std::string direction = "fwd";
  bool json = false;
};

std::string mb(std::uint64_t bytes) { return fixed(static_cast<double>(bytes) / 1e6, 2) + " MB"; }

void run_traffic(const TrafficState& st) {
  const auto loaded = st.arch.load();
  const workloads::Problem p = st.problem.problem();
  const workloads::KernelSchedule k = workloads::parse_kernel_spec(st.kernel);
  const auto dir = parse_direction(st.direction);
  const workloads::PassPrograms pp =
      workloads::build_pass(p, workloads::schedule_for(k, p, dir, loaded.spec, "--kernel " + st.kernel), dir, loaded.spec);
  const sim::RunResult r = sim::simulate({&pp}, loaded.spec);
  const workloads::PassCounts counts = workloads::analytic_counts(pp);

  nlohmann::json j;
  j["arch"] = loaded.spec.name;
  j["kernel"] = k.name;
  j["problem"] = p.describe();
  j["direction"] = st.direction;
  j["total"] = r.total.to_json(loaded.spec.vendor);
  j["mfma_flops_issued"] = counts.mfma_flops_issued;
  j["fa_flops"] = counts.fa_flops;
  for (const auto& kt : r.kernels) {
    nlohmann::json kj = kt.counters.to_json(loaded.spec.vendor);
    kj["name"] = kt.name;
    kj["workgroups"] = kt.workgroups;
    kj["workgroups_per_cu"] = kt.occupancy.workgroups_per_cu;
    j["kernels"].push_back(kj);
  }
  if (st.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "traffic " << k.name << " " << st.direction << "  " << p.describe() << "  (" << loaded.spec.name << ")\n";
  TextTable t;
  t.add({"kernel", "requested rd / wr", "L2 hit", "FETCH_SIZE", "WRITE_SIZE", "HBM rd / wr"});
  const auto row = [&](const std::string& name, const sim::TrafficCounters& c) {
    t.add({name, mb(c.requested_read_bytes) + " / " + mb(c.requested_write_bytes + c.atomic_bytes),
           fixed(100 * c.l2_hit_rate(), 1) + " %", mb(c.fetch_size_bytes()), mb(c.write_size_bytes()),
           mb(c.hbm_read_bytes) + " / " + mb(c.hbm_write_bytes)});
  };
  for (const auto& kt : r.kernels) row(kt.name, kt.counters);
  row("total", r.total);
  std::cout << t.render();
  std::cout << "  FETCH_SIZE + WRITE_SIZE = " << mb(r.total.fetch_size_bytes() + r.total.write_size_bytes())
            << "; matrix work issued " << fixed(counts.mfma_flops_issued / 1e9, 2) << " GFLOP (FA convention "
            << fixed(counts.fa_flops / 1e9, 2) << ")\n"
            << "  Counters of the timed simulation; `attnsim run` reports its time.\n";
}

}  // namespace

void add_traffic_command(CLI::App& app) {
  auto st = std::make_shared<TrafficState>();
  CLI::App* c = app.add_subcommand(
      "traffic", "Bytes at every memory level and predicted profiler counters (FETCH_SIZE, WRITE_SIZE) of a pass");
  st->arch.add_to(*c);
  workloads::Problem defaults;
  defaults.heads_q = 64;
  defaults.heads_kv = 8;
  defaults.seqlen_q = defaults.seqlen_k = 4096;
  defaults.causal = true;
  st->problem.add_to(*c, defaults);
  c->add_option("--kernel", st->kernel, "PRESET[,field=value,...]")->capture_default_str();
  c->add_option("--direction", st->direction, "fwd or bwd")->capture_default_str();
  c->add_flag("--json", st->json, "print JSON (rocprofiler counter names per kernel and in total)");
  c->footer(
      "Examples:\n"
      "  attnsim traffic --kernel aiter-v3 --direction bwd --heads 32:32 --seqlen 1024 --no-causal\n"
      "  attnsim traffic --kernel ck,bwd.xcd_remap=8 --direction bwd --json");
  c->callback([st] { run_traffic(*st); });
}

}  // namespace attnsim::cli
