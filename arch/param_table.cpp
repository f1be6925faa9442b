#include "arch/param_table.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

namespace attnsim::arch {
namespace {

using nlohmann::json;

// A field accessor usable on const and non-const specs: [](auto& s) -> auto& { return s.x; }
#define ATTNSIM_FIELD(member) [](auto& s) -> auto& { return s.member; }

template <class Acc>
using field_t = std::remove_cvref_t<decltype(std::declval<Acc>()(std::declval<GpuSpec&>()))>;

std::string describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "the string \"" + std::string(n.as_string()->get()) + "\"";
    case toml::node_type::integer: return "the integer " + std::to_string(n.as_integer()->get());
    case toml::node_type::floating_point: {
      std::ostringstream os;
      os << n.as_floating_point()->get();
      return "the number " + os.str();
    }
    case toml::node_type::boolean: return n.as_boolean()->get() ? "true" : "false";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    default: return "a date or time";
  }
}

bool is_pow2(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

template <class T> struct unit_of;
template <> struct unit_of<Bytes> { static constexpr UnitKind kind = UnitKind::bytes; };
template <> struct unit_of<Hertz> { static constexpr UnitKind kind = UnitKind::hertz; };
template <> struct unit_of<BytesPerSecond> { static constexpr UnitKind kind = UnitKind::bytes_per_second; };
template <> struct unit_of<BytesPerClock> { static constexpr UnitKind kind = UnitKind::bytes_per_clock; };
template <> struct unit_of<Cycles> { static constexpr UnitKind kind = UnitKind::cycles; };
template <> struct unit_of<Picoseconds> { static constexpr UnitKind kind = UnitKind::picoseconds; };
template <> struct unit_of<Watts> { static constexpr UnitKind kind = UnitKind::watts; };

enum Flags : unsigned { kNone = 0, kPow2 = 1, kOdd = 2 };

// What a hashed set index's multiplier key means (l2.index_prime, mall.index_prime).
std::string index_prime_text(const std::string& cache) {
  return cache + " hashed set index's multiplier: a line's set is (line mod sets + (tag x index_prime) mod sets) mod "
         "sets, tag = line / sets (absent: " + std::to_string(kDefaultIndexPrime) +
         "; the real function is not published, so other values show how much a figure depends on it; unused with "
         "set_index = \"modulo\" and by the approximate mode, whose tags have no sets)";
}

// An integer count, written as a TOML integer.
template <class Acc>
ParamDecl count(std::string path, Acc acc, std::int64_t lo, std::int64_t hi, std::string desc,
                unsigned flags = kNone) {
  using T = field_t<Acc>;
  ParamDecl d;
  d.path = std::move(path);
  d.description = std::move(desc);
  d.expected = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]" +
               ((flags & kPow2) ? " that is a power of two" : "") + ((flags & kOdd) ? " that is odd" : "");
  d.assign = [acc, lo, hi, flags, expected = d.expected](GpuSpec& s,
                                                          const toml::node& n) -> std::optional<ParamIssue> {
    if (!n.is_integer()) return ParamIssue{"expected " + expected + ", got " + describe(n)};
    const std::int64_t v = n.as_integer()->get();
    if (v < lo || v > hi) return ParamIssue{"expected " + expected + ", got " + std::to_string(v) + " (out of range)"};
    if ((flags & kPow2) && !is_pow2(static_cast<std::uint64_t>(v))) {
      return ParamIssue{"expected " + expected + ", got " + std::to_string(v) + " (not a power of two)"};
    }
    if ((flags & kOdd) && v % 2 == 0) return ParamIssue{"expected " + expected + ", got " + std::to_string(v) + " (even)"};
    acc(s) = static_cast<T>(v);
    return std::nullopt;
  };
  d.render = [acc](const GpuSpec& s) { return std::to_string(acc(s)); };
  d.to_json = [acc](const GpuSpec& s) { return json(acc(s)); };
  return d;
}

// A physical quantity written with its unit, e.g. "64KiB"; lo and hi are in the canonical unit.
template <class Acc>
ParamDecl quantity(std::string path, Acc acc, double lo, double hi, std::string desc, unsigned flags = kNone) {
  using T = field_t<Acc>;
  using V = decltype(T{}.value);
  constexpr UnitKind kind = unit_of<T>::kind;
  ParamDecl d;
  d.path = std::move(path);
  d.description = std::move(desc);
  d.expected = std::string(unit_example(kind)) + " in [" + format(T{static_cast<V>(lo)}) + ", " +
               format(T{static_cast<V>(hi)}) + "]" + ((flags & kPow2) ? " that is a power of two" : "");
  d.assign = [acc, lo, hi, flags, kind, expected = d.expected](GpuSpec& s,
                                                                const toml::node& n) -> std::optional<ParamIssue> {
    if (!n.is_string()) {
      return ParamIssue{"expected " + expected + " as a quoted string with its unit (units: " +
                        std::string(unit_list(kind)) + "), got " + describe(n)};
    }
    const std::string text(n.as_string()->get());
    const UnitParse p = parse_quantity(text, kind);
    if (!p.canonical) return ParamIssue{p.error};
    const double v = *p.canonical;
    if (v < lo || v > hi) return ParamIssue{"expected " + expected + ", got \"" + text + "\" (out of range)"};
    if ((flags & kPow2) && !is_pow2(static_cast<std::uint64_t>(v))) {
      return ParamIssue{"expected " + expected + ", got \"" + text + "\" (not a power of two)"};
    }
    acc(s) = T{static_cast<V>(v)};
    return std::nullopt;
  };
  d.render = [acc](const GpuSpec& s) { return format(acc(s)); };
  d.to_json = [acc](const GpuSpec& s) { return json(acc(s).value); };
  return d;
}

// An increasing list of byte sizes, each written with its unit, e.g. ["0KiB", "8KiB"]; lo and hi bound
// every element.
template <class Acc>
ParamDecl size_list(std::string path, Acc acc, double lo, double hi, std::string desc) {
  ParamDecl d;
  d.path = std::move(path);
  d.description = std::move(desc);
  d.expected = "a non-empty array of increasing sizes such as \"64KiB\", each in [" + format(Bytes{static_cast<std::uint64_t>(lo)}) +
               ", " + format(Bytes{static_cast<std::uint64_t>(hi)}) + "]";
  d.assign = [acc, lo, hi, expected = d.expected](GpuSpec& s, const toml::node& n) -> std::optional<ParamIssue> {
    const toml::array* a = n.as_array();
    if (!a || a->empty()) return ParamIssue{"expected " + expected + ", got " + describe(n)};
    std::vector<Bytes> out;
    for (const toml::node& e : *a) {
      if (!e.is_string()) return ParamIssue{"expected " + expected + ", got an element " + describe(e), &e};
      const std::string text(e.as_string()->get());
      const UnitParse p = parse_quantity(text, UnitKind::bytes);
      if (!p.canonical) return ParamIssue{p.error, &e};
      if (*p.canonical < lo || *p.canonical > hi) return ParamIssue{"expected " + expected + ", got \"" + text + "\" (out of range)", &e};
      const Bytes b{static_cast<std::uint64_t>(*p.canonical)};
      if (!out.empty() && b.value <= out.back().value) {
        return ParamIssue{"expected " + expected + ", got \"" + text + "\" after " + format(out.back()) + " (not increasing)", &e};
      }
      out.push_back(b);
    }
    acc(s) = std::move(out);
    return std::nullopt;
  };
  d.render = [acc](const GpuSpec& s) {
    std::string r;
    for (const Bytes& b : acc(s)) r += (r.empty() ? "" : ", ") + format(b);
    return "[" + r + "]";
  };
  d.to_json = [acc](const GpuSpec& s) {
    nlohmann::json j = nlohmann::json::array();
    for (const Bytes& b : acc(s)) j.push_back(b.value);
    return j;
  };
  return d;
}

template <class E> struct choices;
template <> struct choices<Vendor> {
  static constexpr std::array values{Vendor::amd, Vendor::nvidia};
};
template <> struct choices<L2Scope> {
  static constexpr std::array values{L2Scope::per_xcd, L2Scope::shared};
};
template <> struct choices<WritePolicy> {
  static constexpr std::array values{WritePolicy::write_back, WritePolicy::write_through};
};
template <> struct choices<SetIndex> {
  static constexpr std::array values{SetIndex::modulo, SetIndex::hashed};
};
template <> struct choices<AtomicSite> {
  static constexpr std::array values{AtomicSite::memory_side, AtomicSite::l2};
};
template <> struct choices<L2KernelEnd> {
  static constexpr std::array values{L2KernelEnd::write_back, L2KernelEnd::keep};
};
template <> struct choices<DispatchOrder> {
  static constexpr std::array values{DispatchOrder::round_robin, DispatchOrder::round_robin_blocking};
};
template <> struct choices<Dtype> {
  static constexpr auto values = kDtypes;
};

template <class E>
std::string choice_list() {
  std::string s;
  for (E e : choices<E>::values) s += (s.empty() ? "" : ", ") + std::string("\"") + std::string(to_string(e)) + "\"";
  return s;
}

template <class E>
std::optional<E> parse_choice(std::string_view text) {
  for (E e : choices<E>::values) {
    if (to_string(e) == text) return e;
  }
  return std::nullopt;
}

// A plain number (a fraction), written as a TOML float or integer.
template <class Acc>
ParamDecl number(std::string path, Acc acc, double lo, double hi, std::string desc) {
  ParamDecl d;
  d.path = std::move(path);
  d.description = std::move(desc);
  std::ostringstream range;
  range << "a number in [" << lo << ", " << hi << "]";
  d.expected = range.str();
  d.assign = [acc, lo, hi, expected = d.expected](GpuSpec& s, const toml::node& n) -> std::optional<ParamIssue> {
    if (!n.is_floating_point() && !n.is_integer()) return ParamIssue{"expected " + expected + ", got " + describe(n)};
    const double v = n.is_integer() ? static_cast<double>(n.as_integer()->get()) : n.as_floating_point()->get();
    if (!(v >= lo && v <= hi)) return ParamIssue{"expected " + expected + ", got " + describe(n) + " (out of range)"};
    acc(s) = v;
    return std::nullopt;
  };
  d.render = [acc](const GpuSpec& s) {
    std::ostringstream os;
    os << acc(s);
    return os.str();
  };
  d.to_json = [acc](const GpuSpec& s) { return json(acc(s)); };
  return d;
}

// One of a fixed set of names, written as a TOML string.
template <class Acc>
ParamDecl choice(std::string path, Acc acc, std::string desc) {
  using E = field_t<Acc>;
  ParamDecl d;
  d.path = std::move(path);
  d.description = std::move(desc);
  d.expected = "one of " + choice_list<E>();
  d.assign = [acc, expected = d.expected](GpuSpec& s, const toml::node& n) -> std::optional<ParamIssue> {
    if (!n.is_string()) return ParamIssue{"expected " + expected + ", got " + describe(n)};
    const auto e = parse_choice<E>(n.as_string()->get());
    if (!e) return ParamIssue{"expected " + expected + ", got " + describe(n)};
    acc(s) = *e;
    return std::nullopt;
  };
  d.render = [acc](const GpuSpec& s) { return std::string(to_string(acc(s))); };
  d.to_json = [acc](const GpuSpec& s) { return json(std::string(to_string(acc(s)))); };
  return d;
}

// Free text, written as a non-empty TOML string.
template <class Acc>
ParamDecl text(std::string path, Acc acc, std::string desc) {
  ParamDecl d;
  d.path = std::move(path);
  d.description = std::move(desc);
  d.expected = "a non-empty string";
  d.assign = [acc](GpuSpec& s, const toml::node& n) -> std::optional<ParamIssue> {
    if (!n.is_string() || n.as_string()->get().empty()) return ParamIssue{"expected a non-empty string, got " + describe(n)};
    acc(s) = std::string(n.as_string()->get());
    return std::nullopt;
  };
  d.render = [acc](const GpuSpec& s) { return acc(s); };
  d.to_json = [acc](const GpuSpec& s) { return json(acc(s)); };
  return d;
}

// An optional clock (a std::optional<Hertz> field): absent means not set, rendered as `unset`.
template <class Acc>
ParamDecl optional_clock(std::string path, Acc acc, std::string desc, std::string unset) {
  ParamDecl d = quantity(std::move(path), [](auto& s) -> auto& { return s.clock.engine_max; }, 100 * 1e6, 10 * 1e9,
                         std::move(desc));
  d.optional_key = true;
  const auto parse = d.assign;
  d.assign = [parse, acc](GpuSpec& s, const toml::node& n) -> std::optional<ParamIssue> {
    GpuSpec scratch = s;  // parse into a copy's field, then move the value to the optional one
    if (auto issue = parse(scratch, n)) return issue;
    acc(s) = scratch.clock.engine_max;
    return std::nullopt;
  };
  d.render = [acc, unset](const GpuSpec& s) { return acc(s) ? format(*acc(s)) : unset; };
  d.to_json = [acc](const GpuSpec& s) { return acc(s) ? json(acc(s)->value) : json(nullptr); };
  return d;
}

// `clock.engine`: an optional pin of the engine clock; absent means the clock is modelled.
ParamDecl engine_pin_param() {
  return optional_clock("clock.engine", ATTNSIM_FIELD(clock.engine_pinned),
                        "pins the engine clock (absent: modelled from the power limit), e.g. --set clock.engine=1.9GHz",
                        "modelled");
}

ParamDecl schema_version_param() {
  ParamDecl d;
  d.path = "schema_version";
  d.description = "version of this file format";
  d.expected = "the integer " + std::to_string(kSchemaVersion);
  d.assign = [](GpuSpec& s, const toml::node& n) -> std::optional<ParamIssue> {
    if (!n.is_integer()) return ParamIssue{"expected the integer " + std::to_string(kSchemaVersion) + ", got " + describe(n)};
    const auto v = n.as_integer()->get();
    if (v != kSchemaVersion) {
      return ParamIssue{"schema version " + std::to_string(v) + " is not supported; this attnsim reads version " +
                        std::to_string(kSchemaVersion)};
    }
    s.schema_version = static_cast<int>(v);
    return std::nullopt;
  };
  d.render = [](const GpuSpec& s) { return std::to_string(s.schema_version); };
  d.to_json = [](const GpuSpec& s) { return json(s.schema_version); };
  return d;
}

// Reads one matrix instruction from an inline table, strictly.
std::optional<ParamIssue> read_instruction(const toml::table& t, MatrixInstruction& out) {
  static const std::array<std::string_view, 9> keys{"name", "dtype", "m", "n", "k", "blocks", "simds", "cycles",
                                                    "valu_coexec_cycles"};
  constexpr std::string_view kOptional = "n_step", kOptionalLatency = "latency";
  for (const auto& [k, v] : t) {
    if (k.str() != kOptional && k.str() != kOptionalLatency && std::find(keys.begin(), keys.end(), k.str()) == keys.end()) {
      return ParamIssue{"unknown field '" + std::string(k.str()) +
                            "' in a matrix instruction (fields: name, dtype, m, n, k, blocks, simds, cycles, "
                            "valu_coexec_cycles, and optionally n_step and latency)",
                        &v};
    }
  }
  for (auto key : keys) {
    if (!t.contains(key)) return ParamIssue{"matrix instruction lacks the field '" + std::string(key) + "'", &t};
  }
  const toml::node& name = *t.get("name");
  if (!name.is_string() || name.as_string()->get().empty()) {
    return ParamIssue{"field 'name': expected a non-empty string, got " + describe(name), &name};
  }
  out.name = std::string(name.as_string()->get());
  const toml::node& dt = *t.get("dtype");
  const auto dtype = dt.is_string() ? parse_choice<Dtype>(dt.as_string()->get()) : std::nullopt;
  if (!dtype) return ParamIssue{"field 'dtype': expected one of " + choice_list<Dtype>() + ", got " + describe(dt), &dt};
  out.dtype = *dtype;
  struct IntField {
    std::string_view key;
    std::uint32_t* dst;
    std::int64_t lo, hi;
  };
  const std::array<IntField, 7> ints{{{"m", &out.m, 1, 256},
                                      {"n", &out.n, 1, 256},
                                      {"k", &out.k, 1, 1024},
                                      {"blocks", &out.blocks, 1, 64},
                                      {"simds", &out.simds, 1, 16},
                                      {"cycles", &out.cycles, 1, 1024},
                                      {"valu_coexec_cycles", &out.valu_coexec_cycles, 0, 1024}}};
  for (const auto& f : ints) {
    const toml::node& n = *t.get(f.key);
    if (!n.is_integer() || n.as_integer()->get() < f.lo || n.as_integer()->get() > f.hi) {
      return ParamIssue{"field '" + std::string(f.key) + "': expected an integer in [" + std::to_string(f.lo) + ", " +
                            std::to_string(f.hi) + "], got " + describe(n),
                        &n};
    }
    *f.dst = static_cast<std::uint32_t>(n.as_integer()->get());
  }
  if (out.valu_coexec_cycles > out.cycles) {
    return ParamIssue{"field 'valu_coexec_cycles': " + std::to_string(out.valu_coexec_cycles) +
                          " exceeds the instruction's " + std::to_string(out.cycles) + " cycles",
                      t.get("valu_coexec_cycles")};
  }
  if (const toml::node* lat = t.get(kOptionalLatency)) {
    if (!lat->is_integer() || lat->as_integer()->get() < out.cycles || lat->as_integer()->get() > 4096) {
      return ParamIssue{"field 'latency': expected an integer in [cycles = " + std::to_string(out.cycles) +
                            ", 4096] (a result is not ready before the instruction leaves the pipe), got " + describe(*lat),
                        lat};
    }
    out.latency = static_cast<std::uint32_t>(lat->as_integer()->get());
  }
  if (const toml::node* step = t.get(kOptional)) {
    if (!step->is_integer() || step->as_integer()->get() < 1 || step->as_integer()->get() > out.n) {
      return ParamIssue{"field 'n_step': expected an integer in [1, n = " + std::to_string(out.n) + "], got " +
                            describe(*step),
                        step};
    }
    out.n_step = static_cast<std::uint32_t>(step->as_integer()->get());
    // A slice's cycles must be whole: N's cycles scale with N.
    if (out.n % out.n_step != 0 || out.cycles * out.n_step % out.n != 0 ||
        out.valu_coexec_cycles * out.n_step % out.n != 0) {
      return ParamIssue{"field 'n_step': " + std::to_string(out.n_step) + " must divide n (" + std::to_string(out.n) +
                            ") and leave whole cycles per slice (cycles x n_step / n = " +
                            std::to_string(out.cycles) + " x " + std::to_string(out.n_step) + " / " +
                            std::to_string(out.n) + ", valu_coexec_cycles likewise)",
                        step};
    }
  }
  return std::nullopt;
}

ParamDecl matrix_instructions_param() {
  ParamDecl d;
  d.path = "cu.matrix.instructions";
  d.description =
      "matrix instruction shapes: name, dtype, m, n, k, blocks, simds, cycles, valu_coexec_cycles (n_step: N variable; "
      "latency: issue to dependent use)";
  d.expected = "an array of inline tables {name, dtype, m, n, k, blocks, simds, cycles, valu_coexec_cycles[, n_step][, latency]}";
  d.assign = [](GpuSpec& s, const toml::node& n) -> std::optional<ParamIssue> {
    const toml::array* arr = n.as_array();
    if (!arr || arr->empty()) return ParamIssue{"expected a non-empty array of inline tables, got " + describe(n)};
    std::vector<MatrixInstruction> list;
    std::set<std::string> names;
    for (const toml::node& e : *arr) {
      const toml::table* t = e.as_table();
      if (!t) return ParamIssue{"expected an inline table per instruction, got " + describe(e), &e};
      MatrixInstruction ins;
      if (auto issue = read_instruction(*t, ins)) return issue;
      if (!names.insert(ins.name).second) return ParamIssue{"instruction '" + ins.name + "' is listed twice", &e};
      list.push_back(std::move(ins));
    }
    s.cu.matrix_instructions = std::move(list);
    return std::nullopt;
  };
  d.render = [](const GpuSpec& s) {
    std::string out;
    for (const auto& i : s.cu.matrix_instructions) {
      out += (out.empty() ? "" : ", ") + i.name + " (" + std::to_string(i.cycles) + " cyc)";
    }
    return out;
  };
  d.to_json = [](const GpuSpec& s) {
    json arr = json::array();
    for (const auto& i : s.cu.matrix_instructions) {
      arr.push_back({{"name", i.name},
                     {"dtype", std::string(to_string(i.dtype))},
                     {"m", i.m},
                     {"n", i.n},
                     {"k", i.k},
                     {"blocks", i.blocks},
                     {"simds", i.simds},
                     {"cycles", i.cycles},
                     {"valu_coexec_cycles", i.valu_coexec_cycles},
                     {"n_step", i.n_step},
                     {"latency", i.latency},
                     {"flops", i.flops()}});
    }
    return arr;
  };
  return d;
}

constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
constexpr double kMHz = 1e6, kGHz = 1e9, kTBps = 1e12, kUs = 1e6;

std::vector<ParamDecl> build_table() {
  std::vector<ParamDecl> t;
  t.push_back(schema_version_param());
  t.push_back(text("name", ATTNSIM_FIELD(name), "product name"));
  t.push_back(choice("vendor", ATTNSIM_FIELD(vendor), "vendor, which selects the profiler counter names predicted"));
  t.push_back(text("isa", ATTNSIM_FIELD(isa), "instruction set / compute capability (gfx942, sm_90)"));

  t.push_back(count("chip.xcds", ATTNSIM_FIELD(chip.xcds), 1, 64, "compute dies (XCDs); 1 for a monolithic GPU"));
  t.push_back(count("chip.cus_per_xcd", ATTNSIM_FIELD(chip.cus_per_xcd), 1, 1024, "active compute units (SMs) per XCD"));

  t.push_back(quantity("clock.engine_max", ATTNSIM_FIELD(clock.engine_max), 100 * kMHz, 10 * kGHz, "highest engine clock"));
  t.push_back(engine_pin_param());
  t.push_back(quantity("clock.matrix_max", ATTNSIM_FIELD(clock.matrix_max), 100 * kMHz, 10 * kGHz,
                       "highest engine clock while the matrix units are busy"));
  t.push_back(quantity("clock.memory", ATTNSIM_FIELD(clock.memory), 100 * kMHz, 10 * kGHz, "HBM memory clock (MCLK), reported with each kernel's clocks; HBM is timed by hbm.peak_bandwidth, stated at this clock (a faster memory is a higher hbm.peak_bandwidth)"));
  t.push_back(quantity("clock.fabric", ATTNSIM_FIELD(clock.fabric), 100 * kMHz, 10 * kGHz,
                       "fabric and memory-side cache clock"));
  t.push_back(number("clock.xcd_spread", ATTNSIM_FIELD(clock.xcd_spread), 0.0, 0.5,
                     "spread of the XCDs' engine clocks around the controller's, a fraction: XCD i of n at "
                     "1 + spread x (1/2 - i/(n-1)) of it (0: one clock)"));
  t.push_back(quantity("clock.power.limit", ATTNSIM_FIELD(clock.power_limit), 1.0, 1e5, "board power cap"));
  t.push_back(quantity("clock.power.baseline", ATTNSIM_FIELD(clock.power_baseline), 0.0, 1e5,
                       "power that does not scale with the engine clock (static, uncore, memory)"));
  for (Dtype dt : kDtypes) {
    const auto i = static_cast<std::size_t>(dt);
    const std::string name(to_string(dt));
    auto acc = [i](auto& s) -> auto& { return s.clock.power_matrix[i]; };
    t.push_back(quantity("clock.power.matrix_" + name, acc, 0.0, 1e6,
                         "dynamic power of dense " + name + " matrix work at clock.power.reference_clock (scales with f^3)"));
  }
  t.push_back(quantity("clock.power.stream", ATTNSIM_FIELD(clock.power_stream), 0.0, 1e6,
                       "dynamic power of memory streaming at the HBM peak bandwidth and clock.power.reference_clock (scales "
                       "with f^3)"));
  t.push_back(quantity("clock.power.vector", ATTNSIM_FIELD(clock.power_vector), 0.0, 1e6,
                       "dynamic power of vector work (VALU and transcendental instructions) at clock.power.reference_clock "
                       "with every SIMD's vector pipe busy (scales with f^3)"));
  t.push_back(count("clock.power.reference_simds", ATTNSIM_FIELD(clock.power_reference_simds), 1, 1u << 20,
                    "the SIMDs the matrix and vector classes are stated for: a chip of other SIMDs (chip.xcds x "
                    "chip.cus_per_xcd x cu.simds) draws them in proportion (the same energy per operation)"));
  t.push_back(quantity("clock.power.reference_hbm_bandwidth", ATTNSIM_FIELD(clock.power_reference_hbm_bandwidth), 1e9,
                       1000 * kTBps,
                       "the HBM peak the stream class is stated for: another hbm.peak_bandwidth draws it in "
                       "proportion (the same energy per byte)"));
  t.push_back(quantity("clock.power.reference_clock", ATTNSIM_FIELD(clock.power_reference_clock), 100 * kMHz, 10 * kGHz,
                       "the engine clock the dynamic power classes are stated at (the cube law's reference): another "
                       "clock.engine_max moves the cap, not the energy per operation at a given clock"));

  // From 100 ns: clock transitions take microseconds (BLOG-MAF2), and each period is an event of
  // the simulation (100 ps made the default case a hundred times slower).
  t.push_back(quantity("clock.power.control_interval", ATTNSIM_FIELD(clock.control_interval), 100e3, 1e9 * 1e3,
                       "how often the power controller re-sets the engine clock from the activity since the last time"));
  for (Dtype dt : kDtypes) {
    const auto i = static_cast<std::size_t>(dt);
    const std::string name(to_string(dt));
    t.push_back(optional_clock("clock.measured.matrix_" + name, [i](auto& s) -> auto& { return s.clock.measured_matrix[i]; },
                               "published clock of full dense " + name +
                                   " matrix work (a GEMM's median at the power limit); reference data for validate",
                               "not published"));
  }

  t.push_back(count("dispatch.xcds_per_partition", ATTNSIM_FIELD(dispatch.xcds_per_partition), 1, 64,
                    "XCDs one kernel launch spans (8 = MI300X SPX, 1 = CPX)"));
  t.push_back(choice("dispatch.order", ATTNSIM_FIELD(dispatch.order),
                     "how workgroups reach XCDs: WG i -> XCD (first_xcd + i) mod n, each XCD starting its share "
                     "as it gains room (round_robin) or one dispatcher waiting at an id whose XCD is full "
                     "(round_robin_blocking)"));
  t.push_back(count("dispatch.first_xcd", ATTNSIM_FIELD(dispatch.first_xcd), 0, 63, "XCD that receives workgroup 0"));
  t.push_back(quantity("dispatch.launch_overhead", ATTNSIM_FIELD(dispatch.launch_overhead), 0, 1000 * kUs,
                       "gap between the end of one kernel and the start of the next in a stream"));

  t.push_back(count("cu.wave_size", ATTNSIM_FIELD(cu.wave_size), 1, 128, "lanes per wave (warp)", kPow2));
  t.push_back(count("cu.simds", ATTNSIM_FIELD(cu.simds), 1, 16, "SIMDs (sub-partitions) per CU"));
  t.push_back(count("cu.wave_slots_per_simd", ATTNSIM_FIELD(cu.wave_slots_per_simd), 1, 64, "resident waves per SIMD"));
  t.push_back(count("cu.max_workgroup_size", ATTNSIM_FIELD(cu.max_workgroup_size), 1, 4096, "threads per workgroup"));
  t.push_back(quantity("cu.vgpr_file", ATTNSIM_FIELD(cu.vgpr_file), 1 * kKiB, 64 * kMiB, "vector register file per CU"));
  t.push_back(count("cu.vgpr_alloc_granule", ATTNSIM_FIELD(cu.vgpr_alloc_granule), 1, 256,
                    "registers per lane that a wave's allocation rounds up to"));
  t.push_back(count("cu.max_vgprs_per_wave", ATTNSIM_FIELD(cu.max_vgprs_per_wave), 1, 4096,
                    "registers per lane one wave may hold (AMD: ArchVGPR + AccVGPR)"));
  t.push_back(count("cu.valu_lanes_per_simd", ATTNSIM_FIELD(cu.valu_lanes_per_simd), 1, 128,
                    "VALU lanes per clock per SIMD"));
  t.push_back(count("cu.trans_lanes_per_simd", ATTNSIM_FIELD(cu.trans_lanes_per_simd), 1, 128,
                    "transcendental (exp, log, rcp) results per clock per SIMD"));
  t.push_back(quantity("cu.lds_size", ATTNSIM_FIELD(cu.lds_size), 1 * kKiB, 16 * kMiB, "LDS (shared memory) per CU"));
  t.push_back(quantity("cu.lds_max_per_workgroup", ATTNSIM_FIELD(cu.lds_max_per_workgroup), 1 * kKiB, 16 * kMiB,
                       "LDS one workgroup may allocate"));
  t.push_back(count("cu.lds_banks", ATTNSIM_FIELD(cu.lds_banks), 1, 1024, "LDS banks", kPow2));
  t.push_back(quantity("cu.lds_bank_width", ATTNSIM_FIELD(cu.lds_bank_width), 1, 64, "bytes per LDS bank access", kPow2));
  t.push_back(quantity("cu.lds_bandwidth", ATTNSIM_FIELD(cu.lds_bandwidth), 1, 65536, "LDS bytes per clock per CU"));
  t.push_back(quantity("cu.lds_latency", ATTNSIM_FIELD(cu.lds_latency), 1, 10000, "LDS load-to-use latency"));
  t.push_back(quantity("cu.barrier_latency", ATTNSIM_FIELD(cu.barrier_latency), 0, 100000,
                       "workgroup barrier latency once every wave has arrived"));
  t.push_back(quantity("cu.wave_issue_interval", ATTNSIM_FIELD(cu.wave_issue_interval), 1, 64,
                       "clocks between two instruction issues of one wave (its SIMD's turn at the scheduler)"));
  t.push_back(count("cu.memory_inflight_lines", ATTNSIM_FIELD(cu.memory_inflight_lines), 1, 65536,
                    "outstanding vector-memory line requests per CU"));
  for (Dtype dt : kDtypes) {
    const auto i = static_cast<std::size_t>(dt);
    const std::string name(to_string(dt));
    auto acc = [i](auto& s) -> auto& { return s.cu.matrix_flops_per_clk[i]; };
    t.push_back(count("cu.matrix.flops_per_clk." + name, acc, 1, 1 << 20,
                      "dense " + name + " matrix FLOP per clock per CU"));
  }
  t.push_back(matrix_instructions_param());

  t.push_back(quantity("l1.size", ATTNSIM_FIELD(l1.size), 1 * kKiB, 64 * kMiB,
                       "vector L1 per CU (with l1.carveouts: the L1 beside the largest carve-out, cu.lds_size)"));
  t.push_back(count("l1.ways", ATTNSIM_FIELD(l1.ways), 1, 1024, "L1 associativity at l1.size (with l1.carveouts the sets stay and the ways follow the carve-out)"));
  t.push_back(quantity("l1.line", ATTNSIM_FIELD(l1.line), 16, 4096, "L1 line size", kPow2));
  t.push_back(quantity("l1.bandwidth", ATTNSIM_FIELD(l1.bandwidth), 1, 65536, "L1 bytes per clock per CU"));
  t.push_back(quantity("l1.latency", ATTNSIM_FIELD(l1.latency), 1, 10000, "load-to-use latency of an L1 hit"));
  t.push_back(choice("l1.write_policy", ATTNSIM_FIELD(l1.write_policy), "L1 write policy"));
  {
    ParamDecl carveouts = size_list("l1.carveouts", ATTNSIM_FIELD(l1.carveouts), 0, 64 * kMiB,
                                    "shared-memory sizes an L1 shared with the LDS can be split into (the largest cu.lds_size); "
                                    "a kernel's L1 is l1.size + cu.lds_size less the smallest that holds its workgroups' shared memory");
    carveouts.optional_key = true;  // absent: the L1 and the LDS are apart (l1.size for every kernel)
    t.push_back(std::move(carveouts));
    ParamDecl reserve = quantity("l1.carveout_reserve", ATTNSIM_FIELD(l1.carveout_reserve), 0, 1 * kMiB,
                                 "shared memory the driver reserves per workgroup when it picks a carve-out (needed with l1.carveouts)");
    reserve.optional_key = true;  // absent: 0, no carve-outs
    t.push_back(std::move(reserve));
  }

  t.push_back(choice("l2.scope", ATTNSIM_FIELD(l2.scope), "one L2 per XCD, or one shared by the chip"));
  t.push_back(quantity("l2.size", ATTNSIM_FIELD(l2.size), 64 * kKiB, 4 * kGiB, "capacity of one L2 instance (a shared L2: all its partitions)"));
  t.push_back(count("l2.ways", ATTNSIM_FIELD(l2.ways), 1, 1024, "L2 associativity"));
  t.push_back(quantity("l2.line", ATTNSIM_FIELD(l2.line), 16, 4096, "L2 line size", kPow2));
  t.push_back(count("l2.channels", ATTNSIM_FIELD(l2.channels), 1, 1024, "channels (slices) per L2 instance (a shared L2: all its partitions)"));
  t.push_back(quantity("l2.read_bandwidth", ATTNSIM_FIELD(l2.read_bandwidth), 1, 65536,
                       "read bytes per clock per L2 channel"));
  t.push_back(quantity("l2.write_bandwidth", ATTNSIM_FIELD(l2.write_bandwidth), 1, 65536,
                       "write bytes per clock per L2 channel"));
  t.push_back(quantity("l2.latency", ATTNSIM_FIELD(l2.latency), 1, 100000, "added latency of an L2 hit over an L1 hit"));
  t.push_back(count("l2.writeback_queue", ATTNSIM_FIELD(l2.writeback_queue), 1, 65536,
                    "dirty lines per L2 channel that may wait to be written back before a request stalls"));
  t.push_back(choice("l2.write_policy", ATTNSIM_FIELD(l2.write_policy), "L2 write policy"));
  t.push_back(choice("l2.set_index", ATTNSIM_FIELD(l2.set_index),
                     "L2 set index: line mod sets, or hashed with the address bits above it"));
  {
    ParamDecl prime = count("l2.index_prime", ATTNSIM_FIELD(l2.index_prime), 1, 4294967295, index_prime_text("L2"), kOdd);
    prime.optional_key = true;  // absent: kDefaultIndexPrime
    t.push_back(std::move(prime));
  }
  t.push_back(choice("l2.atomics", ATTNSIM_FIELD(l2.atomics),
                     "where device-scope atomics are performed: beyond the L2 at the memory side, or in the L2"));
  t.push_back(choice("l2.kernel_end", ATTNSIM_FIELD(l2.kernel_end),
                     "what the L2 does at a kernel's end: write back every dirty line and invalidate, or keep its lines"));

  t.push_back(count("l2.partitions", ATTNSIM_FIELD(l2.partitions), 1, 2,
                    "partitions of a shared L2: 2 halves, each caching what its own CUs read, a line's home in one"));
  {
    ParamDecl far = quantity("l2.far_latency", ATTNSIM_FIELD(l2.far_latency), 1, 100000,
                             "added round trip of a request served through the far L2 partition (needed with l2.partitions = 2, unused with 1)");
    far.optional_key = true;  // absent: 0, one partition
    t.push_back(std::move(far));
  }

  t.push_back(quantity("fabric.l2_link_bandwidth", ATTNSIM_FIELD(fabric.l2_link_bandwidth), 1, 65536,
                       "bytes per clock from one L2 channel to the fabric"));

  const auto mall = [&t](ParamDecl d) {
    d.optional_section = "mall";
    t.push_back(std::move(d));
  };
  mall(quantity("mall.size", ATTNSIM_FIELD(mall.size), 1 * kMiB, 64 * kGiB, "memory-side cache capacity"));
  mall(count("mall.ways", ATTNSIM_FIELD(mall.ways), 1, 1024, "memory-side cache associativity"));
  mall(quantity("mall.line", ATTNSIM_FIELD(mall.line), 16, 4096, "memory-side cache line size", kPow2));
  mall(count("mall.channels", ATTNSIM_FIELD(mall.channels), 1, 4096, "memory-side cache channels"));
  mall(quantity("mall.bandwidth", ATTNSIM_FIELD(mall.bandwidth), 1, 65536,
                "bytes per fabric clock per memory-side cache channel"));
  mall(quantity("mall.latency", ATTNSIM_FIELD(mall.latency), 1, 100 * kUs,
                "added latency of a memory-side cache hit over an L2 miss"));
  mall(choice("mall.set_index", ATTNSIM_FIELD(mall.set_index),
              "memory-side cache set index: line mod sets, or hashed with the address bits above it"));
  {
    ParamDecl prime = count("mall.index_prime", ATTNSIM_FIELD(mall.index_prime), 1, 4294967295,
                            index_prime_text("memory-side cache"), kOdd);
    prime.optional_key = true;  // absent: kDefaultIndexPrime
    mall(std::move(prime));
  }

  t.push_back(count("hbm.stacks", ATTNSIM_FIELD(hbm.stacks), 1, 64, "HBM stacks"));
  t.push_back(count("hbm.channels", ATTNSIM_FIELD(hbm.channels), 1, 4096, "independent HBM channels in all stacks"));
  t.push_back(quantity("hbm.peak_bandwidth", ATTNSIM_FIELD(hbm.peak_bandwidth), 1e9, 1000 * kTBps,
                       "datasheet peak bandwidth of all channels together"));
  t.push_back(quantity("hbm.capacity", ATTNSIM_FIELD(hbm.capacity), 1 * kMiB, 64.0 * 1024 * kGiB,
                       "memory all stacks hold: a problem whose tensors exceed it is refused"));
  t.push_back(quantity("hbm.interleave", ATTNSIM_FIELD(hbm.interleave), 32, 1 * kMiB,
                       "consecutive bytes mapped to one channel", kPow2));
  t.push_back(quantity("hbm.latency", ATTNSIM_FIELD(hbm.latency), 1, 100 * kUs,
                       "added latency of a DRAM access over a memory-side cache miss"));
  t.push_back(quantity("hbm.write_queue", ATTNSIM_FIELD(hbm.write_queue), 64, 1 * kMiB,
                       "bytes of writes a channel's memory controller accepts (and acknowledges) before they drain"));
  t.push_back(quantity("hbm.write_burst", ATTNSIM_FIELD(hbm.write_burst), 32, 1 * kMiB,
                       "bytes a channel writes per switch from reads to writes and back"));
  t.push_back(quantity("hbm.turnaround", ATTNSIM_FIELD(hbm.turnaround), 0, 1 * kUs,
                       "data-bus time a channel loses per read-to-write and write-to-read switch pair"));
  return t;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

const std::vector<ParamDecl>& param_table() {
  static const std::vector<ParamDecl> table = build_table();
  return table;
}

const ParamDecl* find_param(std::string_view path) {
  for (const auto& d : param_table()) {
    if (d.path == path) return &d;
  }
  return nullptr;
}

std::string nearest_param(std::string_view path) {
  std::string best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& d : param_table()) {
    const std::size_t dist = edit_distance(path, d.path);
    if (dist < best_d) {
      best_d = dist;
      best = d.path;
    }
  }
  // Only suggest near misses (typos), not unrelated keys.
  return best_d <= std::max<std::size_t>(2, path.size() / 4) ? best : std::string();
}

}  // namespace attnsim::arch
