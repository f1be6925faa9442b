#include "report/validation_plan.h"

#include <cmath>

#include "arch/arch_locator.h"
#include "arch/clock_model.h"
#include "arch/config_error.h"
#include "arch/spec_loader.h"
#include "report/on_cores.h"

namespace attnsim::report {

std::string class_clock(const MeasuredCase& c, const std::vector<std::string>& sets) {
  const auto gpu = arch::load_arch_file(arch::resolve_arch(c.point.arch), sets).spec;
  const auto& measured = gpu.clock.measured_matrix[static_cast<std::size_t>(c.point.problem.dtype)];
  const double hz =
      measured ? arch::controller_for_slowest_xcd(gpu, measured->value) : arch::sustained_clock(gpu, arch::matrix_load(c.point.problem.dtype)).clock.value;
  return std::to_string(static_cast<long long>(std::llround(hz / 1e6))) + "MHz";
}

ValidationPlan::ValidationPlan(const std::vector<MeasuredCase>& cases, const ValidationSettings& settings)
    : measured_(cases) {
  for (const auto& c : cases) {
    Case k;
    PointSpec modelled = c.point;
    modelled.sets = settings.sets;
    modelled.approximate = settings.approximate;
    modelled.fast_forward = settings.fast_forward;
    modelled.warm_up = settings.warm_up;
    k.modelled = add(modelled);
    try {
      k.clock = class_clock(c, settings.sets);
      PointSpec pinned = modelled;
      pinned.sets.push_back("clock.engine=" + k.clock);
      k.pinned = add(pinned);
    } catch (...) {
      k.clock_error = std::current_exception();
    }
    cases_.push_back(k);
  }
}

std::size_t ValidationPlan::add(const PointSpec& spec) {
  std::string key = spec.arch + "|" + spec.kernel + "|" + spec.direction + "|" + spec.problem.describe() +
                    (spec.approximate ? "|approximate" : "") + (spec.fast_forward ? "|fast_forward" : "") +
                    (spec.empty_caches_per_kernel ? "|empty_caches" : "") + (spec.warm_up ? "|warm_up" : "");
  for (const auto& s : spec.sets) key += "|" + s;
  const auto [it, added] = index_.emplace(key, points_.size());
  if (added) points_.push_back(spec);
  return it->second;
}

void ValidationPlan::run(unsigned threads) {
  results_.assign(points_.size(), nlohmann::json());
  errors_.assign(points_.size(), nullptr);
  for_each_on_cores(points_.size(), threads, [&](std::size_t i) {
    try {
      results_[i] = simulate_point(points_[i]);
    } catch (...) {
      errors_[i] = std::current_exception();
    }
  });
  // Simulated one by one, the cases would meet their errors in this order.
  for (std::size_t n = 0; n < cases_.size(); ++n) {
    const Case& k = cases_[n];
    rethrow_at(measured_[n], errors_[k.modelled]);
    if (k.clock_error) std::rethrow_exception(k.clock_error);
    rethrow_at(measured_[n], errors_[k.pinned]);
  }
}

void ValidationPlan::rethrow_at(const MeasuredCase& c, const std::exception_ptr& e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const arch::ConfigError& error) {
    throw arch::ConfigError(c.file + ":" + std::to_string(c.line) + ": " + error.what());
  }
}

}  // namespace attnsim::report
