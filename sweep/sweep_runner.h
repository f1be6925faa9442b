// Running a sweep's points on the cores of one machine (oneTBB), a shard of them at a time, with
// resume: points already recorded in the results directory are not simulated again.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sweep/result_store.h"
#include "sweep/sweep_spec.h"

namespace attnsim::sweep {

// Shard `index` of `count` (0-based) takes every count-th distinct point, starting at `index`.
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;
};

// "I/N" with 0 <= I < N. Contract: throws arch::ConfigError naming `flag` otherwise.
Shard parse_shard(const std::string& text, const std::string& flag = "--shard");
// A Slurm job array's shard, from SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT and
// SLURM_ARRAY_TASK_MIN (as `getenv` returns them); nothing when the first two are not set.
// Contract: throws arch::ConfigError when they are set but inconsistent.
std::optional<Shard> shard_from_slurm(const std::function<const char*(const char*)>& getenv);

// Counts of a sweep run, for its summary line.
struct SweepSummary {
  std::size_t points = 0;     // in the expansion
  std::size_t distinct = 0;   // different specs among them (identical points run once)
  std::size_t in_shard = 0;   // distinct points of this shard
  std::size_t reused = 0;     // already recorded in the directory (resume)
  std::size_t simulated = 0;  // run now
  std::size_t ok = 0, failed = 0;  // of the points run now
  std::size_t rows = 0;       // rows in results.csv
};
std::string summary_text(const SweepSummary& s, const std::string& dir);

// What a run has to do: the expansion and the points of this shard without a record.
struct SweepPlan {
  std::vector<SweepPoint> points;
  std::vector<std::string> expand_errors;  // per point: why its spec could not be built, or empty
  std::vector<std::size_t> todo;           // indices into `points`
  ordered_json manifest;                   // as written to the directory
  SweepSummary summary;
};
// Expands the spec, writes the manifest and finds what is left to do. With `retry_failed`,
// recorded failures are run again.
SweepPlan plan_sweep(const SweepSpec& spec, const ResultStore& store, const Shard& shard, bool retry_failed);

// Simulates one point and returns its record. Never throws for a point that is invalid for the
// model: its record has status "error" and the message.
PointRecord run_point(const SweepPoint& point, const std::string& expand_error);

struct SweepOptions {
  unsigned threads = 0;  // 0: every core
  Shard shard;
  bool retry_failed = false;
  std::ostream* log = nullptr;  // progress and summary; nothing when null
  bool tty = false;             // `log` is a terminal
};

// Runs a plan's points in parallel (options.shard and retry_failed are the plan's, not used here),
// saving each record as it finishes, then writes the results tables. Deterministic: the records
// and tables do not depend on the thread count or the order in which points finish.
SweepSummary run_plan(const SweepPlan& plan, const ResultStore& store, const SweepOptions& options);

// plan_sweep, then run_plan.
SweepSummary run_sweep(const SweepSpec& spec, const ResultStore& store, const SweepOptions& options);

}  // namespace attnsim::sweep
