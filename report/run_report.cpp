#include "report/run_report.h"

#include <algorithm>
#include <sstream>

#include "arch/clock_model.h"
#include "report/text_table.h"
#include "workloads/analytic.h"

namespace attnsim::report {

using nlohmann::json;

namespace {

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

// Utilisation of each unit over the kernel's execution (launch gap excluded).
json utilisation(const arch::GpuSpec& gpu, const sim::KernelResult& k) {
  const double t = static_cast<double>(k.end - k.start);
  const auto simds = static_cast<double>(gpu.total_simds());
  const sim::LevelBusy& m = k.busy.memory;
  return {{"matrix", ratio(static_cast<double>(k.busy.matrix), simds * t)},
          {"vector", ratio(static_cast<double>(k.busy.vector), simds * t)},
          {"lds", ratio(static_cast<double>(k.busy.lds), gpu.total_cus() * t)},
          {"l2", ratio(static_cast<double>(m.l2), 2.0 * m.l2_channels * t)},  // read and write ports
          {"fabric_link", ratio(static_cast<double>(m.link), m.links * t)},
          {"mall", ratio(static_cast<double>(m.mall), m.mall_channels * t)},
          {"hbm", ratio(static_cast<double>(m.hbm), m.hbm_channels * t)}};
}

// Where the kernel's time went (docs/output.md): the launch gap; each SIMD's time from the start to
// the last retirement as matrix or vector work, waits by cause, or an empty tail, averaged over the
// SIMDs; then the drain of posted atomics and the L2 write-back. The parts sum to time_us.
json time_breakdown(const sim::KernelResult& k) {
  const sim::TimeBreakdown& b = k.breakdown;
  const double per_simd = 1e6 * std::max<std::uint32_t>(k.simds, 1);
  const auto us = [&](sim::Tick t) { return static_cast<double>(t) / per_simd; };
  json j;
  j["launch"] = static_cast<double>(k.start - k.launch) / 1e6;
  j["matrix"] = us(b.matrix);
  j["vector"] = us(b.vector + b.waiting[static_cast<std::size_t>(sim::WaitCause::vector)]);
  for (std::size_t c = 0; c < sim::kWaitCauses; ++c) {
    if (static_cast<sim::WaitCause>(c) != sim::WaitCause::vector) j[std::string(sim::to_string(static_cast<sim::WaitCause>(c)))] = us(b.waiting[c]);
  }
  j["tail_and_imbalance"] = us(b.tail);
  j["drain_and_writeback"] = static_cast<double>(k.end - k.last_retire) / 1e6;
  return j;
}

}  // namespace

json kernel_json(const arch::GpuSpec& gpu, const sim::KernelResult& k) {
  json j;
  j["name"] = k.name;
  j["time_us"] = k.time_us();
  j["launch_us"] = static_cast<double>(k.launch) / 1e6;
  j["start_us"] = static_cast<double>(k.start) / 1e6;
  j["end_us"] = static_cast<double>(k.end) / 1e6;
  j["workgroups"] = k.workgroups;
  j["tile_ops"] = k.tile_ops;
  j["loop_batch"] = k.loop_batch;
  j["persistent"] = k.persistent;
  j["fast_forward"] = {{"skipped_workgroups", k.fast_forward.skipped_workgroups},
                       {"windows", k.fast_forward.windows},
                       {"extrapolated_us", static_cast<double>(k.fast_forward.extrapolated) / 1e6}};
  j["occupancy"] = {{"workgroups_per_cu", k.occupancy.workgroups_per_cu},
                    {"waves_per_simd", k.occupancy.waves_per_simd},
                    {"vgprs_allocated", k.occupancy.vgprs_allocated},
                    {"limited_by", k.occupancy.limited_by},
                    {"l1_bytes", k.occupancy.l1_bytes},
                    {"lds_carveout_bytes", k.occupancy.lds_carveout}};
  j["clock"] = {{"engine_mhz", k.clock_hz / 1e6},
                {"min_mhz", k.clock_min_hz / 1e6},
                {"max_mhz", k.clock_max_hz / 1e6},
                {"updates", k.clock_updates},
                {"basis", k.clock_pinned ? "pinned" : (k.power_limited ? "modelled, power-limited" : "modelled, below the power limit")},
                {"power_w", k.power_w},
                {"matrix_activity", k.matrix_activity},
                {"hbm_activity", k.hbm_activity},
                {"vector_activity", k.vector_activity},
                // Fixed clocks: the fabric's (the MALL's channels) and HBM's (whose rate is
                // hbm.peak_bandwidth, stated at this clock).
                {"fabric_mhz", gpu.clock.fabric.value / 1e6},
                {"memory_mhz", gpu.clock.memory.value / 1e6}};
  // Each XCD's clock at the controller's mean (clock.xcd_spread): what per-XCD clock readings such
  // as hipBLASLt's per-XCD medians compare with.
  json xcd_mhz = json::array();
  for (std::uint32_t x = 0; x < gpu.dispatch.xcds_per_partition; ++x) xcd_mhz.push_back(arch::xcd_clock(gpu, x, k.clock_hz) / 1e6);
  j["clock"]["xcd_mhz"] = std::move(xcd_mhz);
  const json u = utilisation(gpu, k);
  j["utilisation"] = u;
  const double exec = static_cast<double>(k.end - k.start);
  const double slots = static_cast<double>(gpu.total_cus()) * k.occupancy.workgroups_per_cu;
  const double occupied = std::min(1.0, ratio(static_cast<double>(k.resident_time), slots * exec));
  std::string bound = "matrix";
  double best = -1;
  for (const char* unit : {"matrix", "vector", "lds", "l2", "fabric_link", "mall", "hbm"}) {
    if (u[unit].get<double>() > best) {
      best = u[unit].get<double>();
      bound = unit;
    }
  }
  j["time_breakdown_us"] = time_breakdown(k);
  j["bound_by"] = bound;
  j["slot_occupancy"] = occupied;
  j["instructions"] = {{"mfma", k.mfma_instructions}, {"valu", k.valu_instructions}, {"trans", k.trans_instructions}};
  j["matrix_tflops"] = ratio(k.mfma_flops, exec / 1e12) / 1e12;
  j["lds_bytes"] = k.lds_bytes;
  j["counters"] = k.counters.to_json(gpu.vendor);
  json per_xcd = json::array();
  for (const auto& c : k.per_xcd) per_xcd.push_back(c.l2_hit_rate());
  j["l2_hit_rate_per_xcd"] = per_xcd;
  if (!k.stats.is_null()) j["stats"] = k.stats;
  return j;
}

namespace {
// The busiest channel of each level against the level's mean, busy time over the stats tree's own
// time_ps (a run's or a kernel's): one line, `lead` first.
std::string channel_balance(const json& stats, const std::string& lead) {
  const double run_ps = static_cast<double>(stats.value("time_ps", std::uint64_t{0}));
  if (run_ps <= 0) return {};
  struct Level {
    explicit Level(std::string n) : name(std::move(n)) {}
    std::string name;
    double sum = 0, max = 0;
    std::size_t count = 0;
    std::string busiest;
  };
  const auto add = [](Level& l, double busy, const std::string& where) {
    l.sum += busy;
    ++l.count;
    if (busy > l.max) {
      l.max = busy;
      l.busiest = where;
    }
  };
  Level l2("L2 read"), link("L2-fabric link"), mall("MALL"), hbm("HBM");
  const auto l2_channels = [&](const json& l2_json, const std::string& where) {
    for (std::size_t c = 0; c < l2_json["channel"].size(); ++c) {
      const json& ch = l2_json["channel"][c];
      const std::string at = where + "channel " + std::to_string(c);
      add(l2, static_cast<double>(ch["read_busy_ps"].get<std::uint64_t>()), at);
      add(link, static_cast<double>(ch["link_busy_ps"].get<std::uint64_t>()), at);
    }
  };
  if (stats.contains("xcd")) {
    for (std::size_t x = 0; x < stats["xcd"].size(); ++x) {
      if (stats["xcd"][x].contains("l2")) l2_channels(stats["xcd"][x]["l2"], "XCD " + std::to_string(x) + " ");
    }
  }
  if (stats.contains("l2")) l2_channels(stats["l2"], "");
  const auto bank = [&](Level& l, const char* key) {
    if (!stats.contains(key)) return;
    for (std::size_t c = 0; c < stats[key]["channel"].size(); ++c) {
      add(l, static_cast<double>(stats[key]["channel"][c]["busy_ps"].get<std::uint64_t>()), "channel " + std::to_string(c));
    }
  };
  bank(mall, "mall");
  bank(hbm, "hbm");
  std::string out = lead;
  bool first = true;
  for (const Level* l : {&l2, &link, &mall, &hbm}) {
    if (l->count == 0) continue;
    out += std::string(first ? " " : "; ") + l->name + " " + fixed(100 * l->sum / static_cast<double>(l->count) / run_ps, 1) +
           " %, " + fixed(100 * l->max / run_ps, 1) + " % (" + (l->busiest.empty() ? "none" : l->busiest) + ")";
    first = false;
  }
  return out + "\n";
}
}  // namespace

json run_report(const RunInputs& in, const sim::RunResult& r) {
  const arch::GpuSpec& gpu = *in.gpu;
  json j;
  j["arch"] = gpu.name;
  j["kernel"] = in.kernel;
  j["direction"] = in.direction;
  j["tags"] = r.approximate ? "approximate" : "exact";
  j["fast_forward"] = r.fast_forward;
  j["warm_up"] = r.warm_up;
  if (!in.passes.empty()) j["problem"] = in.passes.front()->problem.describe();
  double fa_flops = 0;
  for (const auto* pp : in.passes) fa_flops += workloads::analytic_counts(*pp).fa_flops;
  const double time_s = static_cast<double>(r.time) / 1e12;
  j["time_us"] = time_s * 1e6;
  j["fa_flops"] = fa_flops;
  j["tflops"] = ratio(fa_flops, time_s) / 1e12;
  std::uint64_t lds = 0;
  double mfma_flops = 0;
  j["kernels"] = json::array();
  for (const auto& k : r.kernels) {
    j["kernels"].push_back(kernel_json(gpu, k));
    lds += k.lds_bytes;
    mfma_flops += k.mfma_flops;
  }
  const sim::TrafficCounters& c = r.total;
  json hit_per_xcd = json::array();
  for (const auto& x : r.per_xcd) hit_per_xcd.push_back(x.l2_hit_rate());
  j["traffic"] = {{"lds_bytes", lds},
                  {"l1_request_bytes",
                   c.requested_read_bytes + c.l1_read_hit_bytes + c.requested_write_bytes + c.atomic_bytes},
                  {"l2_request_bytes", c.requested_read_bytes + c.requested_write_bytes + c.atomic_bytes},
                  {"l2_read_request_bytes", c.requested_read_bytes},
                  // 32 B per sector an atomic request touches, once per request (NVIDIA's red sectors x 32).
                  {"l2_atomic_request_bytes", 32 * c.atomic_sectors},
                  // 32 B per sector one L2 partition requested of the other (NVIDIA's ltcfabric sectors x 32).
                  {"l2_far_partition_bytes", 32 * c.l2_fabric_sectors},
                  {"l2_fabric_read_bytes", c.fetch_size_bytes()},
                  {"l2_fabric_write_bytes", c.write_size_bytes()},
                  {"mall_hit_bytes", c.mall_read_hits * (gpu.mall.present ? gpu.mall.line.value : 0)},
                  {"hbm_read_bytes", c.hbm_read_bytes},
                  {"hbm_write_bytes", c.hbm_write_bytes},
                  {"l1_read_hit_rate", c.l1_read_hit_rate(gpu.vendor)},
                  {"l2_hit_rate", c.l2_hit_rate()},
                  {"l2_hit_rate_per_xcd", hit_per_xcd}};
  j["counters"] = c.to_json(gpu.vendor);
  j["matrix_flops_issued"] = mfma_flops;
  j["simulation"] = {{"events", r.events},
                     {"clock_updates", r.clock_updates},
                     {"hierarchy_state_bytes", r.hierarchy_state_bytes}};
  if (!r.stats.is_null()) j["stats"] = r.stats;
  return j;
}

std::string render_run_report(const json& j) {
  std::ostringstream os;
  os << "run " << j["kernel"].get<std::string>() << " " << j["direction"].get<std::string>() << "  "
     << j.value("problem", "") << "  (" << j["arch"].get<std::string>() << ")"
     << (j.value("tags", "exact") == "approximate" ? "  [approximate tags]" : "")
     << (j.value("fast_forward", false) ? "  [fast-forward]" : "")
     << (j.value("warm_up", false) ? "  [after a warm-up run]" : "") << "\n";
  os << "  time " << fixed(j["time_us"].get<double>(), 1) << " us, " << fixed(j["tflops"].get<double>(), 1)
     << " TFLOP/s (FA convention, " << fixed(j["fa_flops"].get<double>() / 1e9, 1) << " GFLOP)\n\n";
  TextTable rows;
  rows.add({"kernel", "time us", "clock MHz", "WGs", "WG/CU", "matrix", "vector", "LDS", "L2", "HBM", "L2 hit",
                  "bound by", "tail"});
  for (const auto& k : j["kernels"]) {
    const auto& u = k["utilisation"];
    const auto pct = [](double v) { return fixed(100 * v, 0) + "%"; };
    rows.add({k["name"].get<std::string>(), fixed(k["time_us"].get<double>(), 1),
                    fixed(k["clock"]["engine_mhz"].get<double>(), 0), std::to_string(k["workgroups"].get<std::uint64_t>()),
                    std::to_string(k["occupancy"]["workgroups_per_cu"].get<std::uint32_t>()), pct(u["matrix"]),
                    pct(u["vector"]), pct(u["lds"]), pct(u["l2"]), pct(u["hbm"]),
                    pct(k["counters"]["l2_hit_rate"].get<double>()), k["bound_by"].get<std::string>(),
                    fixed(k["time_breakdown_us"]["tail_and_imbalance"].get<double>(), 1) + " us"});
  }
  os << rows.render();
  std::string persistent;
  for (const auto& k : j["kernels"]) {
    if (k.value("persistent", false)) persistent += (persistent.empty() ? "" : ", ") + k["name"].get<std::string>();
  }
  if (!persistent.empty()) {
    os << "  persistent: " << persistent << " (a CU's next workgroup loads while its last one finishes; docs/model.md)\n";
  }
  os << "\n  where the time went (us; each SIMD's time, averaged):\n";
  TextTable parts;
  const std::vector<std::string> keys = {"launch", "matrix", "vector", "issue", "lds", "l2", "fabric", "hbm", "latency",
                                         "sync", "tail_and_imbalance", "drain_and_writeback"};
  std::vector<std::string> head = {"kernel"};
  for (const auto& key : keys) head.push_back(key == "tail_and_imbalance" ? "tail" : (key == "drain_and_writeback" ? "drain" : key));
  parts.add(head);
  for (const auto& k : j["kernels"]) {
    std::vector<std::string> row = {k["name"].get<std::string>()};
    for (const auto& key : keys) row.push_back(fixed(k["time_breakdown_us"][key].get<double>(), 1));
    parts.add(row);
  }
  os << parts.render();
  const auto& t = j["traffic"];
  const auto mb = [](const json& v) { return fixed(v.get<double>() / 1e6, 1) + " MB"; };
  os << "\n  traffic: LDS " << mb(t["lds_bytes"]) << ", L1 requests " << mb(t["l1_request_bytes"]) << " (read hit "
     << fixed(100 * t["l1_read_hit_rate"].get<double>(), 1) << " %), L2 requests " << mb(t["l2_request_bytes"]) << " (hit "
     << fixed(100 * t["l2_hit_rate"].get<double>(), 1) << " %), FETCH_SIZE " << mb(t["l2_fabric_read_bytes"])
     << ", WRITE_SIZE " << mb(t["l2_fabric_write_bytes"]) << ", MALL hits " << mb(t["mall_hit_bytes"]) << ", HBM read "
     << mb(t["hbm_read_bytes"]) << ", HBM write " << mb(t["hbm_write_bytes"]) << "\n";
  os << "  utilisation is busy time over the kernel's time; engine clocks are modelled unless pinned (--set clock.engine=...)";
  if (!j["kernels"].empty()) {
    const auto& clock = j["kernels"][0]["clock"];
    os << "; the fabric runs at " << fixed(clock["fabric_mhz"].get<double>(), 0) << " MHz and HBM at "
       << fixed(clock["memory_mhz"].get<double>(), 0) << " MHz";
  }
  os << "\n";
  if (j.contains("stats")) {
    os << channel_balance(j["stats"], "  channels, busy over the run's time (mean, busiest):");
    for (const auto& k : j["kernels"]) {
      if (k.contains("stats")) os << channel_balance(k["stats"], "    " + k["name"].get<std::string>() + ", over its time:");
    }
  }
  bool skipped_any = false;
  for (const auto& k : j["kernels"]) {
    const auto& f = k["fast_forward"];
    if (f["skipped_workgroups"].get<std::uint64_t>() == 0) continue;
    skipped_any = true;
    os << "  fast-forward: " << k["name"].get<std::string>() << " skipped " << f["skipped_workgroups"].get<std::uint64_t>()
       << " of " << k["workgroups"].get<std::uint64_t>() << " workgroups, " << fixed(f["extrapolated_us"].get<double>(), 1)
       << " us interpolated from " << f["windows"].get<std::uint32_t>() << " windows\n";
  }
  if (j.value("fast_forward", false) && !skipped_any) {
    os << "  fast-forward: nothing skipped (a grid needs 12 rounds of the GPU's workgroup slots or more, and a steady stretch)\n";
  }
  return os.str();
}

json trace_json(const RunInputs& in, const sim::RunResult& r) {
  const arch::GpuSpec& gpu = *in.gpu;
  json events = json::array();
  const std::uint32_t xcds = gpu.dispatch.xcds_per_partition;
  for (std::uint32_t x = 0; x < xcds; ++x) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", x}, {"args", {{"name", "XCD " + std::to_string(x)}}}});
    for (std::uint32_t c = 0; c < gpu.chip.cus_per_xcd; ++c) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", x}, {"tid", c},
                        {"args", {{"name", "CU " + std::to_string(c)}}}});
    }
  }
  const std::uint32_t counters_pid = xcds;
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", counters_pid}, {"args", {{"name", "memory"}}}});
  for (const auto& k : r.kernels) {
    events.push_back({{"ph", "X"}, {"name", k.name}, {"cat", "kernel"}, {"pid", counters_pid}, {"tid", 0},
                      {"ts", static_cast<double>(k.start) / 1e6}, {"dur", static_cast<double>(k.end - k.start) / 1e6}});
    for (const auto& s : k.spans) {
      events.push_back({{"ph", "X"}, {"name", k.name + " wg " + std::to_string(s.workgroup)}, {"cat", "workgroup"},
                        {"pid", s.xcd}, {"tid", s.cu}, {"ts", static_cast<double>(s.start) / 1e6},
                        {"dur", static_cast<double>(s.end - s.start) / 1e6}});
    }
    const double seconds = static_cast<double>(k.end - k.start) / 1e12;
    const double hbm = ratio(static_cast<double>(k.counters.hbm_read_bytes + k.counters.hbm_write_bytes), seconds);
    const double l2 = ratio(static_cast<double>(k.counters.requested_read_bytes + k.counters.requested_write_bytes +
                                                k.counters.atomic_bytes),
                            seconds);
    events.push_back({{"ph", "C"}, {"name", "bandwidth GB/s"}, {"pid", counters_pid},
                      {"ts", static_cast<double>(k.start) / 1e6}, {"args", {{"HBM", hbm / 1e9}, {"L2", l2 / 1e9}}}});
    events.push_back({{"ph", "C"}, {"name", "bandwidth GB/s"}, {"pid", counters_pid},
                      {"ts", static_cast<double>(k.end) / 1e6}, {"args", {{"HBM", 0.0}, {"L2", 0.0}}}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"}};
}

}  // namespace attnsim::report
