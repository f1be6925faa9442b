#include "sim/group_cache.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attnsim::sim {

GroupCache::GroupCache(std::uint64_t capacity_bytes, std::uint32_t max_groups, std::uint32_t sets,
                       std::uint32_t line_bytes, std::uint32_t sample)
    : capacity_units_(std::max<std::uint64_t>(1, capacity_bytes / 64)),
      line_bytes_(line_bytes),
      units_per_line_(line_bytes / 64),
      sets_(std::max<std::uint32_t>(1, sets)) {
  if (line_bytes == 0 || line_bytes % 64 != 0) {
    throw std::invalid_argument("GroupCache: the line must be a positive multiple of 64 B, not " +
                                std::to_string(line_bytes) + " B");
  }
  max_groups = std::max<std::uint32_t>(max_groups, 2);
  if (sets_ > 1) {
    set_capacity_units_ = std::max<std::uint64_t>(1, capacity_units_ / sets_);
    used_in_set_.assign(sets_, 0);
    set_masks_.emplace(sets_, line_bytes);
    set_units_.assign(std::size_t{max_groups} * (sets_ + 1), 0);
  }
  groups_.resize(max_groups);
  if (sample > 0) {
    if (sets_ > 1) throw std::invalid_argument("GroupCache: sampled victims need one set (sets = 1)");
    sample_ = sample;
    pos_.assign(max_groups, 0);
    resident_.reserve(max_groups);
    order_.reserve(max_groups);
  }
  free_.reserve(max_groups);
  for (std::uint32_t g = max_groups; g-- > 0;) free_.push_back(g);
  const std::uint32_t bits = table_bits(max_groups);
  table_.assign(std::size_t{1} << bits, kNone);
  shift_ = 64 - bits;
}

void GroupCache::set_fills(const SetIndexMap& map, std::uint32_t ways) {
  if (sets_ > 1) throw std::invalid_argument("GroupCache: set fill counts need one set (sets = 1)");
  if (units_per_line_ > 2) {
    throw std::invalid_argument("GroupCache: set fill counts need 64 or 128 B lines, not " +
                                std::to_string(line_bytes_) + " B");
  }
  fills_.emplace(map, ways);
  due_ = 0;
}

namespace {
// Bits 0, 2, 4, .. of x packed into bits 0, 1, 2, .. (the first unit of each 128 B line, a bit per line).
std::uint64_t even_bits_packed(std::uint64_t x) {
  x &= 0x5555555555555555ull;
  x = (x | (x >> 1)) & 0x3333333333333333ull;
  x = (x | (x >> 2)) & 0x0f0f0f0f0f0f0f0full;
  x = (x | (x >> 4)) & 0x00ff00ff00ff00ffull;
  x = (x | (x >> 8)) & 0x0000ffff0000ffffull;
  return (x | (x >> 16)) & 0x00000000ffffffffull;
}
}  // namespace

std::uint64_t GroupCache::count_fills(std::uint64_t key, const GroupShape& shape, std::uint64_t added,
                                      std::uint64_t before) {
  std::uint64_t lines = line_firsts(added) & ~line_firsts(before);
  if (fills_->all_full()) return count_units(lines);
  std::uint64_t evicting = 0;
  const std::uint32_t per_row = shape.units_per_row ? shape.units_per_row : 64;
  const std::uint64_t row_mask = per_row == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << per_row) - 1;
  const std::uint32_t line_shift = units_per_line_ == 2 ? 7 : 6;
  std::uint64_t row = key;
  for (std::uint32_t first = 0; lines; first += per_row, row += shape.stride) {
    std::uint64_t in_row = (lines >> first) & row_mask;  // the row's new lines, by unit in the row
    lines &= ~(in_row << first);
    if (units_per_line_ == 2) in_row = even_bits_packed(in_row);  // by line in the row
    // Each run of consecutive new lines at once.
    while (in_row) {
      const auto u = static_cast<std::uint32_t>(__builtin_ctzll(in_row));
      const std::uint64_t from_u = in_row >> u;
      const std::uint32_t run = ~from_u == 0 ? 64 - u : static_cast<std::uint32_t>(__builtin_ctzll(~from_u));
      evicting += fills_->fill_run((row >> line_shift) + u, run);
      in_row &= run == 64 ? 0 : ~(((std::uint64_t{1} << run) - 1) << u);
    }
  }
  return evicting;
}

std::uint64_t GroupCache::slot_for(std::uint64_t key) const {
  const std::uint64_t mask = table_.size() - 1;
  for (std::uint64_t s = slot_of(key);; s = (s + 1) & mask) {
    const std::uint32_t g = table_[s];
    if (g == kNone || groups_[g].key() == key) return s;
  }
}

void GroupCache::reject_key(std::uint64_t key) {
  throw std::out_of_range("GroupCache: address " + std::to_string(key) + " beyond the 48-bit key");
}

std::uint32_t GroupCache::insert_at(std::uint64_t slot, std::uint64_t key, const GroupShape& shape) {
  const std::uint64_t tagged = key | shapes_.index_of(shape) << kKeyBits;
  const std::uint32_t g = free_.back();
  free_.pop_back();
  groups_[g] = Group{tagged, 0, 0, kNone, kNone};
  table_[slot] = g;
  ++count_;
  return g;
}

// Removes `key` from the table, shifting later entries of its probe run back (no tombstones).
void GroupCache::erase_slot(std::uint64_t key) {
  const std::uint64_t mask = table_.size() - 1;
  std::uint64_t s = slot_of(key);
  while (groups_[table_[s]].key() != key) s = (s + 1) & mask;
  std::uint64_t hole = s;
  for (std::uint64_t j = (hole + 1) & mask; table_[j] != kNone; j = (j + 1) & mask) {
    const std::uint64_t home = slot_of(groups_[table_[j]].key());
    // The entry at j may move into the hole if its home is not cyclically within (hole, j].
    const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (!stays) {
      table_[hole] = table_[j];
      hole = j;
    }
  }
  table_[hole] = kNone;
}

void GroupCache::map_sets(std::uint32_t g, std::uint64_t key, const GroupShape& shape) {
  std::copy_n(set_masks_->of(key, shape), sets_ + 1, &set_units_[std::size_t{g} * (sets_ + 1)]);
}

void GroupCache::unlink(std::uint32_t g) {
  Group& e = groups_[g];
  if (e.prev != kNone) groups_[e.prev].next = e.next; else head_ = e.next;
  if (e.next != kNone) groups_[e.next].prev = e.prev; else tail_ = e.prev;
  e.prev = e.next = kNone;
}

void GroupCache::push_front(std::uint32_t g) {
  Group& e = groups_[g];
  e.prev = kNone;
  e.next = head_;
  if (head_ != kNone) groups_[head_].prev = g;
  head_ = g;
  if (tail_ == kNone) tail_ = g;
}

void GroupCache::renumber_stamps() {
  order_.assign(resident_.begin(), resident_.end());
  std::sort(order_.begin(), order_.end(), [](const Resident& a, const Resident& b) { return a.stamp < b.stamp; });
  std::uint32_t next = 0;
  for (const Resident& r : order_) resident_[pos_[r.group]].stamp = ++next;
  clock_ = next;
}

void GroupCache::invalidate() {
  if (sample_) {
    for (const Resident& r : resident_) {
      groups_[r.group].valid = groups_[r.group].dirty = 0;
      free_.push_back(r.group);
    }
  }
  for (std::uint32_t g = head_; g != kNone;) {
    const std::uint32_t next = groups_[g].next;
    groups_[g].valid = groups_[g].dirty = 0;
    free_.push_back(g);
    g = next;
  }
  std::fill(table_.begin(), table_.end(), kNone);
  resident_.clear();
  rng_ = kSeed;
  head_ = tail_ = kNone;
  count_ = 0;
  used_units_ = 0;
  std::fill(used_in_set_.begin(), used_in_set_.end(), 0);
  if (fills_) fills_->clear();
  due_ = 0;
}

std::uint64_t GroupCache::state_bytes_for(std::uint32_t max_groups, std::uint32_t sets, std::uint32_t sample) {
  const std::uint64_t groups = std::max<std::uint32_t>(max_groups, 2);
  std::uint64_t bytes = groups * (sizeof(Group) + sizeof(std::uint32_t)) +
                        (std::uint64_t{1} << table_bits(static_cast<std::uint32_t>(groups))) * sizeof(std::uint32_t);
  if (sets > 1) bytes += groups * (std::uint64_t{sets} + 1) * sizeof(std::uint64_t) + GroupSetMasks::state_bytes_for(sets);
  if (sample > 0) bytes += groups * (2 * sizeof(Resident) + sizeof(std::uint32_t));
  return bytes;
}

std::uint64_t GroupCache::state_bytes() const {
  return groups_.size() * sizeof(Group) + free_.capacity() * sizeof(std::uint32_t) +
         table_.size() * sizeof(std::uint32_t) + set_units_.capacity() * sizeof(std::uint64_t) +
         (set_masks_ ? set_masks_->state_bytes() : 0) + (resident_.capacity() + order_.capacity()) * sizeof(Resident) +
         pos_.size() * sizeof(std::uint32_t) + (fills_ ? fills_->state_bytes() : 0);
}

}  // namespace attnsim::sim
