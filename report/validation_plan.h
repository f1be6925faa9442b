// The simulations a validation needs: every measured case at the modelled clock and with the clock
// pinned to its class of work's measured clock, each distinct point simulated once, on every core.
#pragma once

#include <exception>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/measurements.h"

namespace attnsim::report {

// How every case of a validation is simulated (the command's options).
struct ValidationSettings {
  std::vector<std::string> sets;  // config overrides for every case
  bool approximate = false;       // the engine's approximate tag mode
  bool fast_forward = false;      // fast-forward of large grids
  bool warm_up = false;           // a discarded warm-up run before every case
};

// The clock of the case's class of work, as measured: the config's published clock of full matrix
// work of the kernel's data type (`clock.measured.matrix_*`, e.g. BLOG-MAF2's 1207 MHz for bf16 on
// MI300X, the slowest XCD's: the controller is pinned where that XCD runs at it under
// clock.xcd_spread); where none is published, the clock model's full-load clock for it. As
// "<MHz>MHz". Contract: throws arch::ConfigError when the case's config does not load.
std::string class_clock(const MeasuredCase& c, const std::vector<std::string>& sets);

// Contract: run() simulates each distinct point once (simulations share no state, so they run on
// `threads` cores, 0 for every one) and the results do not depend on the thread count; it then
// throws the error the cases in their order would meet first (as simulating them one by one
// would): a simulation's arch::ConfigError prefixed with its case's file and line. The cases must
// outlive the plan (it names them in its errors).
class ValidationPlan {
 public:
  // Which simulations case n needs (at(n)): points modelled and pinned, and the pinned clock.
  struct Case {
    std::size_t modelled = 0, pinned = 0;
    std::string clock;
    std::exception_ptr clock_error;  // the case's config could not give its clock
  };

  ValidationPlan(const std::vector<MeasuredCase>& cases, const ValidationSettings& settings);
  void run(unsigned threads);

  const Case& at(std::size_t n) const { return cases_[n]; }
  const nlohmann::json& result(std::size_t point) const { return results_[point]; }

 private:
  std::size_t add(const PointSpec& spec);
  static void rethrow_at(const MeasuredCase& c, const std::exception_ptr& e);

  const std::vector<MeasuredCase>& measured_;
  std::vector<PointSpec> points_;
  std::map<std::string, std::size_t> index_;
  std::vector<Case> cases_;
  std::vector<nlohmann::json> results_;
  std::vector<std::exception_ptr> errors_;
};

}  // namespace attnsim::report
