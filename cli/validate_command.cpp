#include "cli/validate_command.h"

#include <cmath>
#include <iostream>
#include <map>
#include <memory>

#include "report/error_groups.h"
#include "report/measurements.h"
#include "report/text_table.h"
#include "report/validation_plan.h"

namespace attnsim::cli {

using report::fixed;
using report::TextTable;
namespace {

constexpr int kExitOverBound = 3;

struct ValidateState {
  std::vector<std::string> files;
  std::vector<std::string> sets;
  double max_mape = 0;
  bool json = false;
  bool approximate = false;  // the engine's approximate tag mode for every case
  bool fast_forward = false;  // fast-forward of large grids for every case
  bool warm_up = false;       // a discarded warm-up run before every case
  unsigned threads = 0;       // simulations at once (0: every core)
};

void run_validate(const ValidateState& st, int& exit_code) {
  std::vector<report::MeasuredCase> cases;
  for (const auto& f : st.files) {
    auto more = report::read_measurements(f);
    cases.insert(cases.end(), more.begin(), more.end());
  }
  // Each distinct point is simulated once per clock mode, whatever the number of metrics measured on it.
  report::ValidationPlan plan(cases, report::ValidationSettings{st.sets, st.approximate, st.fast_forward, st.warm_up});
  plan.run(st.threads);
  nlohmann::json j;
  j["cases"] = nlohmann::json::array();
  // Absolute relative errors summed over the values that have one (a measured zero has none), in
  // all and per metric: one file can mix metrics whose errors differ in kind (time and traffic).
  struct ErrorSums {
    double modelled = 0, pinned = 0;
    std::size_t values = 0;
  };
  ErrorSums all;
  std::map<std::string, ErrorSums> by_metric;
  report::ErrorGroups groups;  // the modelled clock's errors by metric, kernel, direction and mask
  std::size_t without_error = 0;
  TextTable t;
  t.add({"case", "kernel", "metric", "measured", "modelled clock", "error", "pinned clock", "error"});
  for (std::size_t n = 0; n < cases.size(); ++n) {
    const report::MeasuredCase& c = cases[n];
    const nlohmann::json& rm = plan.result(plan.at(n).modelled);
    const nlohmann::json& rp = plan.result(plan.at(n).pinned);
    const std::string& clock = plan.at(n).clock;
    const double pm = report::predicted(rm, c.metric), pp = report::predicted(rp, c.metric);
    const bool relative = c.measured != 0;
    const double em = relative ? (pm - c.measured) / c.measured : 0, ep = relative ? (pp - c.measured) / c.measured : 0;
    if (relative) {
      for (ErrorSums* sums : {&all, &by_metric[c.metric]}) {
        sums->modelled += std::abs(em);
        sums->pinned += std::abs(ep);
        ++sums->values;
      }
      groups.add(c.metric, c.point.kernel, c.point.direction, c.point.problem.causal, em);
    } else {
      ++without_error;
    }
    const auto error_json = [&](double e) { return relative ? nlohmann::json(e) : nlohmann::json(nullptr); };
    j["cases"].push_back({{"file", c.file},
                          {"line", c.line},
                          {"case", c.label()},
                          {"arch", c.point.arch},
                          {"kernel", c.point.kernel},
                          {"metric", c.metric},
                          {"measured", c.measured},
                          {"modelled", {{"predicted", pm}, {"error", error_json(em)}, {"clock_mhz", rm["kernels"][0]["clock"]["engine_mhz"]}}},
                          {"pinned", {{"predicted", pp}, {"error", error_json(ep)}, {"clock", clock}}}});
    const auto pct = [&](double e) { return !relative ? std::string("n/a") : (e >= 0 ? "+" : "") + fixed(100 * e, 1) + " %"; };
    t.add({c.label(), c.point.kernel, c.metric, fixed(c.measured, 2), fixed(pm, 2), pct(em), fixed(pp, 2) + " @" + clock, pct(ep)});
  }
  const auto mean = [](double sum, std::size_t n) { return sum / static_cast<double>(std::max<std::size_t>(n, 1)); };
  j["summary"] = {{"cases", cases.size()},
                  {"values_without_relative_error", without_error},
                  {"mape_modelled_clock", mean(all.modelled, all.values)},
                  {"mape_pinned_clock", mean(all.pinned, all.values)},
                  {"tags", st.approximate ? "approximate" : "exact"},
                  {"fast_forward", st.fast_forward},
                  {"warm_up", st.warm_up}};
  j["summary"]["mape_by_metric"] = nlohmann::json::object();
  for (const auto& [metric, sums] : by_metric) {
    j["summary"]["mape_by_metric"][metric] = {
        {"values", sums.values}, {"mape_modelled_clock", mean(sums.modelled, sums.values)}, {"mape_pinned_clock", mean(sums.pinned, sums.values)}};
  }
  j["summary"]["by_group"] = groups.to_json();
  const bool over = st.max_mape > 0 && 100 * mean(all.modelled, all.values) > st.max_mape;
  j["summary"]["within_bound"] = !over;
  if (over) exit_code = kExitOverBound;
  if (st.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << t.render();
  std::cout << "  " << cases.size() << " measured values; mean absolute error " << fixed(100 * mean(all.modelled, all.values), 1)
            << " % with the modelled clock, " << fixed(100 * mean(all.pinned, all.values), 1)
            << " % with the clock pinned to the measured clock of the class of work"
            << (st.approximate ? " (approximate tags)" : "") << (st.fast_forward ? " (fast-forward)" : "")
            << (st.warm_up ? " (after a warm-up run)" : "") << "\n";
  if (without_error > 0) {
    std::cout << "  " << without_error << " measured zero" << (without_error == 1 ? " has" : "s have")
              << " no relative error (n/a) and count in no mean\n";
  }
  if (by_metric.size() > 1) {
    for (const auto& [metric, sums] : by_metric) {
      std::cout << "  " << metric << ": " << sums.values << " values, mean absolute error " << fixed(100 * mean(sums.modelled, sums.values), 1)
                << " % (modelled clock), " << fixed(100 * mean(sums.pinned, sums.values), 1) << " % (pinned)\n";
    }
  }
  if (groups.size() > 1) std::cout << "\n  by group, modelled clock (signed errors' range, mean of their absolute values):\n" << groups.render();
  if (over) std::cout << "  over the bound --max-mape " << fixed(st.max_mape, 1) << " %\n";
}

}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
  auto st = std::make_shared<ValidateState>();
  CLI::App* c = app.add_subcommand("validate", "Simulate every measured case of measurements CSVs and report the errors");
  c->add_option("files", st->files, "measurements CSV files (format: docs/validation.md)")->required()->check(CLI::ExistingFile);
  c->add_option("--set", st->sets, "override a config value for every case: key=value (repeatable)");
  c->add_option("--max-mape", st->max_mape, "exit 3 when the mean absolute error (modelled clock) exceeds this percentage");
  c->add_flag("--json", st->json, "print JSON: every case with both errors, and the summary");
  c->add_flag("--approximate", st->approximate,
              "simulate every case in the engine's approximate tag mode (faster; docs/model.md)");
  c->add_flag("--fast-forward", st->fast_forward,
              "skip and interpolate rounds of large grids in every case, as attnsim run --fast-forward (docs/model.md)");
  c->add_option("--threads", st->threads, "simulations at once (default: every core); the results do not depend on it");
  c->add_flag("--warm-up", st->warm_up,
              "simulate every case after a discarded run of itself, as attnsim run --warm-up (a benchmark's warm-up calls)");
  c->footer(
      "Each case runs twice: at the modelled clock, and with the clock pinned to the measured clock of its\n"
      "class of work (clock.measured.matrix_<dtype> of the config, e.g. 1207 MHz for bf16 on MI300X;\n"
      "the clock model's full-load clock where none is published).\n"
      "Examples:\n"
      "  attnsim validate validation/measurements/mi300x_aiter_v3.csv\n"
      "  attnsim validate validation/measurements/*.csv --json");
  c->callback([st, &exit_code] { run_validate(*st, exit_code); });
}

}  // namespace attnsim::cli
