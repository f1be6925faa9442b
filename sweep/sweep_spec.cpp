#include "sweep/sweep_spec.h"

#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include <toml++/toml.h>

#include "arch/arch_locator.h"
#include "arch/config_error.h"
#include "arch/toml_parse.h"
#include "workloads/problem_toml.h"

namespace attnsim::sweep {

using arch::ConfigError;
using arch::ValueOrigin;

namespace {

ValueOrigin at(const std::string& file, const toml::node& n) {
  return ValueOrigin{file, n.source().begin.line, n.source().begin.column, {}};
}

// A scalar TOML value as JSON. Contract: throws unless a string, integer, float or boolean.
ordered_json scalar(const std::string& file, const std::string& key, const toml::node& n) {
  if (const auto* s = n.as_string()) return s->get();
  if (const auto* i = n.as_integer()) return i->get();
  if (const auto* f = n.as_floating_point()) return f->get();
  if (const auto* b = n.as_boolean()) return b->get();
  throw ConfigError(at(file, n), key, "expected a string, number or boolean");
}

// A problem field's value: a scalar, or [left, right] for the window.
ordered_json problem_value(const std::string& file, const std::string& key, const toml::node& n) {
  if (const auto* a = n.as_array()) {
    ordered_json out = ordered_json::array();
    for (const auto& e : *a) out.push_back(scalar(file, key, e));
    return out;
  }
  return scalar(file, key, n);
}

std::string checked_string(const std::string& file, const std::string& key, const toml::node& n) {
  if (!n.is_string()) throw ConfigError(at(file, n), key, "expected a string");
  return std::string(n.as_string()->get());
}

// The problem keys a sweep accepts: the problem file's, plus `seqlen` and `head_dim`, which set
// both of their pair.
const std::set<std::string>& problem_keys() {
  static const std::set<std::string> keys{"batch",      "heads_q", "heads_kv", "seqlen_q", "seqlen_k", "seqlen",
                                          "head_dim_qk", "head_dim_v", "head_dim", "dtype", "causal", "window",
                                          "layout"};
  return keys;
}

std::string unknown_problem_field() {
  std::string s = "unknown problem field (fields:";
  for (const auto& k : problem_keys()) s += " " + k;
  return s + ")";
}

// Sets a problem key in `problem` (JSON object), expanding the shorthands.
void set_problem_key(ordered_json& problem, const std::string& key, const ordered_json& value) {
  if (key == "seqlen") {
    problem["seqlen_q"] = value;
    problem["seqlen_k"] = value;
  } else if (key == "head_dim") {
    problem["head_dim_qk"] = value;
    problem["head_dim_v"] = value;
  } else {
    problem[key] = value;
  }
}

toml::table to_toml(const ordered_json& problem) {
  toml::table t;
  for (const auto& [k, v] : problem.items()) {
    if (v.is_string()) t.insert(k, v.get<std::string>());
    else if (v.is_boolean()) t.insert(k, v.get<bool>());
    else if (v.is_number_integer()) t.insert(k, v.get<std::int64_t>());
    else if (v.is_number_float()) t.insert(k, v.get<double>());
    else if (v.is_array()) {
      toml::array a;
      for (const auto& e : v) {
        if (e.is_number_integer()) a.push_back(e.get<std::int64_t>());
        else a.push_back(e.dump());
      }
      t.insert(k, std::move(a));
    }
  }
  return t;
}

workloads::Problem build_problem(const ordered_json& problem, const std::string& origin) {
  return workloads::load_problem_table(to_toml(problem), origin);
}

// Where an axis key applies. Contract: throws naming the key when it is none of the namespaces.
void check_axis_key(const std::string& file, const toml::node& n, const std::string& key) {
  if (key == "arch" || key == "kernel" || key == "direction") return;
  const auto dot = key.find('.');
  const std::string ns = key.substr(0, dot);
  const std::string rest = dot == std::string::npos ? "" : key.substr(dot + 1);
  if ((ns == "arch" || ns == "kernel") && !rest.empty()) return;
  if (ns == "problem" && problem_keys().count(rest)) return;
  if (ns == "problem") throw ConfigError(at(file, n), key, unknown_problem_field());
  throw ConfigError(at(file, n), key,
                    "unknown axis key; expected arch, arch.<config key>, problem.<field>, kernel, kernel.<schedule field> "
                    "or direction");
}

// A table's entries in the order they appear in the file (toml++ keeps tables sorted by key).
std::vector<std::pair<std::string, const toml::node*>> in_file_order(const toml::table& t) {
  std::vector<std::pair<std::string, const toml::node*>> entries;
  for (const auto& [k, v] : t) entries.emplace_back(std::string(k.str()), &v);
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const auto& x = a.second->source().begin;
    const auto& y = b.second->source().begin;
    return x.line != y.line ? x.line < y.line : x.column < y.column;
  });
  return entries;
}

Axis parse_axis(const std::string& file, const toml::table& t) {
  Axis axis;
  for (const auto& [key, node] : in_file_order(t)) {
    const toml::node& v = *node;
    check_axis_key(file, v, key);
    const toml::array* list = v.as_array();
    if (!list || list->empty()) throw ConfigError(at(file, v), key, "expected a non-empty list of values");
    std::vector<ordered_json> values;
    for (const auto& e : *list) {
      values.push_back(key.rfind("problem.", 0) == 0 ? problem_value(file, key, e) : scalar(file, key, e));
    }
    if (!axis.keys.empty() && values.size() != axis.size()) {
      throw ConfigError(at(file, v), key,
                        "has " + std::to_string(values.size()) + " values but " + axis.keys.front() + " in the same [[axis]] has " +
                            std::to_string(axis.size()) + "; keys of one [[axis]] advance together, so their lists must be "
                            "equally long (use separate [[axis]] tables for a cartesian product)");
    }
    axis.keys.push_back(key);
    axis.values.push_back(std::move(values));
  }
  if (axis.keys.empty()) throw ConfigError(ValueOrigin{file, t.source().begin.line, t.source().begin.column, {}}, "axis", "an [[axis]] table needs at least one key");
  return axis;
}

// The base problem as JSON, with the shorthands expanded.
ordered_json parse_base_problem(const std::string& file, const toml::table& t) {
  ordered_json problem = ordered_json::object();
  for (const auto& [k, v] : t) {
    const std::string key(k.str());
    if (!problem_keys().count(key)) throw ConfigError(at(file, v), "base.problem." + key, unknown_problem_field());
    set_problem_key(problem, key, problem_value(file, "base.problem." + key, v));
  }
  return problem;
}

// The base problem. The problem loader sees a rebuilt table (shorthands expanded), which has no
// source positions; its errors are re-pointed at the key's line in the spec.
workloads::Problem build_base_problem(const std::string& file, const toml::table& t, const ordered_json& problem) {
  try {
    return build_problem(problem, file + " [base.problem]");
  } catch (const ConfigError& e) {
    const std::string& key = e.key();
    const toml::node* n = key.empty() ? nullptr : t.get(key);
    if (!n && (key == "seqlen_q" || key == "seqlen_k")) n = t.get("seqlen");
    if (!n && (key == "head_dim_qk" || key == "head_dim_v")) n = t.get("head_dim");
    if (!n) throw;
    throw ConfigError(at(file, *n), "base.problem." + key, e.problem());
  }
}

// Applies one axis value to a point under construction.
struct PointDraft {
  ordered_json problem;
  std::string kernel_preset;
  std::string kernel_fields;  // ",field=value..." in order
  report::PointSpec spec;
};

void apply(PointDraft& d, const std::string& key, const ordered_json& value) {
  if (key == "arch") d.spec.arch = value_text(value);
  else if (key == "direction") d.spec.direction = value_text(value);
  else if (key == "kernel") d.kernel_preset = value_text(value);
  else if (key.rfind("arch.", 0) == 0) d.spec.sets.push_back(key.substr(5) + "=" + value_text(value));
  else if (key.rfind("kernel.", 0) == 0) d.kernel_fields += "," + key.substr(7) + "=" + value_text(value);
  else if (key.rfind("problem.", 0) == 0) set_problem_key(d.problem, key.substr(8), value);
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The hash of an arch config's contents, or null when the name does not resolve (the point then
// fails when it runs; its id still depends on the name).
ordered_json arch_file_hash(const std::string& arch) {
  try {
    return hex16(fnv1a(arch::read_text_file(arch::resolve_arch(arch))));
  } catch (const ConfigError&) {
    return nullptr;
  }
}

// The canonical spec with the arch config's hash already known.
ordered_json canonical_with(const report::PointSpec& spec, const ordered_json& arch_file) {
  const workloads::Problem& p = spec.problem;
  ordered_json key{
      {"attnsim", ATTNSIM_VERSION},
      {"arch", spec.arch},
      {"arch_file_fnv1a", arch_file},
      {"set", spec.sets},
      {"problem",
       {{"batch", p.batch}, {"heads_q", p.heads_q}, {"heads_kv", p.heads_kv}, {"seqlen_q", p.seqlen_q},
        {"seqlen_k", p.seqlen_k}, {"head_dim_qk", p.head_dim_qk}, {"head_dim_v", p.head_dim_v},
        {"dtype", std::string(arch::to_string(p.dtype))}, {"causal", p.causal},
        {"align", std::string(workloads::to_string(p.align))},
        {"window", p.window ? ordered_json{p.window->left, p.window->right} : ordered_json(nullptr)},
        {"layout", std::string(workloads::to_string(p.layout))}}},
      {"kernel", spec.kernel},
      {"direction", spec.direction}};
  // Only approximate, fast-forwarded and warmed-up points name their mode, so others keep the keys
  // of older sweeps.
  if (spec.approximate) key["tags"] = "approximate";
  if (spec.fast_forward) key["fast_forward"] = true;
  if (spec.warm_up) key["warm_up"] = true;
  return key;
}

}  // namespace

std::size_t SweepSpec::point_count() const {
  std::size_t n = 1;
  for (const auto& a : axes) n *= a.size();
  return n;
}

std::string value_text(const ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : ":") + value_text(e);
    return s;
  }
  return v.dump();
}

SweepSpec load_sweep_text(const std::string& text, const std::string& file) {
  const toml::table doc = arch::parse_toml(text, file);
  SweepSpec s;
  s.file = file;
  s.text = text;
  for (const auto& [k, v] : doc) {
    if (k.str() != "base" && k.str() != "axis") {
      throw ConfigError(at(file, v), std::string(k.str()), "unknown table; a sweep has [base] and [[axis]] tables");
    }
  }
  const toml::table* base = doc["base"].as_table();
  if (!base) throw ConfigError(ValueOrigin{file, 0, 0, {}}, "base", "missing table [base]");
  const toml::table* problem = nullptr;
  for (const auto& [k, v] : *base) {
    const std::string key(k.str());
    if (key == "arch") s.base.arch = checked_string(file, "base.arch", v);
    else if (key == "kernel") s.base.kernel = checked_string(file, "base.kernel", v);
    else if (key == "direction") s.base.direction = checked_string(file, "base.direction", v);
    else if (key == "tags") {
      const std::string mode = checked_string(file, "base.tags", v);
      if (mode != "exact" && mode != "approximate") {
        throw ConfigError(at(file, v), "base.tags", "'" + mode + "': expected \"exact\" or \"approximate\"");
      }
      s.base.approximate = mode == "approximate";
    } else if (key == "fast_forward" || key == "warm_up") {
      const std::optional<bool> on = v.value<bool>();
      if (!v.is_boolean() || !on) throw ConfigError(at(file, v), "base." + key, "expected true or false");
      (key == "fast_forward" ? s.base.fast_forward : s.base.warm_up) = *on;
    } else if (key == "problem" && v.is_table()) problem = v.as_table();
    else if (key == "set" && v.is_array()) {
      for (const auto& e : *v.as_array()) s.base.sets.push_back(checked_string(file, "base.set", e));
    } else {
      throw ConfigError(at(file, v), "base." + key,
                        "unknown key; [base] has arch, set = [\"key=value\", ...], kernel, direction, tags, fast_forward, warm_up and "
                        "[base.problem]");
    }
  }
  if (!problem) throw ConfigError(ValueOrigin{file, 0, 0, {}}, "base.problem", "missing table [base.problem]");
  s.base_problem = parse_base_problem(file, *problem);
  s.base.problem = build_base_problem(file, *problem, s.base_problem);
  report::parse_directions(s.base.direction, file + " base.direction");
  if (const toml::node* axes = doc.get("axis")) {
    const toml::array* list = axes->as_array();
    if (!list || !list->is_array_of_tables()) throw ConfigError(at(file, *axes), "axis", "expected [[axis]] tables");
    for (const auto& t : *list) s.axes.push_back(parse_axis(file, *t.as_table()));
  }
  return s;
}

SweepSpec load_sweep_file(const std::string& path) { return load_sweep_text(arch::read_text_file(path), path); }

std::vector<SweepPoint> expand(const SweepSpec& s, std::vector<std::string>* error_of) {
  const std::string base_preset = s.base.kernel.substr(0, s.base.kernel.find(','));
  const std::string base_fields = s.base.kernel.find(',') == std::string::npos ? "" : s.base.kernel.substr(s.base.kernel.find(','));

  const std::size_t n = s.point_count();
  std::vector<SweepPoint> points;
  points.reserve(n);
  if (error_of) error_of->assign(n, "");
  std::vector<std::size_t> pos(s.axes.size(), 0);  // odometer, last axis fastest
  std::map<std::string, ordered_json> arch_hashes;  // each arch config read once per expansion
  for (std::size_t i = 0; i < n; ++i) {
    PointDraft d{s.base_problem, base_preset, base_fields, s.base};
    SweepPoint p;
    p.index = i;
    p.params = ordered_json::object();
    for (std::size_t a = 0; a < s.axes.size(); ++a) {
      for (std::size_t k = 0; k < s.axes[a].keys.size(); ++k) {
        const ordered_json& v = s.axes[a].values[k][pos[a]];
        p.params[s.axes[a].keys[k]] = v;
        apply(d, s.axes[a].keys[k], v);
      }
    }
    d.spec.kernel = d.kernel_preset + d.kernel_fields;
    try {
      d.spec.problem = build_problem(d.problem, s.file + " point " + std::to_string(i));
    } catch (const ConfigError& e) {
      if (!error_of) throw;
      (*error_of)[i] = e.what();
    }
    p.spec = d.spec;
    auto hash = arch_hashes.find(p.spec.arch);
    if (hash == arch_hashes.end()) hash = arch_hashes.emplace(p.spec.arch, arch_file_hash(p.spec.arch)).first;
    p.canonical = canonical_with(p.spec, hash->second);
    p.id = hex16(fnv1a(p.canonical.dump()));
    if (error_of && !(*error_of)[i].empty()) p.id = hex16(fnv1a(p.params.dump() + (*error_of)[i]));
    points.push_back(std::move(p));
    for (std::size_t a = s.axes.size(); a-- > 0;) {
      if (++pos[a] < s.axes[a].size()) break;
      pos[a] = 0;
    }
  }
  return points;
}

ordered_json canonical_spec(const report::PointSpec& spec) { return canonical_with(spec, arch_file_hash(spec.arch)); }

std::string point_id(const report::PointSpec& spec) { return hex16(fnv1a(canonical_spec(spec).dump())); }

}  // namespace attnsim::sweep
