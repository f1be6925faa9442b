#include "workloads/tile_program.h"

#include <array>
#include <map>
#include <stdexcept>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

namespace attnsim::workloads {

std::string_view to_string(Action a) {
  static constexpr std::array<std::string_view, static_cast<std::size_t>(Action::barrier) + 1> names{
      "load_q",      "load_k",       "load_v",       "load_o",        "load_do",       "load_lse",
      "load_delta",  "load_dq_acc",  "load_dk_expanded", "load_dv_expanded", "load_a", "load_b",
      "store_o",     "store_lse",    "store_delta",  "store_dq",      "store_dk",      "store_dv",
      "store_dq_acc", "store_dk_expanded", "store_dv_expanded", "store_c", "zero_dq_acc", "atomic_dq",
      "qk",          "online_softmax", "pv",         "finalize",      "row_dot",       "scores",
      "probs",       "dp",           "ds",           "dv_acc",        "dk_acc",        "dq_part",
      "dq_acc_local", "sum_slices",  "sum_group",    "lds_stage",     "lds_operands",  "mma",
      "barrier"};
  return names[static_cast<std::size_t>(a)];
}

bool is_memory(Action a) { return a <= Action::atomic_dq; }
bool is_store(Action a) { return a >= Action::store_o && a <= Action::atomic_dq; }

std::string_view to_string(Pipe p) {
  switch (p) {
    case Pipe::memory: return "memory";
    case Pipe::lds: return "lds";
    case Pipe::matrix: return "matrix";
    case Pipe::vector: return "vector";
    case Pipe::sync: return "sync";
  }
  return "?";
}

BodyBuilder& BodyBuilder::op(std::string name, Action a, Pipe p, OpCost cost, std::vector<std::string> after,
                             TensorId tensor, RowsOf rows) {
  ops_.push_back({std::move(name), a, p, cost, std::move(after), tensor, rows});
  return *this;
}

BodyBuilder& BodyBuilder::carried(const std::string& name, const std::string& on, std::uint16_t distance) {
  carried_.push_back({name, on, distance});
  return *this;
}

CompiledBody BodyBuilder::compile() const {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    if (!index.emplace(ops_[i].name, i).second) {
      throw std::logic_error(body_ + ": op '" + ops_[i].name + "' is defined twice");
    }
  }
  const auto find = [&](const std::string& n, const std::string& user) {
    const auto it = index.find(n);
    if (it == index.end()) throw std::logic_error(body_ + ": op '" + user + "' depends on unknown op '" + n + "'");
    return it->second;
  };
  Graph g(ops_.size());
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    for (const auto& a : ops_[i].after) boost::add_edge(find(a, ops_[i].name), i, g);
  }
  std::vector<std::size_t> reverse_topo;
  try {
    boost::topological_sort(g, std::back_inserter(reverse_topo));
  } catch (const boost::not_a_dag&) {
    throw std::logic_error(body_ + ": the same-iteration dependences form a cycle");
  }
  // Stable order: among valid topological orders, boost's depends on edge order, which is fixed.
  std::vector<std::size_t> order(reverse_topo.rbegin(), reverse_topo.rend());
  if (program_order_) {
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      order[i] = i;
      for (const auto& a : ops_[i].after) {
        if (find(a, ops_[i].name) > i) {
          throw std::logic_error(body_ + ": op '" + ops_[i].name + "' depends on '" + a + "', added after it");
        }
      }
    }
  }
  std::vector<std::uint16_t> position(ops_.size());
  for (std::size_t p = 0; p < order.size(); ++p) position[order[p]] = static_cast<std::uint16_t>(p);

  CompiledBody out;
  std::vector<std::uint64_t> finish(ops_.size(), 0);  // longest chain ending at each op (by position)
  for (std::size_t p = 0; p < order.size(); ++p) {
    const Pending& src = ops_[order[p]];
    OpTemplate t;
    t.action = src.action;
    t.pipe = src.pipe;
    t.tensor = src.tensor;
    t.rows = src.rows;
    t.cost = src.cost;
    t.deps_begin = static_cast<std::uint16_t>(out.deps.size());
    std::uint64_t start = 0;
    for (const auto& a : src.after) {
      const std::uint16_t dp = position[find(a, src.name)];
      out.deps.push_back(dp);
      start = std::max(start, finish[dp]);
    }
    t.deps_end = static_cast<std::uint16_t>(out.deps.size());
    t.carried_begin = static_cast<std::uint16_t>(out.carried.size());
    for (const auto& c : carried_) {
      if (c.name != src.name) continue;
      if (c.distance == 0) throw std::logic_error(body_ + ": carried dependence of '" + c.name + "' has distance 0");
      out.carried.push_back({position[find(c.on, c.name)], c.distance});
    }
    t.carried_end = static_cast<std::uint16_t>(out.carried.size());
    finish[p] = start + std::max<std::uint64_t>(1, src.cost.instructions());
    out.critical_path = std::max(out.critical_path, finish[p]);
    out.ops.push_back(t);
    out.names.push_back(src.name);
  }
  for (const auto& c : carried_) find(c.name, c.name);  // reject carried deps of unknown ops
  return out;
}

}  // namespace attnsim::workloads
