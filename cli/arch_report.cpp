#include "cli/arch_report.h"

#include "arch/clock_model.h"
#include "arch/param_table.h"
#include "arch/provenance.h"
#include "report/text_table.h"

namespace attnsim::cli {

using report::fixed;
using report::TextTable;
namespace {

using arch::Dtype;
using nlohmann::json;

double tera(double v) { return v / 1e12; }
double mega(double v) { return v / 1e6; }

std::string tbps(arch::BytesPerSecond bw) { return fixed(tera(bw.value), 1) + " TB/s"; }

// The config's published GEMM clock for the data type (clock.measured.matrix_*), if any.
const std::optional<arch::Hertz>& measured_gemm_clock(const arch::GpuSpec& s, Dtype dt) {
  return s.clock.measured_matrix[static_cast<std::size_t>(dt)];
}

// "; measured GEMM 1207 MHz", with the controller's clock beside it when the XCDs' clocks spread
// (the measured clock is the slowest XCD's); empty when no clock is published for the data type.
std::string measured_gemm_text(const arch::GpuSpec& s, Dtype dt) {
  const auto& measured = measured_gemm_clock(s, dt);
  if (!measured) return {};
  std::string text = "; measured GEMM " + fixed(mega(measured->value), 0) + " MHz";
  if (s.clock.xcd_spread > 0) {
    text += " (slowest XCD; the controller at " +
            fixed(mega(arch::controller_for_slowest_xcd(s, measured->value)), 0) + " MHz)";
  }
  return text;
}

}  // namespace

json arch_json(const arch::LoadedArch& loaded, const arch::DerivedFigures& d) {
  const arch::GpuSpec& s = loaded.spec;
  json j;
  j["name"] = s.name;
  j["vendor"] = std::string(arch::to_string(s.vendor));
  j["isa"] = s.isa;
  j["file"] = loaded.file;
  j["overrides"] = json::array();
  for (const auto& o : loaded.overrides) j["overrides"].push_back(o.path + "=" + o.value);

  json& dj = j["derived"];
  dj["xcds"] = s.chip.xcds;
  dj["total_cus"] = d.total_cus;
  dj["cus_per_partition"] = d.cus_per_partition;
  dj["engine_clock_max_mhz"] = mega(s.clock.engine_max.value);
  dj["matrix_clock_max_mhz"] = mega(s.clock.matrix_max.value);
  for (const auto& m : d.matrix) {
    const std::string dt(arch::to_string(m.dtype));
    dj["matrix"][dt] = {{"flops_per_clk_per_cu", m.flops_per_clk_per_cu},
                        {"peak_tflops", tera(m.peak_flops)},
                        {"sustained_clock_mhz", mega(m.sustained.clock.value)},
                        {"sustained_power_limited", m.sustained.power_limited},
                        {"sustained_power_w", m.sustained.power.value},
                        {"sustained_tflops", tera(m.sustained_flops)}};
    const auto& measured = measured_gemm_clock(s, m.dtype);
    dj["matrix"][dt]["measured_gemm_clock_mhz"] = measured ? json(mega(measured->value)) : json(nullptr);
  }
  dj["exp_per_clk_per_cu"] = d.exp_per_clk_per_cu;
  dj["exp_tera_per_s"] = tera(d.exp_per_s);
  dj["bandwidth_tb_per_s"] = {{"lds", tera(d.lds_bandwidth.value)},
                              {"l1", tera(d.l1_bandwidth.value)},
                              {"l2_read", tera(d.l2_read_bandwidth.value)},
                              {"l2_write", tera(d.l2_write_bandwidth.value)},
                              {"l2_to_fabric", tera(d.fabric_bandwidth.value)},
                              {"mall", s.mall.present ? json(tera(d.mall_bandwidth.value)) : json(nullptr)},
                              {"hbm_peak", tera(d.hbm_bandwidth.value)}};
  dj["ridge_flop_per_byte"] = {{"hbm", d.ridge_hbm},
                               {"mall", s.mall.present ? json(d.ridge_mall) : json(nullptr)},
                               {"l2", d.ridge_l2}};
  dj["l2_total_bytes"] = d.l2_total.value;
  dj["l2_sets"] = d.l2_sets;
  dj["vgprs_per_lane_per_simd"] = d.vgprs_per_lane_per_simd;
  dj["hbm_bytes_per_channel_per_mclk"] = d.hbm_bytes_per_channel_per_mclk;
  dj["streaming_clock_mhz"] = mega(d.streaming.clock.value);
  dj["vector_clock_mhz"] = mega(d.vector.clock.value);

  json& pj = j["params"];
  pj = json::object();
  for (const auto& decl : arch::param_table()) {
    const auto it = loaded.origins.find(decl.path);
    if (it == loaded.origins.end()) continue;  // an absent optional section
    pj[decl.path] = {{"value", decl.to_json(s)},
                     {"text", decl.render(s)},
                     {"source", it->second.source},
                     {"origin", it->second.where.where()}};
  }
  return j;
}

std::string arch_text(const arch::LoadedArch& loaded, const arch::DerivedFigures& d, bool with_params) {
  const arch::GpuSpec& s = loaded.spec;
  std::string out = s.name + " (" + s.isa + ")  from " + loaded.file + "\n";
  if (!loaded.overrides.empty()) {
    out += "  overrides:";
    for (const auto& o : loaded.overrides) out += " " + o.path + "=" + o.value;
    out += "\n";
  }

  TextTable compute;
  compute.add({"compute units", std::to_string(d.total_cus) + " (" + std::to_string(s.chip.xcds) + " XCD x " +
                                    std::to_string(s.chip.cus_per_xcd) + "); " + std::to_string(d.cus_per_partition) +
                                    " per kernel launch"});
  compute.add({"engine clock", arch::format(s.clock.engine_max) + " max, " + arch::format(s.clock.matrix_max) +
                                   " max under matrix load" +
                                   (s.clock.engine_pinned ? "; pinned at " + arch::format(*s.clock.engine_pinned) : "")});
  for (const auto& m : d.matrix) {
    const std::string dt(arch::to_string(m.dtype));
    compute.add({dt + " matrix", fixed(tera(m.peak_flops), 1) + " TFLOP/s peak at " + arch::format(s.clock.matrix_max),
                 fixed(tera(m.sustained_flops), 1) + " TFLOP/s at " + fixed(mega(m.sustained.clock.value), 0) +
                     " MHz sustained (" +
                     (s.clock.engine_pinned        ? std::string("pinned")
                      : m.sustained.power_limited ? "power-limited at " + arch::format(s.clock.power_limit)
                                                  : std::string("clock cap")) +
                     ")" + measured_gemm_text(s, m.dtype)});
  }
  compute.add({"exp (transcendental)", fixed(d.exp_per_clk_per_cu, 0) + "/clk/CU = " + fixed(tera(d.exp_per_s), 2) +
                                           " T/s at max clock"});
  compute.add({"memory-streaming clock", fixed(mega(d.streaming.clock.value), 0) + " MHz" +
                                             (d.streaming.power_limited ? " (power-limited)" : "")});
  compute.add({"vector-work clock", fixed(mega(d.vector.clock.value), 0) + " MHz" +
                                        (d.vector.power_limited ? " (power-limited)" : "") +
                                        " (every SIMD's VALU busy; clock.power.vector " + format(s.clock.power_vector) + ")"});
  out += "\nCompute\n" + compute.render();

  TextTable mem;
  mem.add({"LDS", arch::format(s.cu.lds_size) + "/CU", arch::format(s.cu.lds_bandwidth) + "/CU",
           tbps(d.lds_bandwidth)});
  mem.add({"L1", arch::format(s.l1.size) + "/CU", arch::format(s.l1.bandwidth) + "/CU", tbps(d.l1_bandwidth)});
  if (!s.l1.carveouts.empty()) {
    // The array the L1 shares with the LDS: each kernel's L1 is what its carve-out leaves, in the
    // sets of l1.size with the ways its bytes fill.
    const std::uint64_t largest = s.l1_left_by(s.l1.carveouts.front().value);
    mem.add({"L1 + LDS array", arch::format(arch::Bytes{s.l1_left_by(0)}) + "/CU, L1 " + arch::format(s.l1.size) + " to " +
                                   arch::format(arch::Bytes{largest}) + " per kernel (" + std::to_string(s.l1_sets()) +
                                   " sets of " + std::to_string(s.l1.ways) + " to " +
                                   std::to_string(s.l1_ways_at(largest)) + " ways)"});
  }
  const std::string l2_kind = s.l2.partitions > 1 ? "shared, " + std::to_string(s.l2.partitions) + " partitions"
                                                  : std::string(arch::to_string(s.l2.scope));
  mem.add({"L2", arch::format(arch::Bytes{s.l2_instance_bytes()}) + " x " + std::to_string(s.l2_instances()) + " (" +
                     l2_kind + "), " + std::to_string(s.l2_instance_channels()) + " ch",
           arch::format(s.l2.read_bandwidth) + "/ch read", tbps(d.l2_read_bandwidth) + " read, " +
                                                               tbps(d.l2_write_bandwidth) + " write"});
  if (s.l2.partitions > 1) {
    std::string far = arch::format(s.l2.far_latency);
    far.append(" more round trip");
    mem.add({"far L2 partition", far, "", ""});
  }
  mem.add({"L2 -> fabric", "", arch::format(s.fabric.l2_link_bandwidth) + "/ch", tbps(d.fabric_bandwidth)});
  mem.add({"atomics", s.l2.atomics == arch::AtomicSite::l2 ? "performed in the L2" : "performed at the memory side", "", ""});
  mem.add({"L2 at a kernel's end",
           s.l2.kernel_end == arch::L2KernelEnd::keep ? "keeps its lines, dirty ones included" : "written back and invalidated",
           "", ""});
  if (s.mall.present) {
    mem.add({"MALL", arch::format(s.mall.size) + ", " + std::to_string(s.mall.channels) + " ch",
             arch::format(s.mall.bandwidth) + "/ch", tbps(d.mall_bandwidth)});
  }
  mem.add({"HBM", std::to_string(s.hbm.stacks) + " stacks, " + std::to_string(s.hbm.channels) + " ch",
           fixed(d.hbm_bytes_per_channel_per_mclk, 1) + " B/mclk/ch", tbps(d.hbm_bandwidth) + " peak"});
  out += "\nMemory (peak bandwidth at max clock)\n" + mem.render();

  out += "\nRidge points (bf16 peak FLOP per byte)\n";
  TextTable ridge;
  ridge.add({"HBM", fixed(d.ridge_hbm, 1)});
  if (s.mall.present) ridge.add({"MALL", fixed(d.ridge_mall, 1)});
  ridge.add({"L2", fixed(d.ridge_l2, 1)});
  out += ridge.render();

  if (with_params) {
    out += "\nParameters (value, source)\n";
    TextTable params;
    for (const auto& decl : arch::param_table()) {
      const auto it = loaded.origins.find(decl.path);
      if (it == loaded.origins.end()) continue;
      params.add({decl.path, decl.render(s), it->second.source});
    }
    out += params.render();
  } else {
    out += "\n(--params lists every value with its source; --json gives all of it as data)\n";
  }
  return out;
}

}  // namespace attnsim::cli
