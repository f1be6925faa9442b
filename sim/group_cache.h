// The approximate mode's tag state of one cache: a byte-budgeted LRU of line groups (a tile's rows
// of one head, or an aligned 4 KiB chunk), each with per-64-byte valid and dirty bits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/group_sets.h"
#include "sim/host_prefetch.h"
#include "sim/huge_page_allocator.h"
#include "sim/set_fill_counts.h"

namespace attnsim::sim {

// The arguments a GroupCache is built with (its constructor's, below).
struct GroupCacheGeometry {
  std::uint64_t capacity_bytes = 0;
  std::uint32_t max_groups = 0;
  std::uint32_t sets = 1;
  std::uint32_t line_bytes = 128;
  std::uint32_t sample = 0;
  // With sets (and sets = 1 above): the sets and ways of the set-associative cache it stands for,
  // whose evictions it makes (GroupCache, below); none: by capacity alone.
  std::optional<FillSets> fill_sets;
};

// Contract: an approximation of a cache of `capacity_bytes`, bounded against the exact
// set-associative cache in tests (docs/model.md, approximate mode). Every group is identified by a
// key (the address of its first unit) and keeps the same shape for its life; a group of units is
// made most recently used as a whole and evicted as a whole, least recently used first (but see
// `sample` below), once the valid units of all groups exceed the capacity. At most `max_groups`
// groups are held (a victim is evicted to make room). With `sets` = 1, fully associative (no set
// conflicts: a cache of many hashed sets). With `sets` > 1, as a cache of few sets indexed by line
// modulo sets (an L1): a unit lies in set (its address / line_bytes) mod sets, each set holds
// capacity / sets of units, and after an access each set the access added units to that is over
// its share, in set order, evicts the least recently used groups with units in it (never the
// group just accessed) until it fits; then the capacity as a whole is enforced as above. With
// `sample` = k > 0 (and sets = 1, else std::invalid_argument), each victim of the capacity as a
// whole (or of the group limit) is instead the least recently used of k groups drawn at random,
// with replacement, from the resident ones other than the group just accessed (a deterministic
// generator, restarted by invalidate()): the victim a k-way set-associative cache of hashed sets
// would take, whose set is a random draw of k lines (docs/model.md, approximate mode); a flush
// still reports groups most recently used first. With set fill counts (set_fills, sets = 1, else
// std::invalid_argument), the cache also evicts as the set-associative cache of those sets it
// stands for would, by number: each fill of a line into a set that has had `ways` fills since the
// cache was emptied evicts a line there (SetFillCounts), so whenever the lines filled into full sets
// outnumber those evicted, victims (chosen as above) are evicted whole until they no longer do (the
// lines a victim holds beyond those due count against the next fills into full sets); a group's
// lines then go to their sets at key + (u / units_per_row) * stride + (u % units_per_row) * 64,
// which needs groups of whole lines (keys and rows multiples of line_bytes; 64 or 128 B lines, else
// std::invalid_argument). Keys below 2^48 (else std::out_of_range);
// line_bytes a multiple of 64 (else std::invalid_argument). Deterministic; no allocation after
// construction but one per distinct shape beyond the first 16 (and, with sets > 1, a few words per
// distinct shape and key offset within sets x line_bytes).
class GroupCache {
 public:
  GroupCache(std::uint64_t capacity_bytes, std::uint32_t max_groups, std::uint32_t sets = 1,
             std::uint32_t line_bytes = 128, std::uint32_t sample = 0);
  explicit GroupCache(const GroupCacheGeometry& g)
      : GroupCache(g.capacity_bytes, g.max_groups, g.sets, g.line_bytes, g.sample) {
    if (g.fill_sets) set_fills(g.fill_sets->map, g.fill_sets->ways);
  }
  // Evicts by the fill counts of the set-associative cache of `map`'s sets and `ways` ways (the
  // contract above). Called before the first access.
  void set_fills(const SetIndexMap& map, std::uint32_t ways);

  // Probes the units `mask` of group `key`: returns the units of `mask` that were valid. Then makes
  // `fill` valid (a read or write allocation; 0: no allocation, e.g. a write-through) and `dirty`
  // dirty, and makes the group most recently used if it is present afterwards. Each evicted group
  // with dirty units goes to on_evict(key, shape, dirty_units).
  template <class OnEvict>
  std::uint64_t access(std::uint64_t key, const GroupShape& shape, std::uint64_t mask, std::uint64_t fill,
                       std::uint64_t dirty, OnEvict&& on_evict);
  // Hints that group `key` is about to be accessed: its table slot is fetched into the host's cache
  // ahead of the probe. No effect on results.
  void prefetch(std::uint64_t key) const { prefetch_host_line(&table_[slot_of(key)]); }
  // Calls f(key, shape, dirty_units) for every group with dirty units, then drops every group.
  template <class F>
  void flush_and_invalidate(F&& f);
  // Drops every group without writing anything back.
  void invalidate();
  // With sampled victims: renumbers the resident groups' access stamps 1..n in their order and
  // restarts the access clock at n. Changes no outcome; access() calls it before the 32-bit clock
  // would wrap.
  [[gnu::noinline]] void renumber_stamps();

  std::uint64_t valid_bytes() const { return used_units_ * 64; }
  // With sets > 1: the valid bytes of the units in set `set`.
  std::uint64_t valid_bytes_in_set(std::uint32_t set) const { return sets_ > 1 ? used_in_set_[set] * 64 : valid_bytes(); }
  std::uint64_t state_bytes() const;
  std::uint32_t groups() const { return count_; }
  // The groups a cache of `capacity_bytes` makes room for: those of the cache full of groups a
  // quarter valid (16 of their 64 units).
  static std::uint32_t room_for(std::uint64_t capacity_bytes) {
    return static_cast<std::uint32_t>(capacity_bytes / (64 * 16));
  }
  // state_bytes() of a GroupCache just built with these arguments (its set-mask memo as built: the
  // memo grows with the shapes seen). Pure.
  static std::uint64_t state_bytes_for(std::uint32_t max_groups, std::uint32_t sets, std::uint32_t sample);
  static std::uint64_t state_bytes_for(const GroupCacheGeometry& g) {
    return state_bytes_for(g.max_groups, g.sets, g.sample) +
           (g.fill_sets ? SetFillCounts::state_bytes_for(g.fill_sets->map.sets()) : 0);
  }

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  // 32 bytes, two to a host cache line: the shape is an index into shapes_, kept in the key's
  // unused top bits.
  struct alignas(32) Group {
    std::uint64_t tagged = 0;  // key | shape index << kKeyBits
    std::uint64_t valid = 0, dirty = 0;
    std::uint32_t prev = kNone, next = kNone;  // LRU list: head = most recent
    std::uint64_t key() const { return tagged & kKeyMask; }
  };
  static constexpr int kKeyBits = 48;
  static_assert(64 - kKeyBits == 16, "a shape's number (GroupShapes: at most 65536) fills the key's top bits");
  static constexpr std::uint64_t kKeyMask = (std::uint64_t{1} << kKeyBits) - 1;
  const GroupShape& shape_of(const Group& g) const { return shapes_[g.tagged >> kKeyBits]; }
  [[noreturn]] static void reject_key(std::uint64_t key);
  // The table slot that holds `key`, or the empty slot that ends its probe run (where an insert of
  // `key` goes while the table does not change).
  std::uint64_t slot_for(std::uint64_t key) const;
  // Takes a free group for `key` and puts it in table slot `slot` (slot_for(key), no change since).
  std::uint32_t insert_at(std::uint64_t slot, std::uint64_t key, const GroupShape& shape);
  void erase_slot(std::uint64_t key);
  void unlink(std::uint32_t g);
  void push_front(std::uint32_t g);
  std::uint64_t slot_of(std::uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_; }
  // log2 of the table's slots: the least power of two of at least twice the groups.
  static std::uint32_t table_bits(std::uint32_t max_groups) {
    std::uint32_t bits = 1;
    while ((std::uint64_t{1} << bits) < 2ull * max_groups) ++bits;
    return bits;
  }
  // The first unit of each line with a unit in `units` (the line's units being consecutive).
  std::uint64_t line_firsts(std::uint64_t units) const {
    return units_per_line_ == 2 ? line_starts(units) : units;
  }
  // Set fill counts: counts the fills of the lines of group `key` that units `added` make present
  // (none of their units valid `before`); returns how many of them evict a line.
  std::uint64_t count_fills(std::uint64_t key, const GroupShape& shape, std::uint64_t added, std::uint64_t before);
  // The group to evict next: the least recently used (or sampled_victim's pick) other than `keep`
  // (kNone if there is none).
  std::uint32_t victim(std::uint32_t keep);
  template <class OnEvict>
  void evict_lru(std::uint32_t keep, OnEvict&& on_evict);
  // Removes group `g` (present), passing its dirty units to on_evict.
  template <class OnEvict>
  void evict(std::uint32_t g, OnEvict&& on_evict);
  // Sets > 1: counts the units `added` to group `keep` in their sets, then evicts, set by set (those
  // they lie in), the least recently used groups other than `keep` with units in a set over its
  // share. Out of line: the caches of one set (the L2s, the MALL) keep their inlined access small.
  template <class OnEvict>
  [[gnu::noinline]] void fit_sets(std::uint32_t keep, std::uint64_t added, OnEvict&& on_evict);
  // Sets > 1: group g's units in each set and the sets it has units in (GroupSetMasks::of's words,
  // copied when it is inserted: map_sets).
  const std::uint64_t* set_units(std::uint32_t g) const { return &set_units_[std::size_t{g} * (sets_ + 1)]; }
  void map_sets(std::uint32_t g, std::uint64_t key, const GroupShape& shape);
  // Adds (+1) or removes (-1) the units `units` of group g from the sets' counts.
  void count_in_sets(std::uint32_t g, std::uint64_t units, int sign) {
    const std::uint64_t* m = set_units(g);
    for_each_set(m, sets_, [&](std::uint32_t k) {
      const std::uint64_t n = count_units(units & m[k]);
      used_in_set_[k] = sign > 0 ? used_in_set_[k] + n : used_in_set_[k] - n;
    });
  }
  // The least recently used groups are cold in the host's caches by the time they are evicted:
  // fetches the next victim's table slot, and the group after it, one eviction ahead (the next
  // victim itself having been fetched at the eviction before). No effect on results.
  void prefetch_next_victims(std::uint32_t next) const {
    if (next == kNone) return;
    const Group& n = groups_[next];
    prefetch_host_line(&table_[slot_of(n.key())]);
    if (n.prev != kNone) prefetch_host_line(&groups_[n.prev]);
  }

  std::uint64_t capacity_units_;
  std::uint64_t used_units_ = 0;
  std::uint32_t line_bytes_ = 128, units_per_line_ = 2;
  // Set fill counts (set_fills; else none): the lines the set-associative cache has evicted and
  // this one has not yet (negative: evicted ahead, a victim's lines beyond the one line due).
  std::optional<SetFillCounts> fills_;
  std::int64_t due_ = 0;
  std::vector<Group, HugePageAllocator<Group>> groups_;
  GroupShapes shapes_;               // the distinct shapes seen, by index
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t, HugePageAllocator<std::uint32_t>> table_;  // open addressing, linear probing: group index or kNone
  std::uint32_t shift_ = 0;           // 64 - log2(table size)
  std::uint32_t head_ = kNone, tail_ = kNone, count_ = 0;
  // Sets > 1 (else unused).
  std::uint32_t sets_ = 1;
  std::uint64_t set_capacity_units_ = 0;
  std::vector<std::uint64_t> used_in_set_;  // valid units per set
  std::optional<GroupSetMasks> set_masks_;  // each shape's sets, found once per key offset
  std::vector<std::uint64_t> set_units_;    // per group: sets_ + 1 words (set_units)
  // Sampled victims (sample_ > 0, else unused): the resident groups in a dense list, each with its
  // last access on a clock of accesses (a group's place in the list: pos_), and the generator's state.
  static constexpr std::uint64_t kSeed = 0x9E3779B97F4A7C15ull;
  std::uint32_t sample_ = 0;
  std::uint32_t clock_ = 0;  // renumbered before it would wrap (renumber_stamps)
  std::uint64_t rng_ = kSeed;
  struct Resident {          // 8 bytes: the draws touch few host cache lines
    std::uint32_t stamp;     // the group's last access on clock_
    std::uint32_t group;
  };
  std::vector<Resident> resident_, order_;  // order_: flush_and_invalidate's scratch
  std::vector<std::uint32_t> pos_;
  // The least recently used of sample_ groups drawn uniformly from the resident ones, other than
  // `keep` (kNone if every draw was it), where `keep` is kNone or the group accessed last (its
  // stamp the largest). xorshift64, each step's halves two draws, each half scaled to the list (no
  // division). The resident groups' stamps differ, so the least of (stamp, group) packed in a word
  // is the least recent draw, found without a branch per draw: `keep`'s only if every draw was it.
  std::uint32_t sampled_victim(std::uint32_t keep) {
    std::uint64_t best = ~std::uint64_t{0};
    const std::uint64_t n = resident_.size();
    const auto consider = [&](std::uint64_t half) {
      const Resident& r = resident_[(half * n) >> 32];
      best = std::min(best, std::uint64_t{r.stamp} << 32 | r.group);
    };
    const auto step = [&] {
      rng_ ^= rng_ << 13;
      rng_ ^= rng_ >> 7;
      rng_ ^= rng_ << 17;
    };
    for (std::uint32_t i = 0; i + 1 < sample_; i += 2) {
      step();
      consider(rng_ >> 32);
      consider(rng_ & 0xffffffffu);
    }
    if (sample_ & 1) {  // the last draw: the high half of one more step
      step();
      consider(rng_ >> 32);
    }
    const auto victim = static_cast<std::uint32_t>(best);
    return victim == keep ? kNone : victim;
  }
};

inline std::uint32_t GroupCache::victim(std::uint32_t keep) {
  if (sample_) {
    std::uint32_t v = resident_.size() > 1 ? sampled_victim(keep) : kNone;
    if (v == kNone) {  // one group resident, or every draw was `keep`: another one, if any
      for (const Resident& r : resident_) {
        if (r.group != keep) {
          v = r.group;
          break;
        }
      }
    }
    return v;
  }
  std::uint32_t g = tail_;
  if (g == keep) g = groups_[g].prev;
  if (g != kNone && g == tail_) prefetch_next_victims(groups_[g].prev);
  return g;
}

template <class OnEvict>
void GroupCache::evict_lru(std::uint32_t keep, OnEvict&& on_evict) {
  const std::uint32_t v = victim(keep);
  if (v != kNone) evict(v, on_evict);
}

template <class OnEvict>
void GroupCache::evict(std::uint32_t g, OnEvict&& on_evict) {
  Group& v = groups_[g];
  if (v.dirty) on_evict(v.key(), shape_of(v), v.dirty);
  used_units_ -= count_units(v.valid);
  if (fills_) due_ -= static_cast<std::int64_t>(count_units(line_firsts(v.valid)));
  if (sets_ > 1) count_in_sets(g, v.valid, -1);
  if (sample_) {  // out of the dense list: the last entry takes its place
    const Resident last = resident_.back();
    resident_[pos_[g]] = last;
    pos_[last.group] = pos_[g];
    resident_.pop_back();
  } else {
    unlink(g);
  }
  erase_slot(v.key());
  v.valid = v.dirty = 0;
  free_.push_back(g);
  --count_;
}

template <class OnEvict>
void GroupCache::fit_sets(std::uint32_t keep, std::uint64_t added, OnEvict&& on_evict) {
  count_in_sets(keep, added, +1);
  const auto fit = [&](std::uint32_t k) {
    // The least recently used groups first; each holds units of set k or is passed over.
    for (std::uint32_t g = tail_; used_in_set_[k] > set_capacity_units_ && g != kNone;) {
      const std::uint32_t prev = groups_[g].prev;
      if (g != keep && (groups_[g].valid & set_units(g)[k])) evict(g, on_evict);
      g = prev;
    }
  };
  const std::uint64_t* m = set_units(keep);
  for_each_set(m, sets_, [&](std::uint32_t k) {
    if (added & m[k]) fit(k);
  });
}

template <class OnEvict>
std::uint64_t GroupCache::access(std::uint64_t key, const GroupShape& shape, std::uint64_t mask, std::uint64_t fill,
                                 std::uint64_t dirty, OnEvict&& on_evict) {
  std::uint64_t slot = slot_for(key);
  std::uint32_t g = table_[slot];
  if (g == kNone) {
    if (fill == 0) return 0;
    if (key > kKeyMask) reject_key(key);  // before anything changes
    if (free_.empty()) {
      evict_lru(kNone, on_evict);
      slot = slot_for(key);  // the eviction moved entries of the table
    }
    g = insert_at(slot, key, shape);
    if (sets_ > 1) map_sets(g, key, shape);
    if (sample_) {
      pos_[g] = static_cast<std::uint32_t>(resident_.size());
      resident_.push_back(Resident{0, g});
    } else {
      push_front(g);
    }
  } else if (!sample_ && g != head_) {
    unlink(g);
    push_front(g);
  }
  if (sample_) {  // sampled victims go by the clock, not the list
    if (clock_ == ~std::uint32_t{0}) renumber_stamps();
    resident_[pos_[g]].stamp = ++clock_;
  }
  Group& e = groups_[g];
  const std::uint64_t hits = e.valid & mask;
  const std::uint64_t added = fill & ~e.valid;
  if (fills_ && added) due_ += static_cast<std::int64_t>(count_fills(key, shape, added, e.valid));
  e.valid |= fill;
  e.dirty |= dirty & e.valid;
  used_units_ += count_units(added);
  if (sets_ > 1 && added) fit_sets(g, added, on_evict);
  while (due_ > 0 && count_ > 1) evict_lru(g, on_evict);
  while (used_units_ > capacity_units_ && count_ > 1) evict_lru(g, on_evict);
  return hits;
}

template <class F>
void GroupCache::flush_and_invalidate(F&& f) {
  if (sample_) {  // most recently used first, as the list gives them
    order_.assign(resident_.begin(), resident_.end());
    std::sort(order_.begin(), order_.end(), [](const Resident& a, const Resident& b) { return a.stamp > b.stamp; });
    for (const Resident& r : order_) {
      const Group& e = groups_[r.group];
      if (e.dirty) f(e.key(), shape_of(e), e.dirty);
    }
  } else {
    for (std::uint32_t g = head_; g != kNone; g = groups_[g].next) {
      if (groups_[g].dirty) f(groups_[g].key(), shape_of(groups_[g]), groups_[g].dirty);
    }
  }
  invalidate();
}

}  // namespace attnsim::sim
