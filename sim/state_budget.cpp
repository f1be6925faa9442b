#include "sim/state_budget.h"

#include <algorithm>
#include <string>

#include "arch/config_error.h"
#include "sim/lru_ring.h"
#include "sim/memory_path.h"
#include "sim/small_group_cache.h"

namespace attnsim::sim {
namespace {

// GroupCache(capacity, capacity / 1024 groups, sets, line, sample)'s allocations: each group (32 B),
// its free-list entry, two table slots, with sets > 1 its per-set unit masks, with sampled victims
// its dense-list entries.
std::uint64_t group_cache_bytes(std::uint64_t capacity, std::uint64_t sets, bool sampled) {
  const std::uint64_t groups = std::max<std::uint64_t>(2, capacity / (64 * 16));
  std::uint64_t per_group = 32 + 4 + 2 * 4;
  if (sets > 1) per_group += (sets + 1) * 8;
  if (sampled) per_group += 4 + 2 * 8;
  return groups * per_group + (sets > 1 ? sets * 8 : 0);
}

}  // namespace

StateEstimate estimate_state_bytes(const arch::GpuSpec& gpu, TagMode mode) {
  const bool exact = mode == TagMode::exact;
  const std::uint64_t cus = std::uint64_t{gpu.chip.xcds} * gpu.chip.cus_per_xcd;
  // The largest L1 a kernel can get: with carve-outs, beside the smallest one.
  const std::uint64_t l1_bytes =
      gpu.l1.carveouts.empty() ? gpu.l1.size.value : gpu.l1_left_by(gpu.l1.carveouts.front().value);
  std::uint64_t l1 = 0;
  if (exact) {
    const std::uint64_t ways = gpu.l1_ways_at(l1_bytes);
    l1 = cus * LruRing::state_bytes_for(l1_bytes, static_cast<std::uint32_t>(ways), static_cast<std::uint32_t>(gpu.l1.line.value));
  } else if (l1_bytes / (64 * 16) <= SmallGroupCache::kMaxGroups) {
    l1 = cus * SmallGroupCache::kMaxGroups * (3 + gpu.l1_sets() + 1) * 8;
  } else {
    l1 = cus * group_cache_bytes(l1_bytes, gpu.l1_sets(), false);
  }
  const std::uint64_t l2_each = gpu.l2_instance_bytes();
  const std::uint64_t l2 =
      gpu.l2_instances() * (exact ? SetAssocCache::state_bytes_split(l2_each, gpu.l2.ways,
                                                                     static_cast<std::uint32_t>(gpu.l2.line.value),
                                                                     gpu.hbm.capacity.value)
                                  : group_cache_bytes(l2_each, 1, true));
  std::uint64_t mall = 0;
  if (gpu.mall.present) {
    mall = exact ? SetAssocCache::state_bytes_split(gpu.mall.size.value, gpu.mall.ways,
                                                    static_cast<std::uint32_t>(gpu.mall.line.value), gpu.hbm.capacity.value)
                 : group_cache_bytes(gpu.mall.size.value, 1, false);
  }
  StateEstimate e;
  e.bytes = l1 + l2 + mall;
  e.largest_key = "l2.size";
  e.largest_bytes = l2;
  if (l1 > e.largest_bytes) {
    e.largest_key = "l1.size";
    e.largest_bytes = l1;
  }
  if (mall > e.largest_bytes) {
    e.largest_key = "mall.size";
    e.largest_bytes = mall;
  }
  return e;
}

void check_state_budget(const arch::GpuSpec& gpu, TagMode mode) {
  const StateEstimate e = estimate_state_bytes(gpu, mode);
  if (e.bytes <= kMaxStateBytes) return;
  const auto mib = [](std::uint64_t b) { return std::to_string(b >> 20) + " MiB"; };
  std::string problem = "the cache tags of this hierarchy would take about " + mib(e.bytes) +
                        " of host memory, more than the " + mib(kMaxStateBytes) + " one simulation may hold; " +
                        e.largest_key + " takes " + mib(e.largest_bytes) + " of them";
  if (mode == TagMode::approximate && std::string(e.largest_key) == "l1.size") {
    problem += " (the approximate mode counts each L1 group's units in each of the L1's " +
               std::to_string(gpu.l1_sets()) + " sets: the exact mode, without --approximate, needs less)";
  }
  throw arch::ConfigError(arch::ValueOrigin{gpu.name, 0, 0, {}}, e.largest_key, problem);
}

}  // namespace attnsim::sim
