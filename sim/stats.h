// A registry of named statistics with hierarchical names (`xcd[3].l2.channel[5].hits`), dumped as JSON.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace attnsim::sim {

// Counters are registered once (at setup) and then updated through the returned reference, so the
// inner loop never looks a name up. References stay valid for the registry's lifetime.
class Stats {
 public:
  Stats() = default;
  Stats(const Stats&) = delete;  // the index points into this registry's own storage
  Stats& operator=(const Stats&) = delete;
  std::uint64_t& counter(const std::string& name);
  double& value(const std::string& name);
  // The counter's value, or 0 when it was never registered.
  std::uint64_t get(const std::string& name) const;
  // The value's value, or 0 when it was never registered.
  double get_value(const std::string& name) const;
  // Adds, for every counter and value of `later`, what it gained since `earlier` (a snapshot of the
  // same cumulative figures taken before; a name `earlier` lacks counts from 0). Contract: no counter
  // of `later` is below its value in `earlier` (std::logic_error otherwise).
  void add_difference(const Stats& later, const Stats& earlier);

  // Nested JSON: "a.b[2].c" becomes {"a": {"b": [.., .., {"c": ...}]}}; keys sorted.
  nlohmann::json to_json() const;

 private:
  std::deque<std::uint64_t> counters_;
  std::deque<double> values_;
  std::map<std::string, std::uint64_t*> counter_index_;
  std::map<std::string, double*> value_index_;
};

}  // namespace attnsim::sim
