// Measured cases from a measurements CSV (validation/measurements/, format in docs/validation.md):
// one row per (case, metric), with the attnsim arch and kernel spec that model it.
#pragma once

#include <string>
#include <vector>

#include "report/simulate_point.h"

namespace attnsim::report {

struct MeasuredCase {
  std::string file;
  std::size_t line = 0;  // 1-based line in the file
  PointSpec point;       // arch, kernel spec, problem, direction
  std::string gpu, kernel_name, metric, unit, source;
  double measured = 0;
  std::string label() const;  // e.g. "fwd B=8 Hq=32 Hkv=8 N=1024 d=128 bf16"
};

// The metrics a measurement may name, with the report key each is compared against.
std::vector<std::string> known_metrics();
// The predicted value of `metric` in a run report. Contract: `metric` is one of known_metrics();
// `matrix_utilisation` is the busy fraction of the matrix pipes of the report's kernel whose matrix
// pipes were busy longest (a profiler's MFMA utilisation is one kernel's).
double predicted(const nlohmann::json& report, const std::string& metric);

// Reads every row of a measurements CSV (RFC 4180 quoting). An optional `layout` column (bshd or
// bhsd; empty or absent: bshd) sets the problem's memory layout. Contract: throws arch::ConfigError
// naming file:line and the column on a missing column, a bad number, an unknown metric, direction or
// layout.
std::vector<MeasuredCase> read_measurements(const std::string& path);

}  // namespace attnsim::report
