// The errors of a validation grouped as its tables are read: per metric, kernel spec, direction
// and mask, the range of the signed errors and the mean of their absolute values.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

namespace attnsim::report {

// Signed relative errors collected by group. Contract: add() takes finite errors only (a measured
// zero, which has no relative error, is not added); groups come out in key order.
class ErrorGroups {
 public:
  void add(const std::string& metric, const std::string& kernel, const std::string& direction, bool causal, double error);
  std::size_t size() const { return groups_.size(); }
  // One object per group: metric, kernel, direction, causal, values, min_error, max_error, mape.
  nlohmann::json to_json() const;
  // The same as an aligned table of percentages (header included).
  std::string render() const;

 private:
  struct Range {
    std::size_t values = 0;
    double min = 0, max = 0, abs_sum = 0;
  };
  using Key = std::tuple<std::string, std::string, std::string, bool>;
  std::map<Key, Range> groups_;
};

}  // namespace attnsim::report
