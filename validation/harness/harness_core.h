// The harness's host-side logic, free of any GPU runtime so the unit tests build it with g++:
// options, exit codes, the attnsim arch of a GPU name, measurement rows in the format of
// validation/measurements/ (docs/validation.md), and the profilers' CSV summed per metric.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "../../report/csv_split.h"
#include "../kernels/attention_tiling.h"

namespace attn {

// Exit codes (validation/README.md).
inline constexpr int kExitOk = 0, kExitInternal = 1, kExitBadInput = 2, kExitMismatch = 3, kExitNoGpu = 4;

// An error in the command line or an input file: exit kExitBadInput with this message.
struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  Shape shape;
  std::string direction = "fwd";  // fwd, bwd or both
  int warmup = 3, reps = 10;
  bool check = true;              // compare with the CPU reference before timing
  std::string csv;                // append measurement rows here ("" : stdout)
  std::vector<std::string> profile_csvs;  // ncu or rocprofv3 CSVs of one run to turn into rows
  std::string source = "attnsim validation harness";
  std::string conditions;         // appended to the conditions column (clocks seen, driver, date)
  bool dispatch_probe = false;    // run the dispatch probe instead (dispatch_probe.h)
  bool matrix_rate_probe = false; // run the matrix rate probe instead (matrix_rate_probe.h)
  bool memory_probe = false;      // run the memory probe instead (memory_probe.h)
  bool l2_probe = false;          // run the L2 probe instead (read streams and cold writes across the L2's capacity)
  bool l1_probe = false;          // run the L1 probe instead (chases of lines at strides: the L1's ways, sets and capacity)
  int placement_probe_lds = -1;   // >= 0: run the placement probe with this much dynamic LDS per workgroup (placement_probe.h)
  int power_probe_seconds = 0;    // > 0: run the power probe, each phase this long (power_probe.h)
  std::string power_phases, power_samples;  // --power-join: the probe's output and the sampler's, joined per phase
};

// The dispatch probe's result: how far ahead of the id sequence a workgroup started. ticket[wg] is
// the order in which workgroup wg started (0 first). A workgroup that started when fewer than its
// id others had started ran ahead by the difference; returns the largest such difference (0 when
// workgroups start in id order).
inline std::int64_t largest_run_ahead(const std::vector<std::uint32_t>& ticket) {
  std::int64_t ahead = 0;
  for (std::size_t wg = 0; wg < ticket.size(); ++wg) ahead = std::max(ahead, static_cast<std::int64_t>(wg) - static_cast<std::int64_t>(ticket[wg]));
  return ahead;
}

// The L1 probe's chain (kernels/l1_probe.h): `count` lines `stride` bytes apart in a buffer of
// count x stride bytes, as 32-bit words; the first word of line k holds the word index of line
// k + 1's (the last line's, line 0's), every other word 0: a cycle the chase walks in address order.
// Contract: count >= 1, stride a positive multiple of 4.
inline std::vector<std::uint32_t> l1_chase_chain(std::uint32_t count, std::uint32_t stride) {
  const std::uint32_t words = stride / 4;
  std::vector<std::uint32_t> chain(static_cast<std::size_t>(count) * words, 0);
  for (std::uint32_t k = 0; k < count; ++k) chain[static_cast<std::size_t>(k) * words] = ((k + 1) % count) * words;
  return chain;
}

// The line counts the L1 probe chases at `stride`: 2 to 2048, those whose lines span at most `span`
// bytes (count x stride; a larger span would add TLB misses to the L2's latency). Up to 2048 lines
// (256 KiB of 128 B lines, an H200 SM's whole L1 + shared array), so that a stride whose lines all
// fall in one set shows that set's ways even where a set holds hundreds (attnsim's H100/H200 L1:
// 4 sets, ACCEL-SIM). Contract: stride > 0; increasing; empty when even 2 lines exceed the span.
inline std::vector<std::uint32_t> l1_probe_counts(std::uint32_t stride, std::uint64_t span) {
  std::vector<std::uint32_t> counts;
  for (const std::uint32_t n : {2u, 3u, 4u, 5u, 6u, 8u, 12u, 16u, 24u, 32u, 48u, 64u, 96u, 128u, 192u, 256u, 384u, 448u,
                                480u, 512u, 768u, 1024u, 1536u, 2048u}) {
    if (std::uint64_t{n} * stride <= span) counts.push_back(n);
  }
  return counts;
}

// The largest line count whose chase the L1 still served, from the clocks per step of chains of
// increasing counts (`counts`, same stride): a chase is served when its clocks per step are within
// 1.5 times the fewest seen (the L1 hit latency; an L2 hit is several times it). 0 when the first
// already missed (no count served). Contract: counts and clocks_per_step of equal size.
inline std::uint32_t largest_l1_held(const std::vector<std::uint32_t>& counts, const std::vector<double>& clocks_per_step) {
  if (counts.empty()) return 0;
  const double hit = *std::min_element(clocks_per_step.begin(), clocks_per_step.end());
  std::uint32_t held = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (clocks_per_step[i] > 1.5 * hit) break;
    held = counts[i];
  }
  return held;
}

// The placement probe's summary of the workgroups `0 .. first_wave - 1` (those that start together):
// the share of consecutive id pairs (i, i + 1) that ran on the same compute unit, and the most
// common difference between consecutive ids on one unit (the smallest of equals; 0 when no unit
// ran two). Breadth-first placement (id i on unit i % units) gives 0 and `units`; depth-first
// (k consecutive ids per unit) (k - 1) / k and 1. Contract: first_wave <= unit.size().
struct PlacementSummary {
  double neighbour_share = 0;
  std::uint64_t common_stride = 0;
};
inline PlacementSummary placement_summary(const std::vector<std::uint32_t>& unit, std::size_t first_wave) {
  if (first_wave > unit.size()) throw BadInput("placement probe: fewer workgroups than the first wave");
  PlacementSummary p;
  std::size_t same = 0;
  for (std::size_t i = 0; i + 1 < first_wave; ++i) same += unit[i] == unit[i + 1] ? 1 : 0;
  p.neighbour_share = first_wave > 1 ? static_cast<double>(same) / static_cast<double>(first_wave - 1) : 0;
  std::map<std::uint32_t, std::size_t> last;      // unit -> the last id seen on it
  std::map<std::uint64_t, std::size_t> strides;  // difference -> how often
  for (std::size_t i = 0; i < first_wave; ++i) {
    const auto it = last.find(unit[i]);
    if (it != last.end()) ++strides[i - it->second];
    last[unit[i]] = i;
  }
  std::size_t best = 0;
  for (const auto& [stride, count] : strides) {
    if (count > best) {
      best = count;
      p.common_stride = stride;
    }
  }
  return p;
}

// Contract: throws BadInput unless ticket is a permutation of 0 .. n - 1 (each workgroup took one).
inline void check_tickets(const std::vector<std::uint32_t>& ticket) {
  std::vector<char> seen(ticket.size(), 0);
  for (std::uint32_t t : ticket) {
    if (t >= ticket.size() || seen[t]) throw BadInput("dispatch probe: the tickets are not one per workgroup (" + std::to_string(t) + ")");
    seen[t] = 1;
  }
}

// The matrix rate probe's result: matrix FLOPs per clock per compute unit of one workgroup of
// `waves` waves, each running `chains` chains of `iterations` instructions of `flop_per_mma` FLOPs,
// in `cycles` of its clock. Contract: throws BadInput unless every count and cycles are positive.
inline double matrix_flop_per_clock(int waves, int chains, int iterations, double flop_per_mma, long long cycles) {
  if (waves <= 0 || chains <= 0 || iterations <= 0 || !(flop_per_mma > 0) || cycles <= 0) {
    throw BadInput("matrix rate probe: a workgroup reported " + std::to_string(cycles) + " cycles");
  }
  return static_cast<double>(waves) * chains * iterations * flop_per_mma / static_cast<double>(cycles);
}

// The memory probe's result in bytes per second: `passes` passes over a buffer of `bytes` in `ms`
// milliseconds, a copy counting the bytes it reads and the bytes it writes (as attnsim micro does).
// Contract: throws BadInput unless bytes, passes and ms are positive.
inline double stream_bandwidth(std::uint64_t bytes, int passes, bool copy, double ms) {
  if (bytes == 0 || passes <= 0 || !(ms > 0)) throw BadInput("memory probe: a launch took " + std::to_string(ms) + " ms");
  return static_cast<double>(bytes) * passes * (copy ? 2 : 1) / (ms * 1e-3);
}

// The median of the workgroups' cycle counts (the upper middle of an even count). Contract: not empty.
inline long long median_cycles(std::vector<long long> cycles) {
  if (cycles.empty()) throw BadInput("matrix rate probe: no workgroup reported");
  std::nth_element(cycles.begin(), cycles.begin() + static_cast<std::ptrdiff_t>(cycles.size() / 2), cycles.end());
  return cycles[cycles.size() / 2];
}

// The whole of `text` as an int (std::stoi) or a double (std::stod); nothing when it is empty, is
// not a number, is out of range or has anything after the number.
template <class T>
std::optional<T> to_number(const std::string& text) {
  static_assert(std::is_same_v<T, int> || std::is_same_v<T, double>, "to_number: int or double");
  std::size_t used = 0;
  T v{};
  try {
    if constexpr (std::is_same_v<T, int>) {
      v = std::stoi(text, &used);
    } else {
      v = std::stod(text, &used);
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (text.empty() || used != text.size()) return std::nullopt;
  return v;
}

inline int parse_int(const std::string& flag, const std::string& text) {
  const std::optional<int> v = to_number<int>(text);
  if (!v) throw BadInput(flag + ": expected an integer, got '" + text + "'");
  return *v;
}

// "A" or "A:B" into (A, B = A).
inline void parse_pair(const std::string& flag, const std::string& text, int& a, int& b) {
  const auto colon = text.find(':');
  a = parse_int(flag, text.substr(0, colon));
  b = colon == std::string::npos ? a : parse_int(flag, text.substr(colon + 1));
}

inline const char* kUsage =
    "usage: attnsim_gpu [--direction fwd|bwd|both] [--batch B] [--heads HQ[:HKV]] [--seqlen N[:NK]]\n"
    "                   [--head-dim 64|128] [--causal] [--warmup N] [--reps N] [--no-check]\n"
    "                   [--csv FILE] [--conditions TEXT] [--source TEXT]\n"
    "       attnsim_gpu --profile-csv FILE... (the shape flags of the profiled run) [--csv FILE]\n"
    "       attnsim_gpu --dispatch-probe   (does an XCD run ahead of the others? validation/README.md)\n"
    "       attnsim_gpu --matrix-rate-probe   (matrix FLOPs per clock per compute unit of mma())\n"
    "       attnsim_gpu --memory-probe   (stream read, write and copy bandwidth of the whole GPU)\n"
    "       attnsim_gpu --l2-probe   (read streams over 8-64 MiB sets and one write of 8-48 MiB: what the L2\n"
    "                    keeps, and with ncu what its partitions exchange)\n"
    "       attnsim_gpu --l1-probe   (chases of 2-2048 lines 256 B-64 KiB apart and of 8-256 KiB in a row: the\n"
    "                    L1's ways, set index and capacity beside 0 and 195 KiB of shared memory)\n"
    "       attnsim_gpu --placement-probe LDS_BYTES|fwd|bwd   (which compute unit each workgroup of 128 threads\n"
    "                    runs on, each with that much LDS: fwd and bwd are the d = 128 kernels' own)\n"
    "       attnsim_gpu --power-probe SECONDS   (phases of sustained idle, matrix, FMA, exp and HBM read work,\n"
    "                    SECONDS each, 2-60, for a clock and power sampler: validation/scripts/power_probe.sh)\n"
    "       attnsim_gpu --power-join PROBE_OUTPUT SAMPLES [--csv FILE] [--conditions TEXT]   (each phase's median\n"
    "                    clock and power from 'unix_ms,sm_mhz,power_w' samples; needs no GPU)\n"
    "Runs the validation kernels on random inputs, checks them against the CPU reference, times\n"
    "them and appends measurement rows for `attnsim validate`. Exit: 0 ok, 2 bad input, 3 results\n"
    "differ from the reference, 4 no GPU of this build's vendor, 1 internal error.\n";

inline Options parse_options(const std::vector<std::string>& args) {
  Options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw BadInput(a + ": missing value");
      return args[++i];
    };
    if (a == "--direction") {
      o.direction = value();
      if (o.direction != "fwd" && o.direction != "bwd" && o.direction != "both") {
        throw BadInput("--direction: expected fwd, bwd or both, got '" + o.direction + "'");
      }
    } else if (a == "--batch") {
      o.shape.batch = parse_int(a, value());
    } else if (a == "--heads") {
      parse_pair(a, value(), o.shape.heads_q, o.shape.heads_kv);
    } else if (a == "--seqlen") {
      parse_pair(a, value(), o.shape.seqlen_q, o.shape.seqlen_k);
    } else if (a == "--head-dim") {
      o.shape.head_dim = parse_int(a, value());
    } else if (a == "--causal") {
      o.shape.causal = true;
    } else if (a == "--warmup") {
      o.warmup = parse_int(a, value());
    } else if (a == "--reps") {
      o.reps = parse_int(a, value());
    } else if (a == "--no-check") {
      o.check = false;
    } else if (a == "--csv") {
      o.csv = value();
    } else if (a == "--profile-csv") {
      o.profile_csvs.push_back(value());
    } else if (a == "--source") {
      o.source = value();
    } else if (a == "--conditions") {
      o.conditions = value();
    } else if (a == "--dispatch-probe") {
      o.dispatch_probe = true;
    } else if (a == "--matrix-rate-probe") {
      o.matrix_rate_probe = true;
    } else if (a == "--memory-probe") {
      o.memory_probe = true;
    } else if (a == "--l2-probe") {
      o.l2_probe = true;
    } else if (a == "--l1-probe") {
      o.l1_probe = true;
    } else if (a == "--placement-probe") {
      // LDS bytes, or the d = 128 forward's or backward's own (attention_tiling.h).
      const std::string v = value();
      o.placement_probe_lds = v == "fwd" ? fwd_lds_bytes(128) : (v == "bwd" ? bwd_lds_bytes(128) : parse_int(a, v));
      if (o.placement_probe_lds < 0) throw BadInput("--placement-probe: expected LDS bytes >= 0, fwd or bwd");
    } else if (a == "--power-probe") {
      o.power_probe_seconds = parse_int(a, value());
      if (o.power_probe_seconds < 2 || o.power_probe_seconds > 60) throw BadInput("--power-probe: expected 2 to 60 seconds per phase");
    } else if (a == "--power-join") {
      o.power_phases = value();
      o.power_samples = value();
    } else {
      throw BadInput("unknown option '" + a + "'\n" + kUsage);
    }
  }
  if (o.warmup < 0 || o.reps < 1) throw BadInput("--warmup must be >= 0 and --reps >= 1");
  const bool backward = o.direction != "fwd";
  if (const char* why = backward ? unsupported_backward(o.shape) : unsupported(o.shape)) {
    throw BadInput(std::string("unsupported shape: ") + why);
  }
  return o;
}

// The attnsim arch config of a GPU, from the name the runtime reports ("" when none models it).
inline std::string arch_of(const std::string& device_name) {
  const std::pair<const char*, const char*> known[] = {
      {"H200", "h200"}, {"H100", "h100"}, {"MI355X", "mi355x"}, {"MI325X", "mi325x"}, {"MI300X", "mi300x"}};
  for (const auto& [needle, arch] : known) {
    if (device_name.find(needle) != std::string::npos) return arch;
  }
  return "";
}

// FlashAttention-convention FLOPs of one direction (docs/output.md: fwd 4 B Hq Nq Nk d, halved
// when causal with Nq = Nk; bwd 2.5 x fwd). Causal with Nk > Nq counts the visible pairs exactly.
inline double fa_flops(const Shape& s, const std::string& direction) {
  double pairs = static_cast<double>(s.seqlen_q) * s.seqlen_k;
  if (s.causal) {
    pairs = 0;
    for (int i = 0; i < s.seqlen_q; ++i) pairs += std::min(s.seqlen_k, i + s.seqlen_k - s.seqlen_q + 1);
  }
  const double fwd = 4.0 * s.batch * s.heads_q * pairs * s.head_dim;
  if (direction == "fwd") return fwd;
  if (direction == "bwd") return 2.5 * fwd;
  return 3.5 * fwd;
}

// One measurement row in the format of validation/measurements/ (header kMeasurementsHeader).
inline const char* kMeasurementsHeader =
    "arch,gpu,kernel,preset,direction,batch,heads_q,heads_kv,seqlen_q,seqlen_k,head_dim,dtype,causal,metric,measured,unit,"
    "source,conditions\n";

inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

inline std::string measurement_row(const std::string& arch, const std::string& gpu, const std::string& preset,
                                   const Shape& s, const std::string& direction, const std::string& metric, double value,
                                   const std::string& unit, const std::string& source, const std::string& conditions) {
  std::ostringstream row;
  row.precision(10);
  row << csv_field(arch) << ',' << csv_field(gpu) << ",attnsim validation kernels," << preset << ',' << direction << ','
      << s.batch << ',' << s.heads_q << ',' << s.heads_kv << ',' << s.seqlen_q << ',' << s.seqlen_k << ',' << s.head_dim
      << ",bf16," << (s.causal ? 1 : 0) << ',' << metric << ',' << value << ',' << unit << ',' << csv_field(source) << ','
      << csv_field(conditions) << '\n';
  return row.str();
}


// Profiler counters summed over kernel launches (and counted, for rates that are averaged).
struct ProfileSums {
  std::map<std::string, double> sum;
  std::map<std::string, int> count;
  std::string tool;  // "ncu" or "rocprofv3": the profiler whose CSV was read (its header's names)
  bool has(const std::string& c) const { return sum.count(c) != 0; }
  double get(const std::string& c) const { return sum.at(c); }
  double mean(const std::string& c) const { return has(c) ? sum.at(c) / count.at(c) : 0.0; }
};

// The kernel-name prefix of a direction's kernels (attention_kernels.h): a bwd run also launches
// the forward once for its inputs, which its profile must not count.
inline std::string kernel_prefix(const std::string& direction) {
  return direction == "fwd" ? "attention_fwd" : (direction == "bwd" ? "attention_bwd" : "attention_");
}

// Adds a profiler's CSV of one run to `sums`, over the launches of kernels whose name holds
// `kernel`: Nsight Compute (`ncu --csv --print-units base`: columns "Kernel Name", "Metric Name",
// "Metric Value") or rocprofv3 counter collection ("Kernel_Name", "Counter_Name",
// "Counter_Value"). Lines before the header (ncu's own messages) are skipped. Throws BadInput
// naming the file and line on a value that is not a number, or when no header is found.
inline void add_profile_csv(const std::string& path, const std::string& kernel, ProfileSums& sums) {
  std::ifstream in(path);
  if (!in) throw BadInput(path + ": cannot be read");
  std::string line;
  int line_no = 0, kernel_col = -1, name_col = -1, value_col = -1;
  while (std::getline(in, line)) {
    ++line_no;
    const auto f = attnsim::report::split_csv(line);
    if (name_col < 0) {
      for (int c = 0; c < static_cast<int>(f.size()); ++c) {
        if (f[c] == "Kernel Name" || f[c] == "Kernel_Name") kernel_col = c;
        if (f[c] == "Metric Name" || f[c] == "Counter_Name") name_col = c;
        if (f[c] == "Metric Name" || f[c] == "Counter_Name") sums.tool = f[c] == "Metric Name" ? "ncu" : "rocprofv3";
        if (f[c] == "Metric Value" || f[c] == "Counter_Value") value_col = c;
      }
      if (name_col < 0 || value_col < 0 || kernel_col < 0) name_col = value_col = kernel_col = -1;
      continue;
    }
    if (static_cast<int>(f.size()) <= std::max({kernel_col, name_col, value_col})) continue;
    if (f[kernel_col].find(kernel) == std::string::npos) continue;  // another kernel
    std::string v;
    for (char c : f[value_col]) {
      if (c != ',') v += c;  // thousands separators
    }
    std::size_t used = 0;
    double x = 0;
    try {
      x = std::stod(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != v.size()) {
      throw BadInput(path + ":" + std::to_string(line_no) + ": metric '" + f[name_col] + "' has a value that is not a number: '" +
                     f[value_col] + "'");
    }
    sums.sum[f[name_col]] += x;
    ++sums.count[f[name_col]];
  }
  if (name_col < 0) throw BadInput(path + ": no header with a kernel name, metric name and value column (ncu --csv or rocprofv3)");
}

// The measured values (attnsim metric, value, unit) a profile's counter sums give: on NVIDIA
// HBM bytes and L2 read requests; on AMD FETCH_SIZE and WRITE_SIZE by rocprofiler's gfx942 formulas
// (docs/model.md, Counters), from the TCC_EA0 request counts.
struct MeasuredValue {
  std::string metric;
  double value;
  std::string unit;
};
inline std::vector<MeasuredValue> metrics_from_profile(const ProfileSums& p) {
  std::vector<MeasuredValue> out;
  if (p.has("dram__bytes_read.sum")) out.push_back({"hbm_read_bytes", p.get("dram__bytes_read.sum"), "B"});
  if (p.has("dram__bytes_write.sum")) out.push_back({"hbm_write_bytes", p.get("dram__bytes_write.sum"), "B"});
  if (p.has("lts__t_sectors_srcunit_tex_op_read.sum")) {
    out.push_back({"l2_read_request_bytes", 32.0 * p.get("lts__t_sectors_srcunit_tex_op_read.sum"), "B"});
  }
  if (p.has("lts__t_sectors_srcunit_tex_op_red.sum")) {
    out.push_back({"l2_atomic_request_bytes", 32.0 * p.get("lts__t_sectors_srcunit_tex_op_red.sum"), "B"});
  }
  // Sectors one L2 partition requested of the other (reads its copies missed, writes and atomics
  // homed there).
  if (p.has("lts__t_sectors_srcunit_ltcfabric.sum")) {
    out.push_back({"l2_far_partition_bytes", 32.0 * p.get("lts__t_sectors_srcunit_ltcfabric.sum"), "B"});
  }
  // The L1's read hit rate: on NVIDIA the global-load sectors it held; on AMD the reads it did not
  // send to the L2 (TCP_TOTAL_CACHE_ACCESSES counts reads and writes; every write goes on).
  const char* l1_sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
  const char* l1_hits = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum";
  if (p.has(l1_sectors) && p.has(l1_hits) && p.get(l1_sectors) > 0) {
    out.push_back({"l1_read_hit_rate", p.get(l1_hits) / p.get(l1_sectors), "ratio"});
  }
  if (p.has("TCP_TOTAL_CACHE_ACCESSES") && p.has("TCP_TCC_READ_REQ") && p.has("TCP_TCC_WRITE_REQ")) {
    const double reads = p.get("TCP_TOTAL_CACHE_ACCESSES") - p.get("TCP_TCC_WRITE_REQ");
    if (reads > 0) out.push_back({"l1_read_hit_rate", 1.0 - p.get("TCP_TCC_READ_REQ") / reads, "ratio"});
  }
  if (p.has("TCC_EA0_RDREQ") && p.has("TCC_EA0_RDREQ_32B") && p.has("TCC_BUBBLE")) {
    const double all = p.get("TCC_EA0_RDREQ"), small = p.get("TCC_EA0_RDREQ_32B"), big = p.get("TCC_BUBBLE");
    out.push_back({"l2_fabric_read_bytes", 128.0 * big + 64.0 * (all - big - small) + 32.0 * small, "B"});
  }
  if (p.has("TCC_EA0_WRREQ") && p.has("TCC_EA0_WRREQ_64B")) {
    const double all = p.get("TCC_EA0_WRREQ"), wide = p.get("TCC_EA0_WRREQ_64B");
    out.push_back({"l2_fabric_write_bytes", 32.0 * (all - wide) + 64.0 * wide, "B"});
  }
  // Each MFMA "MOP" is 512 FLOPs (arch-facts section 5: rocprofiler-compute 0200 yaml).
  if (p.has("SQ_INSTS_VALU_MFMA_MOPS_BF16")) out.push_back({"matrix_flops", 512.0 * p.get("SQ_INSTS_VALU_MFMA_MOPS_BF16"), "FLOP"});
  return out;
}

}  // namespace attn
