// The report of one simulated run: every figure `attnsim run` prints, as JSON with stable keys
// (docs/output.md), shared by run, validate and sweep.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/gpu_spec.h"
#include "sim/engine.h"
#include "workloads/kernel_program.h"

namespace attnsim::report {

// What was simulated, for the report's header.
struct RunInputs {
  const arch::GpuSpec* gpu = nullptr;
  std::string kernel;     // schedule name
  std::string direction;  // fwd, bwd or both
  std::vector<const workloads::PassPrograms*> passes;
};

// Builds the report. Contract: `r` is the result of simulating `in.passes` on `*in.gpu`.
nlohmann::json run_report(const RunInputs& in, const sim::RunResult& r);

// One kernel of a report (the entries of its `kernels` array: docs/output.md).
nlohmann::json kernel_json(const arch::GpuSpec& gpu, const sim::KernelResult& k);

// The readable table of a report.
std::string render_run_report(const nlohmann::json& report);

// A Chrome/Perfetto trace of the run: one track per XCD and CU with workgroup spans, counter
// tracks for each kernel's HBM and L2 bandwidth. Needs EngineOptions::trace.
nlohmann::json trace_json(const RunInputs& in, const sim::RunResult& r);

}  // namespace attnsim::report
