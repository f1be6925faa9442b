#include "cli/check_command.h"

#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "arch/arch_locator.h"
#include "arch/spec_loader.h"
#include "cli/problem_options.h"
#include "report/text_table.h"
#include "workloads/analytic.h"
#include "workloads/functional.h"
#include "workloads/kernel_program.h"
#include "workloads/schedule_for.h"

namespace attnsim::cli {

using report::fixed;
using report::TextTable;
namespace {

using nlohmann::json;
using namespace workloads;

struct CheckState {
  ProblemOptions problem;
  std::string kernel = "aiter-v3";
  std::string direction = "fwd";
  std::string arch;
  std::vector<std::string> sets;
  std::uint64_t seed = 1;
  bool json = false;
};

void run_check(const CheckState& st, int& exit_code) {
  const Problem p = st.problem.problem();
  const KernelSchedule k = parse_kernel_spec(st.kernel);
  const Direction dir = parse_direction(st.direction);
  const auto gpu = arch::load_arch_file(arch::resolve_arch(st.arch.empty() ? k.native_arch : st.arch), st.sets);
  const PassPrograms pp = build_pass(p, checkable_schedule(k, p, dir, gpu.spec), dir, gpu.spec);

  const FunctionalResult fr = run_functional(pp, st.seed);
  const PassCounts ac = analytic_counts(pp);
  const TensorTraffic prog = program_traffic(pp);
  const bool bytes_match = ac.traffic == fr.traffic && prog == fr.traffic;
  const bool passed = bytes_match && fr.worst < kCheckTolerance;
  if (!passed) exit_code = kExitCheckFailed;

  json j;
  j["kernel"] = k.name;
  j["problem"] = p.describe();
  j["direction"] = st.direction;
  j["arch"] = gpu.spec.name;
  j["seed"] = st.seed;
  j["tolerance"] = kCheckTolerance;
  j["max_rel_error"] = fr.worst;
  j["worst_tensor"] = fr.worst_tensor;
  j["bytes_match"] = bytes_match;
  j["passed"] = passed;
  for (std::size_t i = 0; i < kTensorCount; ++i) {
    const auto id = static_cast<TensorId>(i);
    if (fr.max_rel_error[i] > 0 || (dir == Direction::fwd ? (id == TensorId::o || id == TensorId::lse)
                                                          : (id == TensorId::dq || id == TensorId::dk || id == TensorId::dv))) {
      j["max_rel_error_per_tensor"][std::string(to_string(id))] = fr.max_rel_error[i];
    }
    if (ac.traffic.read[i] + ac.traffic.written[i] + fr.traffic.read[i] + fr.traffic.written[i] + prog.read[i] +
            prog.written[i] == 0) {
      continue;
    }
    j["bytes"][std::string(to_string(id))] = {{"analytic_read", ac.traffic.read[i]},
                                             {"functional_read", fr.traffic.read[i]},
                                             {"program_read", prog.read[i]},
                                             {"analytic_written", ac.traffic.written[i]},
                                             {"functional_written", fr.traffic.written[i]},
                                             {"program_written", prog.written[i]}};
  }
  j["fa_flops"] = ac.fa_flops;
  for (const auto& kp : pp.kernels) {
    j["kernels"].push_back({{"name", kp.name}, {"workgroups", kp.workgroups()}, {"waves", kp.waves}});
  }
  j["workgroups"] = ac.workgroups;
  j["iterations"] = ac.iterations;
  j["tile_ops"] = ac.tile_ops;
  j["mfma_instructions"] = ac.mfma_instructions;
  j["mfma_flops_issued"] = ac.mfma_flops_issued;
  j["exps"] = ac.exps;
  j["valu_ops"] = ac.valu_ops;

  if (st.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "check " << k.name << " " << st.direction << "  " << p.describe() << "  (" << gpu.spec.name << ")\n";
  TextTable t;
  t.add({"tensor", "analytic", "functional", "program"});
  for (const auto& [name, b] : j["bytes"].items()) {
    const auto cell = [&](const char* kind) {
      const std::string r = std::to_string(b[std::string(kind) + "_read"].get<std::uint64_t>());
      const std::string w = std::to_string(b[std::string(kind) + "_written"].get<std::uint64_t>());
      return "r " + r + " / w " + w;
    };
    t.add({name, cell("analytic"), cell("functional"), cell("program")});
  }
  std::cout << t.render();
  std::cout << "  max relative error " << fixed(fr.worst * 1e6, 3) << "e-6 (" << fr.worst_tensor << "), tolerance 1e-4\n";
  std::cout << "  bytes " << (bytes_match ? "match" : "DIFFER") << " three ways\n";
  std::cout << (passed ? "PASSED" : "FAILED") << "\n";
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto st = std::make_shared<CheckState>();
  CLI::App* c = app.add_subcommand(
      "check", "Run a kernel schedule functionally on the CPU (fp32) and compare with naive attention");
  Problem defaults;
  defaults.batch = 2;
  defaults.heads_q = 4;
  defaults.heads_kv = 2;
  defaults.seqlen_q = defaults.seqlen_k = 300;
  defaults.head_dim_qk = defaults.head_dim_v = 64;
  st->problem.add_to(*c, defaults);
  c->add_option("--kernel", st->kernel, "PRESET[,field=value,...]: aiter-v3, aiter-v3-a16, ck, triton-amd, aotriton, fa2, fa3")
      ->capture_default_str();
  c->add_option("--direction", st->direction, "fwd or bwd")->capture_default_str();
  c->add_option("--arch", st->arch, "GPU whose wave size and matrix instructions set the counts (default: the preset's)");
  c->add_option("--set", st->sets, "override an arch parameter (repeatable)");
  c->add_option("--seed", st->seed, "random inputs' seed")->capture_default_str();
  c->add_flag("--json", st->json, "print JSON: max_rel_error, bytes_match, passed, per-tensor bytes");
  c->footer(
      "Examples:\n"
      "  attnsim check --kernel aiter-v3 --direction bwd --seqlen 300 --heads 4:2 --causal\n"
      "  attnsim check --kernel triton-amd,bwd.dq=split --direction bwd --seqlen 200:333 --window 64:0 --json\n"
      "Exit codes: 0 passed, 3 wrong result or byte counts that disagree, 2 invalid input.");
  c->callback([st, &exit_code] { run_check(*st, exit_code); });
}

}  // namespace attnsim::cli
