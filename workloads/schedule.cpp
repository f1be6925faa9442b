#include "workloads/schedule.h"

#include <cstdlib>
#include <functional>
#include <sstream>

#include "arch/config_error.h"
#include "workloads/presets.h"

namespace attnsim::workloads {

using arch::ConfigError;
using arch::ValueOrigin;

std::string_view to_string(DqMode m) {
  switch (m) {
    case DqMode::atomic: return "atomic";
    case DqMode::two_pass: return "two_pass";
    case DqMode::split: return "split";
  }
  return "?";
}
std::string_view to_string(GqaMode m) { return m == GqaMode::expand ? "expand" : "kv_loop"; }
std::string_view to_string(GridOrder o) {
  switch (o) {
    case GridOrder::blocks_first: return "blocks_first";
    case GridOrder::heads_first: return "heads_first";
    case GridOrder::longest_first: return "longest_first";
  }
  return "?";
}

namespace {
bool masked(const Problem& p) { return p.causal || p.window.has_value(); }
}  // namespace

std::uint32_t KernelSchedule::fwd_block_n(const Problem& p) const {
  return masked(p) && fwd.block_n_masked ? fwd.block_n_masked : fwd.block_n;
}
std::uint32_t KernelSchedule::bwd_block_m(const Problem& p) const {
  return masked(p) && bwd.block_m_masked ? bwd.block_m_masked : bwd.block_m;
}

namespace {

// One overridable field: its name, how to print it, and how to set it from text.
struct Field {
  std::string name;
  std::function<std::string(const KernelSchedule&)> get;
  std::function<std::optional<std::string>(KernelSchedule&, const std::string&)> set;  // error text
};

std::optional<std::uint32_t> to_uint(const std::string& v, std::uint32_t lo, std::uint32_t hi) {
  if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const auto x = static_cast<std::uint32_t>(std::stoul(v));
  if (x < lo || x > hi) return std::nullopt;
  return x;
}

template <class Acc>
Field uint_field(std::string name, Acc acc, std::uint32_t lo, std::uint32_t hi) {
  Field f;
  f.name = std::move(name);
  f.get = [acc](const KernelSchedule& k) { return std::to_string(acc(k)); };
  f.set = [acc, lo, hi](KernelSchedule& k, const std::string& v) -> std::optional<std::string> {
    const auto x = to_uint(v, lo, hi);
    if (!x) return "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got \"" + v + "\"";
    acc(k) = *x;
    return std::nullopt;
  };
  return f;
}

// A density coefficient: a non-negative decimal number.
template <class Acc>
Field number_field(std::string name, Acc acc) {
  Field f;
  f.name = std::move(name);
  f.get = [acc](const KernelSchedule& k) {
    std::ostringstream os;
    os << acc(k);
    return os.str();
  };
  f.set = [acc](KernelSchedule& k, const std::string& v) -> std::optional<std::string> {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || !(x >= 0) || x > 1e6) {
      return "expected a non-negative number, got \"" + v + "\"";
    }
    acc(k) = x;
    return std::nullopt;
  };
  return f;
}

// Marks a source as overridden by --kernel (once).
void mark_overridden(std::string& source) {
  if (source.rfind("overridden", 0) != 0) source = "overridden (--kernel); was: " + source;
}

// `f`, whose successful set also calls mark(k).
template <class Mark>
Field marking(Field f, Mark mark) {
  auto set = f.set;
  f.set = [set, mark](KernelSchedule& k, const std::string& v) {
    auto err = set(k, v);
    if (!err) mark(k);
    return err;
  };
  return f;
}

// The density fields of one loop: `prefix` is "fwd.loop", "bwd.loop" or "bwd.dq_loop". Overriding
// one marks the density's source as overridden.
template <class Acc>
void density_fields(std::vector<Field>& t, const std::string& prefix, Acc loop) {
  const auto wrap = [loop](Field f) {
    return marking(std::move(f), [loop](KernelSchedule& k) { mark_overridden(loop(k).source); });
  };
  t.push_back(wrap(number_field(prefix + ".valu_per_score_lane", [loop](auto& k) -> auto& { return loop(k).valu_per_score_lane; })));
  t.push_back(wrap(number_field(prefix + ".mask_valu_per_score_lane",
                                [loop](auto& k) -> auto& { return loop(k).mask_valu_per_score_lane; })));
  t.push_back(wrap(number_field(prefix + ".lds_read_per_tile_byte",
                                [loop](auto& k) -> auto& { return loop(k).lds_read_per_tile_byte; })));
  t.push_back(wrap(number_field(prefix + ".lds_write_per_tile_byte",
                                [loop](auto& k) -> auto& { return loop(k).lds_write_per_tile_byte; })));
  t.push_back(wrap(uint_field(prefix + ".barriers", [loop](auto& k) -> auto& { return loop(k).barriers; }, 0, 1024)));
  t.push_back(wrap(uint_field(prefix + ".extra_trans", [loop](auto& k) -> auto& { return loop(k).extra_trans; }, 0, 1024)));
  t.push_back(wrap(number_field(prefix + ".issue_only_per_score_lane",
                                [loop](auto& k) -> auto& { return loop(k).issue_only_per_score_lane; })));
  t.push_back(wrap(number_field(prefix + ".issue_only_per_tile_byte",
                                [loop](auto& k) -> auto& { return loop(k).issue_only_per_tile_byte; })));
  t.push_back(wrap(number_field(prefix + ".lds_wavefronts_per_tile_byte",
                                [loop](auto& k) -> auto& { return loop(k).lds_wavefronts_per_tile_byte; })));
  t.push_back(wrap(number_field(prefix + ".lds_wavefronts_per_score_lane",
                                [loop](auto& k) -> auto& { return loop(k).lds_wavefronts_per_score_lane; })));
  t.push_back(wrap(number_field(prefix + ".issue_wait_per_instruction",
                                [loop](auto& k) -> auto& { return loop(k).issue_wait_per_instruction; })));
}

// The launch resources of one loop-free backward kernel: `prefix` is "bwd.preprocess_kernel",
// "bwd.zero_kernel", "bwd.convert_kernel" or "bwd.reduce_kernel" (waves 0: the main kernel's).
// Overriding one marks BwdSchedule::rows_kernels_source as overridden.
template <class Acc>
void rows_kernel_fields(std::vector<Field>& t, const std::string& prefix, Acc kernel) {
  const auto wrap = [](Field f) {
    return marking(std::move(f), [](KernelSchedule& k) { mark_overridden(k.bwd.rows_kernels_source); });
  };
  t.push_back(wrap(uint_field(prefix + ".waves", [kernel](auto& k) -> auto& { return kernel(k).waves; }, 0, 64)));
  t.push_back(wrap(uint_field(prefix + ".vgprs", [kernel](auto& k) -> auto& { return kernel(k).vgprs; }, 1, 512)));
  t.push_back(wrap(uint_field(prefix + ".lds_bytes", [kernel](auto& k) -> auto& { return kernel(k).lds_bytes; }, 0, 1 << 24)));
}

template <class Acc>
Field bool_field(std::string name, Acc acc) {
  Field f;
  f.name = std::move(name);
  f.get = [acc](const KernelSchedule& k) { return std::string(acc(k) ? "true" : "false"); };
  f.set = [acc](KernelSchedule& k, const std::string& v) -> std::optional<std::string> {
    if (v != "true" && v != "false") return "expected true or false, got \"" + v + "\"";
    acc(k) = v == "true";
    return std::nullopt;
  };
  return f;
}

template <class Acc, class E, std::size_t N>
Field enum_field(std::string name, Acc acc, const std::array<E, N>& values) {
  Field f;
  f.name = std::move(name);
  f.get = [acc](const KernelSchedule& k) { return std::string(to_string(acc(k))); };
  f.set = [acc, values](KernelSchedule& k, const std::string& v) -> std::optional<std::string> {
    std::string list;
    for (E e : values) {
      if (to_string(e) == v) {
        acc(k) = e;
        return std::nullopt;
      }
      list += (list.empty() ? "" : ", ") + std::string(to_string(e));
    }
    return "expected one of " + list + ", got \"" + v + "\"";
  };
  return f;
}

template <class Acc>
Field text_field(std::string name, Acc acc) {
  Field f;
  f.name = std::move(name);
  f.get = [acc](const KernelSchedule& k) { return acc(k); };
  f.set = [acc](KernelSchedule& k, const std::string& v) -> std::optional<std::string> {
    if (v.empty()) return std::string("expected a non-empty name");
    acc(k) = v;
    return std::nullopt;
  };
  return f;
}

// `shapes`: code_objects (only the shapes a precompiled kernel's code objects cover) or any.
Field shapes_field() {
  Field f;
  f.name = "shapes";
  f.get = [](const KernelSchedule& k) { return std::string(k.any_shape ? "any" : "code_objects"); };
  f.set = [](KernelSchedule& k, const std::string& v) -> std::optional<std::string> {
    if (v != "any" && v != "code_objects") return "expected code_objects or any, got '" + v + "'";
    k.any_shape = v == "any";
    return std::nullopt;
  };
  return f;
}

#define ATTNSIM_SCHED(member) [](auto& k) -> auto& { return k.member; }

const std::vector<Field>& fields() {
  static const std::vector<Field> table = [] {
    constexpr std::array grids{GridOrder::blocks_first, GridOrder::heads_first, GridOrder::longest_first};
    constexpr std::array dqs{DqMode::atomic, DqMode::two_pass, DqMode::split};
    constexpr std::array gqas{GqaMode::expand, GqaMode::kv_loop};
    std::vector<Field> t;
    t.push_back(uint_field("fwd.block_m", ATTNSIM_SCHED(fwd.block_m), 1, 4096));
    t.push_back(uint_field("fwd.block_n", ATTNSIM_SCHED(fwd.block_n), 1, 4096));
    t.push_back(uint_field("fwd.block_n_masked", ATTNSIM_SCHED(fwd.block_n_masked), 0, 4096));
    t.push_back(uint_field("fwd.waves", ATTNSIM_SCHED(fwd.waves), 1, 64));
    t.push_back(uint_field("fwd.load_waves", ATTNSIM_SCHED(fwd.load_waves), 0, 64));
    t.push_back(uint_field("fwd.stages", ATTNSIM_SCHED(fwd.stages), 1, 8));
    t.push_back(bool_field("fwd.pair_tiles", ATTNSIM_SCHED(fwd.pair_tiles)));
    t.push_back(bool_field("fwd.persistent", ATTNSIM_SCHED(fwd.persistent)));
    t.push_back(enum_field("fwd.grid", ATTNSIM_SCHED(fwd.grid), grids));
    t.push_back(uint_field("fwd.l2_section_bytes", ATTNSIM_SCHED(fwd.l2_section_bytes), 0, 1u << 31));
    t.push_back(uint_field("fwd.xcd_remap", ATTNSIM_SCHED(fwd.xcd_remap), 0, 64));
    t.push_back(text_field("fwd.mfma", ATTNSIM_SCHED(fwd.mfma)));
    t.push_back(uint_field("fwd.vgprs", ATTNSIM_SCHED(fwd.vgprs), 1, 512));
    t.push_back(uint_field("fwd.lds_bytes", ATTNSIM_SCHED(fwd.lds_bytes), 0, 1 << 24));
    t.push_back(uint_field("fwd.lds_carveout", ATTNSIM_SCHED(fwd.lds_carveout), 0, 1 << 24));
    t.push_back(uint_field("fwd.q_l1_lookups", ATTNSIM_SCHED(fwd.q_l1_lookups), 1, 256));
    t.push_back(uint_field("fwd.loop_load_bytes_in_flight", ATTNSIM_SCHED(fwd.loop_load_bytes_in_flight), 0, 1u << 20));
    t.push_back(uint_field("bwd.block_m", ATTNSIM_SCHED(bwd.block_m), 1, 4096));
    t.push_back(uint_field("bwd.block_m_masked", ATTNSIM_SCHED(bwd.block_m_masked), 0, 4096));
    t.push_back(uint_field("bwd.block_n", ATTNSIM_SCHED(bwd.block_n), 1, 4096));
    t.push_back(uint_field("bwd.waves", ATTNSIM_SCHED(bwd.waves), 1, 64));
    t.push_back(uint_field("bwd.load_waves", ATTNSIM_SCHED(bwd.load_waves), 0, 64));
    t.push_back(uint_field("bwd.stages", ATTNSIM_SCHED(bwd.stages), 1, 8));
    t.push_back(bool_field("bwd.pair_blocks", ATTNSIM_SCHED(bwd.pair_blocks)));
    t.push_back(bool_field("bwd.persistent", ATTNSIM_SCHED(bwd.persistent)));
    t.push_back(enum_field("bwd.grid", ATTNSIM_SCHED(bwd.grid), grids));
    t.push_back(uint_field("bwd.l2_section_bytes", ATTNSIM_SCHED(bwd.l2_section_bytes), 0, 1u << 31));
    t.push_back(uint_field("bwd.xcd_remap", ATTNSIM_SCHED(bwd.xcd_remap), 0, 64));
    t.push_back(enum_field("bwd.dq", ATTNSIM_SCHED(bwd.dq), dqs));
    t.push_back(bool_field("bwd.dq_acc_fp32", ATTNSIM_SCHED(bwd.dq_acc_fp32)));
    t.push_back(enum_field("bwd.gqa", ATTNSIM_SCHED(bwd.gqa), gqas));
    t.push_back(bool_field("bwd.zero_dq_acc", ATTNSIM_SCHED(bwd.zero_dq_acc)));
    t.push_back(bool_field("bwd.sum_dkdv", ATTNSIM_SCHED(bwd.sum_dkdv)));
    t.push_back(uint_field("bwd.dq_block_m", ATTNSIM_SCHED(bwd.dq_block_m), 1, 4096));
    t.push_back(uint_field("bwd.dq_block_n", ATTNSIM_SCHED(bwd.dq_block_n), 1, 4096));
    t.push_back(uint_field("bwd.preprocess_rows", ATTNSIM_SCHED(bwd.preprocess_rows), 1, 4096));
    t.push_back(uint_field("bwd.convert_rows", ATTNSIM_SCHED(bwd.convert_rows), 1, 4096));
    t.push_back(uint_field("bwd.atomic_requests_per_sector", ATTNSIM_SCHED(bwd.atomic_requests_per_sector), 1, 8));
    t.push_back(uint_field("bwd.k_l1_lookups", ATTNSIM_SCHED(bwd.k_l1_lookups), 1, 256));
    t.push_back(uint_field("bwd.v_l1_lookups", ATTNSIM_SCHED(bwd.v_l1_lookups), 1, 256));
    t.push_back(uint_field("bwd.preprocess_l1_lookups", ATTNSIM_SCHED(bwd.preprocess_l1_lookups), 1, 256));
    t.push_back(uint_field("bwd.loop_load_bytes_in_flight", ATTNSIM_SCHED(bwd.loop_load_bytes_in_flight), 0, 1u << 20));
    rows_kernel_fields(t, "bwd.preprocess_kernel", [](auto& k) -> auto& { return k.bwd.preprocess_kernel; });
    rows_kernel_fields(t, "bwd.zero_kernel", [](auto& k) -> auto& { return k.bwd.zero_kernel; });
    rows_kernel_fields(t, "bwd.convert_kernel", [](auto& k) -> auto& { return k.bwd.convert_kernel; });
    rows_kernel_fields(t, "bwd.reduce_kernel", [](auto& k) -> auto& { return k.bwd.reduce_kernel; });
    t.push_back(text_field("bwd.mfma", ATTNSIM_SCHED(bwd.mfma)));
    t.push_back(uint_field("bwd.vgprs", ATTNSIM_SCHED(bwd.vgprs), 1, 512));
    t.push_back(uint_field("bwd.lds_bytes", ATTNSIM_SCHED(bwd.lds_bytes), 0, 1 << 24));
    t.push_back(uint_field("bwd.lds_carveout", ATTNSIM_SCHED(bwd.lds_carveout), 0, 1 << 24));
    density_fields(t, "fwd.loop", [](auto& k) -> auto& { return k.fwd.loop; });
    density_fields(t, "bwd.loop", [](auto& k) -> auto& { return k.bwd.loop; });
    density_fields(t, "bwd.dq_loop", [](auto& k) -> auto& { return k.bwd.dq_loop; });
    t.push_back(shapes_field());
    return t;
  }();
  return table;
}

std::string trim(std::string s) {
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> schedule_fields(const KernelSchedule& k) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : fields()) out.emplace_back(f.name, f.get(k));
  return out;
}

KernelSchedule parse_kernel_spec(const std::string& spec) {
  const ValueOrigin where{"--kernel " + spec, 0, 0, {}};
  std::vector<std::string> parts;
  std::string cur;
  for (char c : spec) {
    if (c == ',') {
      parts.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(trim(cur));
  auto k = preset(parts[0]);
  if (!k) {
    std::string names;
    for (const auto& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
    throw ConfigError(where, "", "unknown kernel preset '" + parts[0] + "'; presets: " + names);
  }
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    if (eq == std::string::npos) throw ConfigError(where, parts[i], "expected field=value");
    const std::string name = trim(parts[i].substr(0, eq));
    const std::string value = trim(parts[i].substr(eq + 1));
    const auto it = std::find_if(fields().begin(), fields().end(), [&](const Field& f) { return f.name == name; });
    if (it == fields().end()) {
      std::string names;
      for (const auto& f : fields()) names += (names.empty() ? "" : ", ") + f.name;
      throw ConfigError(where, name, "unknown schedule field; fields: " + names);
    }
    if (auto err = it->set(*k, value)) throw ConfigError(where, name, *err);
    k->overridden.push_back(name);
  }
  if (parts.size() > 1) k->name = spec;
  validate(*k, "--kernel " + spec);
  return *k;
}

void validate(const KernelSchedule& k, const std::string& origin) {
  const auto fail = [&](const std::string& field, const std::string& problem) {
    throw ConfigError(ValueOrigin{origin, 0, 0, {}}, field, problem);
  };
  if (k.fwd.block_m % k.fwd.waves != 0) {
    fail("fwd.block_m", std::to_string(k.fwd.block_m) + " query rows do not split evenly over " +
                            std::to_string(k.fwd.waves) + " waves");
  }
  if (k.bwd.block_n % k.bwd.waves != 0) {
    fail("bwd.block_n", std::to_string(k.bwd.block_n) + " key rows do not split evenly over " +
                            std::to_string(k.bwd.waves) + " waves");
  }
  // A persistent kernel overlaps its tiles through a producer that loads the next tile while the
  // compute waves finish the last; without producer waves there is nothing to overlap with.
  if (k.fwd.persistent && k.fwd.load_waves == 0) {
    fail("fwd.persistent", "a persistent kernel needs producer waves (fwd.load_waves > 0) to load its next tile");
  }
  if (k.bwd.persistent && k.bwd.load_waves == 0) {
    fail("bwd.persistent", "a persistent kernel needs producer waves (bwd.load_waves > 0) to load its next tile");
  }
  // Pairing already orders a masked grid's blocks (a short one with a long one in each workgroup).
  if (k.fwd.pair_tiles && k.fwd.grid == GridOrder::longest_first) {
    fail("fwd.grid", "longest_first orders single tiles; fwd.pair_tiles pairs them instead");
  }
  if (k.bwd.pair_blocks && k.bwd.grid == GridOrder::longest_first) {
    fail("bwd.grid", "longest_first orders single blocks; bwd.pair_blocks pairs them instead");
  }
  if (k.bwd.dq == DqMode::split && !k.bwd.dq_acc_fp32) {
    fail("bwd.dq_acc_fp32", "split dQ needs fp32 accumulator slices");
  }
  if (k.bwd.dq == DqMode::two_pass && !k.bwd.dq_acc_fp32) {
    fail("bwd.dq_acc_fp32", "two-pass dQ accumulates in registers; 16-bit atomics apply to dq=atomic only");
  }
}

}  // namespace attnsim::workloads
