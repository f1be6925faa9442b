// Which (query, key) pairs a problem's causal mask and sliding window allow, per row and per tile.
#pragma once

#include <cstdint>

#include "workloads/problem.h"

namespace attnsim::workloads {

// A half-open index range [first, last); empty when first >= last.
struct Range {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  bool empty() const { return first >= last; }
  std::uint64_t size() const { return empty() ? 0 : last - first; }
};

// How a tile of the score matrix relates to the mask.
enum class TileMask {
  empty,    // every pair masked: the tile is never generated
  full,     // every pair allowed and inside the sequences: no masking work
  partial,  // some pairs masked (diagonal or window edge) or the tile overhangs a sequence end
};

// The allowed band of the score matrix. Allowed keys of each row form one interval whose ends
// never decrease with the row, which makes every query below a closed form.
class Mask {
 public:
  explicit Mask(const Problem& p);

  bool allowed(std::uint64_t q, std::uint64_t k) const;
  Range keys_of(std::uint64_t q) const;     // keys query q attends to, within [0, seqlen_k)
  Range queries_of(std::uint64_t k) const;  // queries that attend to key k, within [0, seqlen_q)

  // Tile rows [q0, q0 + bm) x keys [k0, k0 + bn); the tile may overhang the sequence ends.
  TileMask classify(std::uint64_t q0, std::uint64_t bm, std::uint64_t k0, std::uint64_t bn) const;

  // The key blocks of size bn (block indices) whose tiles with the rows [q0, q0 + bm) classify as
  // full: one range, since a row's allowed keys move right with the row (empty when none is).
  Range full_key_blocks(std::uint64_t q0, std::uint64_t bm, std::uint64_t bn) const;
  // The query blocks of size bm whose tiles with the keys [k0, k0 + bn) classify as full.
  Range full_query_blocks(std::uint64_t k0, std::uint64_t bn, std::uint64_t bm) const;

  // Key blocks of size bn that a query block [q0, q0 + bm) visits (not wholly masked), as block indices.
  Range key_blocks(std::uint64_t q0, std::uint64_t bm, std::uint64_t bn) const;
  // Query blocks of size bm that a key block [k0, k0 + bn) visits, as block indices.
  Range query_blocks(std::uint64_t k0, std::uint64_t bn, std::uint64_t bm) const;

  bool is_dense() const { return !causal_ && !window_; }  // no masking at all

 private:
  std::int64_t lo(std::int64_t q) const;  // first allowed key of row q (may be < 0)
  std::int64_t hi(std::int64_t q) const;  // last allowed key of row q (may be >= seqlen_k)

  std::int64_t nq_, nk_, offset_, left_, right_;
  bool causal_, window_;
};

}  // namespace attnsim::workloads
