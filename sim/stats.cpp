#include "sim/stats.h"

#include <stdexcept>

namespace attnsim::sim {

std::uint64_t& Stats::counter(const std::string& name) {
  if (value_index_.count(name)) throw std::logic_error("stat '" + name + "' is already a value");
  auto it = counter_index_.find(name);
  if (it != counter_index_.end()) return *it->second;
  counters_.push_back(0);
  counter_index_[name] = &counters_.back();
  return counters_.back();
}

double& Stats::value(const std::string& name) {
  if (counter_index_.count(name)) throw std::logic_error("stat '" + name + "' is already a counter");
  auto it = value_index_.find(name);
  if (it != value_index_.end()) return *it->second;
  values_.push_back(0);
  value_index_[name] = &values_.back();
  return values_.back();
}

std::uint64_t Stats::get(const std::string& name) const {
  const auto it = counter_index_.find(name);
  return it == counter_index_.end() ? 0 : *it->second;
}

double Stats::get_value(const std::string& name) const {
  const auto it = value_index_.find(name);
  return it == value_index_.end() ? 0 : *it->second;
}

void Stats::add_difference(const Stats& later, const Stats& earlier) {
  for (const auto& [name, p] : later.counter_index_) {
    const std::uint64_t before = earlier.get(name);
    if (*p < before) throw std::logic_error("stat '" + name + "' went down between the snapshots");
    counter(name) += *p - before;
  }
  for (const auto& [name, p] : later.value_index_) value(name) += *p - earlier.get_value(name);
}

namespace {

// Places `v` at the path `name` ("a.b[2].c") inside `root`.
void place(nlohmann::json& root, const std::string& name, const nlohmann::json& v) {
  nlohmann::json* node = &root;
  std::size_t i = 0;
  while (i < name.size()) {
    std::size_t end = name.find_first_of(".[", i);
    const std::string key = name.substr(i, end == std::string::npos ? std::string::npos : end - i);
    node = &(*node)[key];
    if (end == std::string::npos) break;
    while (end < name.size() && name[end] == '[') {
      const std::size_t close = name.find(']', end);
      const auto index = static_cast<std::size_t>(std::stoul(name.substr(end + 1, close - end - 1)));
      if (!node->is_array()) *node = nlohmann::json::array();
      while (node->size() <= index) node->push_back(nullptr);
      node = &(*node)[index];
      end = close + 1;
    }
    i = (end < name.size() && name[end] == '.') ? end + 1 : end;
  }
  *node = v;
}

}  // namespace

nlohmann::json Stats::to_json() const {
  nlohmann::json root = nlohmann::json::object();
  for (const auto& [name, p] : counter_index_) place(root, name, *p);
  for (const auto& [name, p] : value_index_) place(root, name, *p);
  return root;
}

}  // namespace attnsim::sim
