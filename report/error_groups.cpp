#include "report/error_groups.h"

#include <algorithm>
#include <cmath>

#include "report/text_table.h"

namespace attnsim::report {

void ErrorGroups::add(const std::string& metric, const std::string& kernel, const std::string& direction, bool causal,
                      double error) {
  Range& r = groups_[Key{metric, kernel, direction, causal}];
  r.min = r.values ? std::min(r.min, error) : error;
  r.max = r.values ? std::max(r.max, error) : error;
  r.abs_sum += std::abs(error);
  ++r.values;
}

nlohmann::json ErrorGroups::to_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [key, r] : groups_) {
    out.push_back({{"metric", std::get<0>(key)},
                   {"kernel", std::get<1>(key)},
                   {"direction", std::get<2>(key)},
                   {"causal", std::get<3>(key)},
                   {"values", r.values},
                   {"min_error", r.min},
                   {"max_error", r.max},
                   {"mape", r.abs_sum / static_cast<double>(r.values)}});
  }
  return out;
}

std::string ErrorGroups::render() const {
  const auto pct = [](double e) {
    std::string s = e >= 0 ? "+" : "";
    s += fixed(100 * e, 1);
    s += " %";
    return s;
  };
  TextTable t;
  t.add({"metric", "kernel", "direction", "mask", "values", "min", "max", "mean abs"});
  for (const auto& [key, r] : groups_) {
    t.add({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key) ? "causal" : "none", std::to_string(r.values),
           pct(r.min), pct(r.max), fixed(100 * r.abs_sum / static_cast<double>(r.values), 1) + " %"});
  }
  return t.render();
}

}  // namespace attnsim::report
