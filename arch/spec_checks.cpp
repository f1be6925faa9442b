#include "arch/spec_checks.h"

#include <initializer_list>
#include <string>

namespace attnsim::arch {
namespace {

// Collects the rules; each failure throws at the named key.
class Checker {
 public:
  Checker(const GpuSpec& s, const std::function<ValueOrigin(std::string_view)>& where) : s_(s), where_(where) {}

  // `keys`: the key the problem is about first, then those it is checked against. On failure,
  // reports at the first of them a --set override set (the user's change is the likely cause),
  // else at the first key; the problem then says which key it is about when that is another.
  void require(bool ok, std::initializer_list<std::string_view> keys, const std::string& problem) const {
    if (ok) return;
    const std::string_view subject = *keys.begin();
    std::string_view at = subject;
    for (std::string_view k : keys) {
      if (!where_(k).override_text.empty()) {
        at = k;
        break;
      }
    }
    throw ConfigError(where_(at), std::string(at), at == subject ? problem : std::string(subject) + ": " + problem);
  }
  void require(bool ok, std::string_view key, const std::string& problem) const { require(ok, {key}, problem); }

  // An L1 shared with the LDS: the largest carve-out is the LDS, and every split leaves whole ways
  // of the sets l1.size has.
  void l1_carveouts() const {
    const L1Spec& l1 = s_.l1;
    if (l1.carveouts.empty()) {
      require(l1.carveout_reserve.value == 0, {"l1.carveout_reserve", "l1.carveouts"},
              format(l1.carveout_reserve) + " of reserve needs l1.carveouts (an L1 shared with the LDS)");
      return;
    }
    require(l1.carveouts.back().value == s_.cu.lds_size.value, {"l1.carveouts", "cu.lds_size"},
            "the largest carve-out, " + format(l1.carveouts.back()) + ", must be cu.lds_size = " + format(s_.cu.lds_size));
    const std::uint64_t way_bytes = s_.l1_sets() * l1.line.value;
    for (const Bytes& c : l1.carveouts) {
      const std::uint64_t left = s_.l1_left_by(c.value);
      require(left % way_bytes == 0, {"l1.carveouts", "l1.ways", "l1.size", "l1.line"},
              "a carve-out of " + format(c) + " leaves an L1 of " + format(Bytes{left}) + ", not whole ways of its " +
                  std::to_string(s_.l1_sets()) + " sets (l1.size / (l1.ways x l1.line)) x l1.line = " +
                  format(Bytes{way_bytes}));
    }
  }

  void cache(std::string_view prefix, const CacheSpec& c) const {
    const std::uint64_t set_bytes = static_cast<std::uint64_t>(c.ways) * c.line.value;
    const std::string p(prefix);
    require(c.size.value % set_bytes == 0, {p + ".size", p + ".ways", p + ".line"},
            format(c.size) + " is not a multiple of " + p + ".ways x " + p + ".line = " + std::to_string(c.ways) +
                " x " + format(c.line) + " = " + format(Bytes{set_bytes}));
  }

  void run() const {
    const CuSpec& cu = s_.cu;
    require(cu.max_workgroup_size % cu.wave_size == 0, {"cu.max_workgroup_size", "cu.wave_size"},
            std::to_string(cu.max_workgroup_size) + " threads is not a whole number of " +
                std::to_string(cu.wave_size) + "-lane waves");
    const std::uint64_t cu_threads = std::uint64_t{cu.simds} * cu.wave_slots_per_simd * cu.wave_size;
    require(cu.max_workgroup_size <= cu_threads,
            {"cu.max_workgroup_size", "cu.simds", "cu.wave_slots_per_simd", "cu.wave_size"},
            std::to_string(cu.max_workgroup_size) + " threads exceed the CU's " + std::to_string(cu_threads) +
                " (simds x wave_slots_per_simd x wave_size)");
    require(cu.valu_lanes_per_simd <= cu.wave_size && cu.wave_size % cu.valu_lanes_per_simd == 0,
            {"cu.valu_lanes_per_simd", "cu.wave_size"},
            std::to_string(cu.valu_lanes_per_simd) + " must divide the wave size " + std::to_string(cu.wave_size));
    require(cu.trans_lanes_per_simd <= cu.valu_lanes_per_simd, {"cu.trans_lanes_per_simd", "cu.valu_lanes_per_simd"},
            std::to_string(cu.trans_lanes_per_simd) + " exceeds cu.valu_lanes_per_simd = " +
                std::to_string(cu.valu_lanes_per_simd));
    const std::uint64_t lane_bytes = std::uint64_t{cu.simds} * cu.wave_size * 4;
    require(cu.vgpr_file.value % lane_bytes == 0, {"cu.vgpr_file", "cu.simds", "cu.wave_size"},
            format(cu.vgpr_file) + " is not a whole number of 4-byte registers per lane per SIMD (simds x wave_size x 4 B = " +
                format(Bytes{lane_bytes}) + ")");
    const std::uint64_t regs_per_lane = cu.vgpr_file.value / lane_bytes;
    require(cu.max_vgprs_per_wave <= regs_per_lane, {"cu.max_vgprs_per_wave", "cu.vgpr_file", "cu.simds", "cu.wave_size"},
            std::to_string(cu.max_vgprs_per_wave) + " exceeds the " + std::to_string(regs_per_lane) +
                " registers per lane a SIMD's share of cu.vgpr_file holds");
    require(cu.vgpr_alloc_granule <= cu.max_vgprs_per_wave, {"cu.vgpr_alloc_granule", "cu.max_vgprs_per_wave"},
            std::to_string(cu.vgpr_alloc_granule) + " exceeds cu.max_vgprs_per_wave = " +
                std::to_string(cu.max_vgprs_per_wave));
    require(cu.lds_max_per_workgroup.value <= cu.lds_size.value, {"cu.lds_max_per_workgroup", "cu.lds_size"},
            format(cu.lds_max_per_workgroup) + " exceeds cu.lds_size = " + format(cu.lds_size));
    const std::uint64_t bank_bytes = std::uint64_t{cu.lds_banks} * cu.lds_bank_width.value;
    require(cu.lds_bandwidth.value <= bank_bytes, {"cu.lds_bandwidth", "cu.lds_banks", "cu.lds_bank_width"},
            format(cu.lds_bandwidth) + " exceeds what cu.lds_banks x cu.lds_bank_width deliver per clock (" +
                std::to_string(bank_bytes) + " B/clk)");
    matrix();

    cache("l1", s_.l1);
    cache("l2", s_.l2);
    const L2Spec& l2 = s_.l2;
    require(l2.partitions == 1 || l2.scope == L2Scope::shared, {"l2.partitions", "l2.scope"},
            std::to_string(l2.partitions) + " partitions need a shared L2 (l2.scope = \"shared\"); an L2 per XCD is not partitioned");
    require(l2.channels % l2.partitions == 0, {"l2.channels", "l2.partitions"},
            std::to_string(l2.channels) + " channels do not split evenly over " + std::to_string(l2.partitions) + " partitions");
    {
      const std::uint64_t part_sets_bytes = std::uint64_t{l2.partitions} * l2.ways * l2.line.value;
      require(l2.size.value % part_sets_bytes == 0, {"l2.size", "l2.partitions"},
              format(l2.size) + " does not split into " + std::to_string(l2.partitions) +
                  " partitions of whole sets (l2.ways x l2.line = " + format(Bytes{std::uint64_t{l2.ways} * l2.line.value}) + ")");
    }
    require(l2.partitions == 1 || l2.atomics == AtomicSite::l2, {"l2.partitions", "l2.atomics"},
            "a partitioned L2 performs atomics at each line's home partition: it needs l2.atomics = \"l2\"");
    require(l2.partitions == 1 || l2.far_latency.value > 0, {"l2.far_latency", "l2.partitions"},
            "l2.partitions = 2 needs l2.far_latency (the far partition's added round trip)");
    require(s_.hbm.write_queue.value >= s_.l2.line.value, {"hbm.write_queue", "l2.line"},
            format(s_.hbm.write_queue) + " cannot hold one write-back of an L2 line (" + format(s_.l2.line) + ")");
    if (s_.mall.present) cache("mall", s_.mall);
    l1_carveouts();
    // What the simulator's L1 models (sim/l1_cache.cpp): lines of the L2's size, no dirty data.
    require(s_.l1.line.value == s_.l2.line.value, {"l1.line", "l2.line"},
            format(s_.l1.line) + ": the L1 is modelled per L2 line, so it must equal l2.line = " + format(s_.l2.line));
    require(s_.l1.write_policy == WritePolicy::write_through, "l1.write_policy",
            "the L1 is modelled write-through (a GPU's L1 holds no dirty global data)");

    require(s_.chip.xcds % s_.dispatch.xcds_per_partition == 0, {"dispatch.xcds_per_partition", "chip.xcds"},
            std::to_string(s_.dispatch.xcds_per_partition) + " does not divide chip.xcds = " + std::to_string(s_.chip.xcds));
    require(s_.dispatch.first_xcd < s_.dispatch.xcds_per_partition, {"dispatch.first_xcd", "dispatch.xcds_per_partition"},
            std::to_string(s_.dispatch.first_xcd) + " is not an XCD of a " +
                std::to_string(s_.dispatch.xcds_per_partition) + "-XCD partition");
    require(s_.clock.matrix_max.value <= s_.clock.engine_max.value, {"clock.matrix_max", "clock.engine_max"},
            format(s_.clock.matrix_max) + " exceeds clock.engine_max = " + format(s_.clock.engine_max));
    require(!s_.clock.engine_pinned || s_.clock.engine_pinned->value <= s_.clock.engine_max.value,
            {"clock.engine", "clock.engine_max"},
            (s_.clock.engine_pinned ? format(*s_.clock.engine_pinned) : std::string()) + " exceeds clock.engine_max = " +
                format(s_.clock.engine_max));
    require(s_.clock.power_baseline.value < s_.clock.power_limit.value, {"clock.power.baseline", "clock.power.limit"},
            format(s_.clock.power_baseline) + " leaves no power under clock.power.limit = " + format(s_.clock.power_limit));
    require(s_.hbm.channels % s_.hbm.stacks == 0, {"hbm.channels", "hbm.stacks"},
            std::to_string(s_.hbm.channels) + " channels do not split evenly over " + std::to_string(s_.hbm.stacks) +
                " stacks");
    require(s_.hbm.interleave.value >= s_.l2.line.value, {"hbm.interleave", "l2.line"},
            format(s_.hbm.interleave) + " is smaller than an L2 line (" + format(s_.l2.line) + ")");
  }

 private:
  // Every instruction's rate fits its dtype's peak, and some instruction reaches it.
  void matrix() const {
    const CuSpec& cu = s_.cu;
    for (const auto& ins : cu.matrix_instructions) {
      require(ins.simds <= cu.simds, {"cu.matrix.instructions", "cu.simds"},
              ins.name + " occupies " + std::to_string(ins.simds) + " SIMDs but the CU has " + std::to_string(cu.simds));
      const double per_cu = ins.flops() / ins.cycles * (static_cast<double>(cu.simds) / ins.simds);
      const auto peak = static_cast<double>(cu.matrix_flops_per_clk[static_cast<std::size_t>(ins.dtype)]);
      const std::string peak_key = "cu.matrix.flops_per_clk." + std::string(to_string(ins.dtype));
      require(per_cu <= peak * (1 + 1e-9), {"cu.matrix.instructions", peak_key, "cu.simds"},
              ins.name + " would deliver " + std::to_string(static_cast<long long>(per_cu)) +
                  " FLOP/clk per CU, above cu.matrix.flops_per_clk." + std::string(to_string(ins.dtype)) + " = " +
                  std::to_string(static_cast<long long>(peak)));
    }
    for (Dtype dt : kDtypes) {
      double best = 0;
      for (const auto& ins : cu.matrix_instructions) {
        if (ins.dtype == dt) best = std::max(best, ins.flops() / ins.cycles * (static_cast<double>(cu.simds) / ins.simds));
      }
      const auto peak = static_cast<double>(cu.matrix_flops_per_clk[static_cast<std::size_t>(dt)]);
      const std::string peak_key = "cu.matrix.flops_per_clk." + std::string(to_string(dt));
      require(best >= peak * (1 - 1e-9), {peak_key, "cu.matrix.instructions", "cu.simds"},
              std::to_string(static_cast<long long>(peak)) + " FLOP/clk per CU is not reached by any " +
                  std::string(to_string(dt)) + " instruction in cu.matrix.instructions (best: " +
                  std::to_string(static_cast<long long>(best)) + ")");
    }
  }

  const GpuSpec& s_;
  const std::function<ValueOrigin(std::string_view)>& where_;
};

}  // namespace

void check_consistency(const GpuSpec& spec, const std::function<ValueOrigin(std::string_view path)>& where) {
  Checker(spec, where).run();
}

}  // namespace attnsim::arch
