#include "sim/l1_cache.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace attnsim::sim {

L1Caches::L1Caches(const arch::GpuSpec& gpu, bool approximate) : gpu_(&gpu), approximate_(approximate) {
  const arch::L1Spec& l1 = gpu.l1;
  line_ = Divisor(l1.line.value);
  if (l1.line.value != gpu.l2.line.value || l1.write_policy != arch::WritePolicy::write_through) {
    throw std::invalid_argument("L1Caches: a spec the loader would refuse (l1.line, l1.write_policy: arch/spec_checks.cpp)");
  }
  build(l1.size.value);
}

void L1Caches::build(std::uint64_t bytes) {
  const arch::L1Spec& l1 = gpu_->l1;
  const std::uint32_t cus = gpu_->chip.xcds * gpu_->chip.cus_per_xcd;
  size_ = bytes;
  exact_.clear();
  groups_.clear();
  small_.clear();
  set_masks_.reset();
  if (groups_for(*gpu_, approximate_)) {
    // Room for the groups of an L1 full of groups a quarter valid, as the approximate L2. The
    // exact L1's few sets (line mod sets) are kept: each holds its share of the capacity, so that
    // rows whose lines fall in some of the sets only (a row stride a multiple of sets x line)
    // have the part of the L1 they would have (docs/model.md, approximate mode).
    const std::uint32_t max_groups = GroupCache::room_for(bytes);
    const auto sets = static_cast<std::uint32_t>(gpu_->l1_sets());
    if (small_groups(bytes)) {
      set_masks_.emplace(sets, static_cast<std::uint32_t>(l1.line.value));
      small_.reserve(cus);
      for (std::uint32_t i = 0; i < cus; ++i) small_.emplace_back(bytes, max_groups, sets);
      return;
    }
    groups_.reserve(cus);
    for (std::uint32_t i = 0; i < cus; ++i) {
      groups_.emplace_back(bytes, max_groups, sets, static_cast<std::uint32_t>(l1.line.value));
    }
    return;
  }
  // The sets stay those of l1.size; a larger or smaller L1 has more or fewer ways.
  const auto ways = static_cast<std::uint32_t>(gpu_->l1_ways_at(bytes));
  exact_.reserve(cus);
  for (std::uint32_t i = 0; i < cus; ++i) exact_.emplace_back(bytes, ways, static_cast<std::uint32_t>(l1.line.value));
}

void L1Caches::resize(std::uint64_t bytes) {
  if (bytes == size_) {
    invalidate();
    return;
  }
  build(bytes);
}

std::uint64_t L1Caches::read_units(std::uint32_t cu, std::uint64_t key, const GroupShape& shape, std::uint64_t units) {
  // One lookup per line: the run of units of a row from the first one left that lie in its line,
  // unit u + k being part first_part + k of the line.
  LruRing& ring = exact_[cu];
  const std::uint32_t per_row = shape.units_per_row ? shape.units_per_row : 64;
  const auto parts_per_line = static_cast<std::uint32_t>(line_.value() / 64);
  std::uint64_t held = 0;
  for (std::uint64_t left = units; left;) {
    const auto u = static_cast<std::uint32_t>(std::countr_zero(left));
    const std::uint32_t row = u / per_row;
    const std::uint64_t address = key + row * shape.stride + (u % per_row) * std::uint64_t{64};
    const std::uint64_t offset = line_.mod(address);  // of the unit in its line
    const auto first_part = static_cast<std::uint32_t>(offset / 64);
    const std::uint32_t room = std::min(std::min((row + 1) * per_row, 64u) - u, parts_per_line - first_part);
    const auto run = std::min<std::uint32_t>(room, static_cast<std::uint32_t>(std::countr_one(left >> u)));
    const std::uint64_t run_mask = (std::uint64_t{1} << run) - 1;  // run <= parts_per_line <= 8
    const std::uint8_t valid = ring.access_parts(address - offset, static_cast<std::uint8_t>(run_mask << first_part));
    held |= (std::uint64_t{valid} >> first_part & run_mask) << u;
    left &= ~(run_mask << u);
  }
  return held;
}

bool L1Caches::read(std::uint32_t cu, std::uint64_t line_address, std::uint32_t lo, std::uint32_t hi) {
  // The 64 B units of the line the read touches, one bit each.
  std::uint8_t units = 0;
  for (std::uint32_t unit = lo / 64; unit * 64 < hi; ++unit) units = static_cast<std::uint8_t>(units | (1u << unit));
  return exact_[cu].access(line_address, units);
}

void L1Caches::invalidate() {
  for (auto& c : exact_) c.invalidate();
  for (auto& g : groups_) g.invalidate();
  for (auto& g : small_) g.invalidate();
}

std::uint64_t L1Caches::state_bytes_at_most(const arch::GpuSpec& gpu, bool approximate) {
  const std::uint64_t cus = std::uint64_t{gpu.chip.xcds} * gpu.chip.cus_per_xcd;
  const std::uint64_t bytes = gpu.l1.carveouts.empty() ? gpu.l1.size.value : gpu.l1_left_by(gpu.l1.carveouts.front().value);
  const auto sets = static_cast<std::uint32_t>(gpu.l1_sets());
  if (!groups_for(gpu, approximate)) {
    return cus * LruRing::state_bytes_for(bytes, static_cast<std::uint32_t>(gpu.l1_ways_at(bytes)),
                                          static_cast<std::uint32_t>(gpu.l1.line.value));
  }
  if (small_groups(bytes)) {  // one set-mask memo for all of them
    return cus * SmallGroupCache::state_bytes_for(GroupCache::room_for(bytes), sets) + GroupSetMasks::state_bytes_for(sets);
  }
  return cus * GroupCache::state_bytes_for(GroupCache::room_for(bytes), sets, 0);
}

std::uint64_t L1Caches::state_bytes() const {
  std::uint64_t n = 0;
  for (const auto& c : exact_) n += c.state_bytes();
  for (const auto& g : groups_) n += g.state_bytes();
  for (const auto& g : small_) n += g.state_bytes();
  if (set_masks_) n += set_masks_->state_bytes();
  return n;
}

}  // namespace attnsim::sim
