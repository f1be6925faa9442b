// The model's answers to what-ifs, for review: each hardware parameter of a list at half and at
// twice its shipped value (`--set key=value`, as a user's what-if), on five problems of four GPUs
// (approximate tags), the kernels' time against the shipped config's. A parameter that adds a
// resource (bandwidth, capacity, lanes, a clock, a power budget) should not make a problem slower,
// one that adds a cost (a latency, a power draw) should not make it faster: a response the other
// way beyond 0.3 % is flagged for a reader to explain (wave quantization, a write-back L2 flushed
// at a kernel's end and a causal grid's tail can make one real; docs/accuracy.md, **What-ifs**).
// A value the loader refuses (a rule between keys) is shown as refused.
// Usage: attnsim_bench_whatif [--threads N] (default: every core; the table does not depend on it).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include "arch/arch_locator.h"
#include "arch/config_error.h"
#include "arch/param_table.h"
#include "arch/spec_loader.h"
#include "report/simulate_point.h"

using namespace attnsim;

namespace {

struct Knob {
  const char* path;
  int more_is;  // +1: a larger value adds a resource (time should not rise); -1: adds a cost
};

const std::vector<Knob>& knobs() {
  static const std::vector<Knob> k{
      {"chip.cus_per_xcd", +1},         {"clock.engine_max", +1},          {"clock.matrix_max", +1},
      {"clock.fabric", +1},             {"clock.power.limit", +1},         {"clock.power.baseline", -1},
      {"clock.power.matrix_bf16", -1},  {"clock.power.stream", -1},        {"cu.wave_slots_per_simd", +1},
      {"cu.vgpr_file", +1},             {"cu.valu_lanes_per_simd", +1},    {"cu.trans_lanes_per_simd", +1},
      {"cu.lds_size", +1},              {"cu.lds_bandwidth", +1},          {"cu.lds_latency", -1},
      {"cu.barrier_latency", -1},       {"cu.wave_issue_interval", -1},    {"cu.memory_inflight_lines", +1},
      {"l1.size", +1},                  {"l1.bandwidth", +1},              {"l1.latency", -1},
      {"l2.size", +1},                  {"l2.channels", +1},               {"l2.read_bandwidth", +1},
      {"l2.write_bandwidth", +1},       {"l2.latency", -1},                {"l2.writeback_queue", +1},
      {"l2.far_latency", -1},           {"fabric.l2_link_bandwidth", +1},  {"mall.size", +1},
      {"mall.channels", +1},            {"mall.bandwidth", +1},            {"mall.latency", -1},
      {"hbm.peak_bandwidth", +1},       {"hbm.channels", +1},              {"hbm.latency", -1},
      {"hbm.write_queue", +1},          {"hbm.write_burst", +1},           {"hbm.turnaround", -1},
      {"dispatch.launch_overhead", -1}};
  return k;
}

report::PointSpec point(const char* arch, const char* kernel, const char* direction, std::uint32_t batch,
                        std::uint32_t hq, std::uint32_t hkv, std::uint64_t seqlen, std::uint32_t dim, bool causal) {
  report::PointSpec s;
  s.arch = arch;
  s.kernel = kernel;
  s.direction = direction;
  s.problem.batch = batch;
  s.problem.heads_q = hq;
  s.problem.heads_kv = hkv;
  s.problem.seqlen_q = s.problem.seqlen_k = seqlen;
  s.problem.head_dim_qk = s.problem.head_dim_v = dim;
  s.problem.causal = causal;
  s.approximate = true;
  return s;
}

// A parameter's text as the loader renders it ("2.1 GHz", "64 KiB", "51 cyc", "38") scaled by f:
// the number times f, the unit kept; cycle counts and plain counts rounded to whole numbers.
std::string scaled(const std::string& text, double f) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end) * f;
  std::string unit(end);
  unit.erase(0, unit.find_first_not_of(' '));
  char buf[64];
  if (unit.empty() || unit == "cyc") {
    std::snprintf(buf, sizeof buf, "%lld%s", std::llround(v), unit.c_str());
  } else {
    std::snprintf(buf, sizeof buf, "%g%s", v, unit.c_str());
  }
  return buf;
}

struct Job {
  std::size_t problem = 0, knob = 0;
  double factor = 1;
  std::string set;  // empty: the shipped config
  double time_us = 0;
  std::string refused;
};

}  // namespace

int main(int argc, char** argv) {
  std::size_t threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--threads" && i + 1 < argc) {
      threads = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "unknown flag %s (--threads N)\n", flag.c_str());
      return 2;
    }
  }
  const std::vector<report::PointSpec> problems{
      point("mi300x", "aiter-v3", "both", 2, 32, 8, 4096, 128, false),
      point("mi300x", "aiter-v3", "both", 2, 32, 8, 4096, 128, true),
      point("mi300x", "ck", "bwd", 4, 16, 16, 2048, 64, false),
      point("h100", "fa3", "both", 2, 32, 8, 4096, 128, false),
      point("h200", "fa2", "both", 2, 16, 16, 4096, 128, false),
  };
  std::vector<Job> jobs;
  for (std::size_t p = 0; p < problems.size(); ++p) {
    jobs.push_back(Job{p, 0, 1, "", 0, ""});
    const arch::LoadedArch loaded = arch::load_arch_file(arch::resolve_arch(problems[p].arch));
    for (std::size_t k = 0; k < knobs().size(); ++k) {
      const arch::ParamDecl* decl = arch::find_param(knobs()[k].path);
      if (!decl || !loaded.origins.count(decl->path)) continue;  // a part the GPU does not have
      for (double f : {0.5, 2.0}) {
        jobs.push_back(Job{p, k, f, decl->path + "=" + scaled(decl->render(loaded.spec), f), 0, ""});
      }
    }
  }
  std::unique_ptr<tbb::global_control> limit;
  if (threads > 0) limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads);
  tbb::parallel_for(std::size_t{0}, jobs.size(), [&](std::size_t i) {
    Job& j = jobs[i];
    report::PointSpec s = problems[j.problem];
    if (!j.set.empty()) s.sets = {j.set};
    try {
      j.time_us = report::simulate_point(s)["time_us"];
    } catch (const arch::ConfigError& e) {
      j.refused = e.what();
    }
  });
  std::size_t flagged = 0;
  double base = 0;
  for (const Job& j : jobs) {
    const report::PointSpec& s = problems[j.problem];
    if (j.set.empty()) {
      base = j.time_us;
      std::printf("\n%s %s %s %s: %.1f us\n", s.arch.c_str(), s.kernel.c_str(), s.direction.c_str(),
                  s.problem.describe().c_str(), base);
      continue;
    }
    if (!j.refused.empty()) {
      std::printf("  %-40s refused: %s\n", j.set.c_str(), j.refused.c_str());
      continue;
    }
    const double change = 100 * (j.time_us / base - 1);
    const bool adds_resource = (j.factor > 1) == (knobs()[j.knob].more_is > 0);
    const bool wrong_way = adds_resource ? change > 0.3 : change < -0.3;
    flagged += wrong_way ? 1 : 0;
    std::printf("  %-40s %10.1f us %+7.2f %%%s\n", j.set.c_str(), j.time_us, change,
                wrong_way ? "  <- the other way than the parameter's physics" : "");
  }
  std::printf("\n%zu responses the other way than the parameter's physics (beyond 0.3 %%)\n", flagged);
  return 0;
}
