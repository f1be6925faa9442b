// Tag state of a small, highly associative LRU cache (a CU's L1): each set keeps its tags in
// recency order in a ring, so a miss replaces the least recently used tag in constant time; each
// line keeps which of its parts (up to 8, e.g. 64 B units of a 128 B line) are valid.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "sim/divisor.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace attnsim::sim {

// Contract: exact LRU per set, as SetAssocCache with SetIndex::modulo (line mod sets; tag
// line / sets) and read allocation: for accesses of whole lines, the same hits for the same
// sequence of lines. An access names the parts of the line it touches; it hits when the line is
// present with all of them valid; either way the line becomes the most recently used of its set
// and those parts valid (a line not present replaces the least recently used one, with only them
// valid). A set's ring runs from its most recently used tag (at `head`) to its least recently used
// one. Empty ways hold kEmpty, which no line's tag equals. Deterministic; no allocation after
// construction.
// A set of 96 ways or more also counts its tags by an 11-bit key (a byte per key, saturating: a
// count that reached 255 stays there), so that a lookup whose key no tag of the set has misses
// without searching the set (most lookups of a wide L1 miss: an H200 set holds 56 to 512 ways).
class LruRing {
 public:
  LruRing(std::uint64_t size_bytes, std::uint32_t ways, std::uint32_t line_bytes)
      : ways_(ways), line_div_(line_bytes), sets_(size_bytes / (std::uint64_t{ways} * line_bytes)) {
    if (ways == 0 || sets_ == 0 || size_bytes % (std::uint64_t{ways} * line_bytes) != 0) {
      throw std::invalid_argument("LruRing: the size must be a positive multiple of ways x line");
    }
    set_div_ = Divisor(sets_);
    tags_.assign(sets_ * ways_, kEmpty);
    sigs_.assign(sets_ * ways_ + kSigPad, signature(kEmpty));
    parts_.assign(sets_ * ways_, 0);
    head_.assign(sets_, 0);
    if (ways_ >= kFilterMinWays) keys_.assign(sets_ << kKeyBits, 0);
  }

  // Looks up the line holding `address` for the parts `parts` (a bit per part); allocates it on a
  // miss. Returns true on a hit (present, every part valid).
  bool access(std::uint64_t address, std::uint8_t parts = 1) {
    const Lookup l = lookup(address, parts);
    return l.present && l.valid == parts;
  }
  // The same access: returns the parts of `parts` that were valid (0 when the line was absent).
  std::uint8_t access_parts(std::uint64_t address, std::uint8_t parts) { return lookup(address, parts).valid; }
  void invalidate() {
    std::fill(tags_.begin(), tags_.end(), kEmpty);
    std::fill(sigs_.begin(), sigs_.end(), signature(kEmpty));
    std::fill(parts_.begin(), parts_.end(), 0);
    std::fill(head_.begin(), head_.end(), 0);
    std::fill(keys_.begin(), keys_.end(), 0);
  }
  // The presence filter's key of a tag (public for tests): the top bits of a multiplicative hash.
  static constexpr std::uint32_t kFilterMinWays = 96, kKeyBits = 11;
  static std::uint32_t key(std::uint32_t tag) { return (tag * 0x9E3779B1u) >> (32 - kKeyBits); }
  std::uint64_t state_bytes() const { return tags_.size() * 6 + head_.size() * sizeof(std::uint32_t) + keys_.size(); }
  // state_bytes() of an LruRing of this geometry (valid arguments), before it is built. Pure.
  static std::uint64_t state_bytes_for(std::uint64_t size_bytes, std::uint32_t ways, std::uint32_t line_bytes) {
    const std::uint64_t sets = size_bytes / (std::uint64_t{ways} * line_bytes);
    return sets * ways * 6 + sets * sizeof(std::uint32_t) + (ways >= kFilterMinWays ? sets << kKeyBits : 0);
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
  // Bytes after the last set's signatures, so that a 16-byte load at any way stays in the vector.
  static constexpr std::size_t kSigPad = 15;
  // A byte of the tag's bits, kept per way beside the tag: a lookup of a set of 16 ways or more
  // compares 16 ways' bytes at a time and checks the full tag only where the byte matches (a miss in
  // a 64-way set is 4 compares instead of 16). Any function works; this one mixes the low bits
  // consecutive lines differ in.
  static std::uint8_t signature(std::uint32_t tag) { return static_cast<std::uint8_t>(tag ^ (tag >> 8) ^ (tag >> 16) ^ (tag >> 24)); }
  // The presence filter of wide sets: a count of the set's tags per key, 255 meaning "255 or more"
  // for good.
  static void count(std::uint8_t& c) { c = static_cast<std::uint8_t>(c + (c < 255)); }
  static void uncount(std::uint8_t& c) { c = static_cast<std::uint8_t>(c - (c < 255)); }

  // What an access found: whether the line was present, and which of the parts asked for were valid.
  struct Lookup {
    bool present = false;
    std::uint8_t valid = 0;
  };
  Lookup lookup(std::uint64_t address, std::uint8_t parts) {
    const std::uint64_t line = line_div_.div(address);
    const std::uint64_t tag = set_div_.div(line);
    if (tag >= kEmpty) throw std::out_of_range("address beyond the L1 model's tag range");
    const std::uint64_t set = set_div_.mod(line);
    return ways_ >= kFilterMinWays ? access_filtered(set, static_cast<std::uint32_t>(tag), parts)
                                   : access_set<false>(set, static_cast<std::uint32_t>(tag), parts);
  }
  // The filtered copy out of line, so that the plain one (narrow sets: the MI300X's 64 ways) keeps
  // the code it had before the filter.
  [[gnu::noinline]] Lookup access_filtered(std::uint64_t set, std::uint32_t tag, std::uint8_t parts) {
    return access_set<true>(set, tag, parts);
  }
  // The access in set `set`, with or without the presence filter (one copy each, no test per step).
  template <bool Filtered>
  Lookup access_set(std::uint64_t set, std::uint32_t tag, std::uint8_t parts) {
    std::uint32_t* tags = &tags_[set * ways_];
    std::uint8_t* sigs = &sigs_[set * ways_];
    std::uint8_t* valid = &parts_[set * ways_];
    std::uint32_t& head = head_[set];
    std::uint8_t* counts = Filtered ? &keys_[set << kKeyBits] : nullptr;
    const std::uint32_t p = Filtered && counts[key(tag)] == 0 ? ways_ : find(tags, sigs, tag);
    if (p == ways_) {  // the least recently used way sits just behind the head
      head = head == 0 ? ways_ - 1 : head - 1;
      if constexpr (Filtered) {
        if (tags[head] != kEmpty) uncount(counts[key(tags[head])]);
        count(counts[key(tag)]);
      }
      tags[head] = tag;
      sigs[head] = signature(tag);
      valid[head] = parts;
      return Lookup{};
    }
    const Lookup hit{true, static_cast<std::uint8_t>(valid[p] & parts)};
    const std::uint8_t now_valid = valid[p] | parts;
    // The tags from the head to p move one place toward the old end; p's line becomes the head.
    for (std::uint32_t i = p; i != head;) {
      const std::uint32_t prev = i == 0 ? ways_ - 1 : i - 1;
      tags[i] = tags[prev];
      sigs[i] = sigs[prev];
      valid[i] = valid[prev];
      i = prev;
    }
    tags[head] = tag;
    sigs[head] = signature(tag);
    valid[head] = now_valid;
    return hit;
  }

  // The way holding `tag`, or ways_.
  std::uint32_t find(const std::uint32_t* tags, const std::uint8_t* sigs, std::uint32_t tag) const {
#if defined(__SSE2__)
    if (ways_ >= 16) {
      const __m128i key = _mm_set1_epi8(static_cast<char>(signature(tag)));
      for (std::uint32_t k = 0; k < ways_; k += 16) {
        auto m = static_cast<unsigned>(
            _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sigs + k)), key)));
        // A last group of fewer than 16 ways read the next set's bytes (or the padding): drop them.
        if (ways_ - k < 16) m &= (1u << (ways_ - k)) - 1;
        while (m) {
          const std::uint32_t w = k + static_cast<std::uint32_t>(__builtin_ctz(m));
          if (tags[w] == tag) return w;
          m &= m - 1;
        }
      }
      return ways_;
    }
    if (ways_ % 4 == 0) {
      const __m128i key = _mm_set1_epi32(static_cast<int>(tag));
      for (std::uint32_t k = 0; k < ways_; k += 4) {
        const int m = _mm_movemask_ps(_mm_castsi128_ps(
            _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tags + k)), key)));
        if (m) return k + static_cast<std::uint32_t>(__builtin_ctz(static_cast<unsigned>(m)));
      }
      return ways_;
    }
#endif
    for (std::uint32_t i = 0; i < ways_; ++i) {
      if (tags[i] == tag) return i;
    }
    return ways_;
  }

  std::uint32_t ways_;
  Divisor line_div_;
  std::uint64_t sets_;
  Divisor set_div_;
  std::vector<std::uint32_t> tags_;  // per set: `ways` tags, a ring in recency order
  std::vector<std::uint8_t> sigs_;   // per way: signature(tag), the ring's order
  std::vector<std::uint8_t> parts_;  // per way: the line's valid parts
  std::vector<std::uint32_t> head_;  // per set: the way of the most recently used tag
  std::vector<std::uint8_t> keys_;   // per set of kFilterMinWays ways or more: 2^kKeyBits tag counts
};

}  // namespace attnsim::sim
