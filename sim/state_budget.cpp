#include "sim/state_budget.h"

#include <string>

#include "arch/config_error.h"
#include "sim/cache.h"
#include "sim/group_cache.h"
#include "sim/l1_cache.h"
#include "sim/memory_path.h"

namespace attnsim::sim {

StateEstimate estimate_state_bytes(const arch::GpuSpec& gpu, TagMode mode) {
  const bool exact = mode == TagMode::exact;
  const std::uint64_t l1 = L1Caches::state_bytes_at_most(gpu, !exact);
  const std::uint64_t l2_each = gpu.l2_instance_bytes();
  const std::uint64_t l2 =
      gpu.l2_instances() * (exact ? SetAssocCache::state_bytes_split(l2_each, gpu.l2.ways,
                                                                     static_cast<std::uint32_t>(gpu.l2.line.value),
                                                                     gpu.hbm.capacity.value)
                                  : GroupCache::state_bytes_for(MemoryPath::approximate_l2(gpu)));
  std::uint64_t mall = 0;
  if (gpu.mall.present) {
    mall = exact ? SetAssocCache::state_bytes_split(gpu.mall.size.value, gpu.mall.ways,
                                                    static_cast<std::uint32_t>(gpu.mall.line.value), gpu.hbm.capacity.value)
                 : GroupCache::state_bytes_for(MemoryPath::approximate_mall(gpu));
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

const arch::GpuSpec& check_state_budget(const arch::GpuSpec& gpu, TagMode mode) {
  const StateEstimate e = estimate_state_bytes(gpu, mode);
  if (e.bytes <= kMaxStateBytes) return gpu;
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
