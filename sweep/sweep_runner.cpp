#include "sweep/sweep_runner.h"

#include <set>

#include "arch/config_error.h"
#include "report/on_cores.h"
#include "sweep/progress.h"

namespace attnsim::sweep {

using arch::ConfigError;
using arch::ValueOrigin;

namespace {

std::optional<std::size_t> parse_index(const std::string& s) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoul(s);
}

}  // namespace

Shard parse_shard(const std::string& text, const std::string& flag) {
  const auto slash = text.find('/');
  const auto i = slash == std::string::npos ? std::nullopt : parse_index(text.substr(0, slash));
  const auto n = slash == std::string::npos ? std::nullopt : parse_index(text.substr(slash + 1));
  if (!i || !n || *n == 0 || *i >= *n) {
    throw ConfigError(ValueOrigin{flag + " " + text, 0, 0, {}}, "shard", "expected I/N with 0 <= I < N, e.g. 0/8");
  }
  return Shard{*i, *n};
}

std::optional<Shard> shard_from_slurm(const std::function<const char*(const char*)>& getenv) {
  const char* id = getenv("SLURM_ARRAY_TASK_ID");
  const char* count = getenv("SLURM_ARRAY_TASK_COUNT");
  if (!id || !count) return std::nullopt;
  const char* min = getenv("SLURM_ARRAY_TASK_MIN");
  const auto i = parse_index(id), n = parse_index(count), m = parse_index(min ? min : "0");
  const std::string text = std::string("SLURM_ARRAY_TASK_ID=") + id + " SLURM_ARRAY_TASK_COUNT=" + count +
                           " SLURM_ARRAY_TASK_MIN=" + (min ? min : "(unset)");
  if (!i || !n || !m || *n == 0 || *i < *m || *i - *m >= *n) {
    throw ConfigError(ValueOrigin{text, 0, 0, {}}, "shard",
                      "the job array's task id minus its first id must be below its task count (use a contiguous --array)");
  }
  return Shard{*i - *m, *n};
}

std::string summary_text(const SweepSummary& s, const std::string& dir) {
  return "sweep: " + std::to_string(s.points) + " points (" + std::to_string(s.distinct) + " distinct), " +
         std::to_string(s.in_shard) + " in this shard: " + std::to_string(s.reused) + " already recorded, " +
         std::to_string(s.simulated) + " simulated (" + std::to_string(s.ok) + " ok, " + std::to_string(s.failed) +
         " failed)\nsweep: results in " + dir + "/results.csv and results.jsonl (" + std::to_string(s.rows) + " rows)\n";
}

SweepPlan plan_sweep(const SweepSpec& spec, const ResultStore& store, const Shard& shard, bool retry_failed) {
  SweepPlan plan;
  plan.points = expand(spec, &plan.expand_errors);
  plan.summary.points = plan.points.size();
  plan.manifest = manifest_of(spec, plan.points);
  store.write_manifest(plan.manifest);
  std::set<std::string> seen;
  for (const auto& p : plan.points) {
    if (!seen.insert(p.id).second) continue;
    const std::size_t distinct_index = plan.summary.distinct++;
    if (distinct_index % shard.count != shard.index) continue;
    ++plan.summary.in_shard;
    const auto record = store.load(p.id);
    if (record && !(retry_failed && (*record)["status"] != "ok")) {
      ++plan.summary.reused;
      continue;
    }
    plan.todo.push_back(p.index);
  }
  return plan;
}

PointRecord run_point(const SweepPoint& point, const std::string& expand_error) {
  PointRecord r{{"id", point.id}, {"status", "ok"}, {"params", point.params}, {"spec", point.canonical}};
  if (!expand_error.empty()) {
    r["status"] = "error";
    r["error"] = expand_error;
    return r;
  }
  try {
    r["report"] = ordered_json::parse(report::simulate_point(point.spec).dump());
  } catch (const ConfigError& e) {
    r["status"] = "error";
    r["error"] = e.what();
  } catch (const std::exception& e) {
    r["status"] = "error";
    r["error"] = std::string("internal error: ") + e.what();
  }
  return r;
}

SweepSummary run_sweep(const SweepSpec& spec, const ResultStore& store, const SweepOptions& o) {
  return run_plan(plan_sweep(spec, store, o.shard, o.retry_failed), store, o);
}

SweepSummary run_plan(const SweepPlan& plan, const ResultStore& store, const SweepOptions& o) {
  std::optional<Progress> progress;
  if (o.log) progress.emplace(*o.log, plan.todo.size(), o.tty);
  std::vector<char> failed(plan.todo.size(), 0);
  report::for_each_on_cores(plan.todo.size(), o.threads, [&](std::size_t t) {
    const std::size_t i = plan.todo[t];
    const PointRecord r = run_point(plan.points[i], plan.expand_errors[i]);
    failed[t] = r["status"] != "ok";
    store.save(r);
    if (progress) progress->done(failed[t]);
  });
  if (progress) progress->finish();
  SweepSummary s = plan.summary;
  s.simulated = plan.todo.size();
  for (const char f : failed) (f ? s.failed : s.ok) += 1;
  s.rows = store.write_results(plan.manifest);
  return s;
}

}  // namespace attnsim::sweep
