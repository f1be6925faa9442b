#include "sim/group_cache.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attnsim::sim {

GroupCache::GroupCache(std::uint64_t capacity_bytes, std::uint32_t max_groups, std::uint32_t sets,
                       std::uint32_t line_bytes, std::uint32_t sample)
    : capacity_units_(std::max<std::uint64_t>(1, capacity_bytes / 64)),
      sets_(std::max<std::uint32_t>(1, sets)),
      line_div_(std::max<std::uint32_t>(64, line_bytes)),
      period_div_(std::uint64_t{std::max<std::uint32_t>(64, line_bytes)} * std::max<std::uint32_t>(1, sets)) {
  if (line_bytes == 0 || line_bytes % 64 != 0) {
    throw std::invalid_argument("GroupCache: the line must be a positive multiple of 64 B, not " +
                                std::to_string(line_bytes) + " B");
  }
  max_groups = std::max<std::uint32_t>(max_groups, 2);
  if (sets_ > 1) {
    set_capacity_units_ = std::max<std::uint64_t>(1, capacity_units_ / sets_);
    used_in_set_.assign(sets_, 0);
    set_memo_.assign(std::size_t{max_groups} * (sets_ + 1), 0);
    group_memo_.assign(max_groups, 0);
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
  std::uint32_t bits = 1;
  while ((std::uint64_t{1} << bits) < 2ull * max_groups) ++bits;
  table_.assign(std::size_t{1} << bits, kNone);
  shift_ = 64 - bits;
}

std::uint64_t GroupCache::slot_for(std::uint64_t key) const {
  const std::uint64_t mask = table_.size() - 1;
  for (std::uint64_t s = slot_of(key);; s = (s + 1) & mask) {
    const std::uint32_t g = table_[s];
    if (g == kNone || groups_[g].key() == key) return s;
  }
}

std::uint64_t GroupShapes::index_of(const GroupShape& shape) {
  const auto same = [&](const GroupShape& o) { return o.stride == shape.stride && o.units_per_row == shape.units_per_row; };
  if (last_ < shapes_.size() && same(shapes_[last_])) return last_;
  for (std::uint64_t i = 0; i < shapes_.size(); ++i) {
    if (same(shapes_[i])) return last_ = i;
  }
  if (shapes_.size() == (std::uint64_t{1} << 16)) throw std::length_error("more than 65536 group shapes");
  shapes_.push_back(shape);
  return last_ = shapes_.size() - 1;
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

void GroupCache::map_sets(std::uint32_t g, std::uint64_t key, std::uint64_t shape_index) {
  const std::size_t width = sets_ + 1;
  // A unit's set depends on the key only through key mod the period: the sets of a shape at each
  // 64 B offset within the period are found once; a key off a 64 B boundary has its own entry.
  if (key % 64 != 0) {
    group_memo_[g] = static_cast<std::uint32_t>(std::size_t{g} * width);
    find_sets(&set_memo_[group_memo_[g]], key, shape_index);
    return;
  }
  const std::uint64_t offsets = period_div_.value() / 64;
  const std::uint64_t entry = shape_index * offsets + period_div_.mod(key) / 64;
  const std::size_t first = groups_.size() * width;  // the shared entries start after the groups'
  if (entry >= memo_ready_.size()) {
    memo_ready_.resize((shape_index + 1) * offsets, 0);
    set_memo_.resize(first + memo_ready_.size() * width, 0);
  }
  const std::size_t at = first + entry * width;
  if (!memo_ready_[entry]) {
    find_sets(&set_memo_[at], key, shape_index);
    memo_ready_[entry] = 1;
  }
  group_memo_[g] = static_cast<std::uint32_t>(at);
}

void find_group_sets(std::uint64_t* m, std::uint64_t key, const GroupShape& shape, std::uint32_t sets,
                     const Divisor& line) {
  std::fill(m, m + sets + 1, 0);
  const std::uint32_t per_row = shape.units_per_row ? shape.units_per_row : 64;
  std::uint64_t row = key;
  for (std::uint32_t first = 0; first < 64; first += per_row, row += shape.stride) {
    for (std::uint32_t u = 0; u < per_row && first + u < 64; ++u) {
      m[line.div(row + 64 * u) % sets] |= std::uint64_t{1} << (first + u);
    }
  }
  for (std::uint32_t k = 0; k < sets && k < 64; ++k) m[sets] |= std::uint64_t{m[k] != 0} << k;
}

void GroupCache::find_sets(std::uint64_t* m, std::uint64_t key, std::uint64_t shape_index) const {
  find_group_sets(m, key, shapes_[shape_index], sets_, line_div_);
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
}

std::uint64_t GroupCache::state_bytes() const {
  return groups_.size() * sizeof(Group) + free_.capacity() * sizeof(std::uint32_t) +
         table_.size() * sizeof(std::uint32_t) + set_memo_.size() * sizeof(std::uint64_t) +
         group_memo_.size() * sizeof(std::uint32_t) + (resident_.capacity() + order_.capacity()) * sizeof(Resident) +
         pos_.size() * sizeof(std::uint32_t);
}

}  // namespace attnsim::sim
