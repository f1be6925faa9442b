// The set a line falls in in a set-associative cache: modulo, or displaced by a hash of the line's
// tag (SetAssocCache's map, and the approximate mode's for the sets it keeps no tags of).
#pragma once

#include <cstdint>

#include "sim/divisor.h"

namespace attnsim::sim {

// How a line's set is found.
enum class SetIndex : std::uint8_t {
  modulo,  // line mod sets
  hashed,  // line mod sets, displaced by a hash of the tag (the bits above the index)
};

// Contract: set_of(line) = line mod sets, plus for SetIndex::hashed step x ((line / sets) x prime
// mod (sets / step)), mod sets (a line here is the unit a set holds: SetAssocCache's line, or its
// granule; a line cache that displaces by multiples of g lines is the map of sets and step g, a
// granular one of granule g the map of sets / g and step 1). sets > 0, step a power of two dividing sets, prime odd and below 2^32 (else
// std::invalid_argument). Pure.
class SetIndexMap {
 public:
  SetIndexMap() = default;  // one set, modulo
  SetIndexMap(std::uint64_t sets, SetIndex index, std::uint32_t step, std::uint64_t prime);
  std::uint64_t set_of(std::uint64_t line) const {
    const std::uint64_t s = sets_.mod(line) + displacement(static_cast<std::uint32_t>(sets_.div(line)));
    return s >= sets_.value() ? s - sets_.value() : s;
  }
  // The line's tag (line / sets) and its set before displacement (line mod sets).
  std::uint64_t tag_of(std::uint64_t line) const { return sets_.div(line); }
  std::uint64_t undisplaced_set_of(std::uint64_t line) const { return sets_.mod(line); }
  // The sets by which the lines of tag `tag` (line / sets, in 32 bits) are displaced: below sets.
  std::uint64_t displacement(std::uint32_t tag) const {
    return hashed_ ? step_ * displacement_div_.mod(std::uint64_t{tag} * prime_) : 0;
  }
  // The lines from `line` on with its tag (line / sets): their sets follow set_of(line) in order,
  // wrapping after the last.
  std::uint64_t lines_to_next_tag(std::uint64_t line) const { return sets_.value() - sets_.mod(line); }
  std::uint64_t sets() const { return sets_.value(); }
  SetIndex index() const { return hashed_ ? SetIndex::hashed : SetIndex::modulo; }
  std::uint32_t step() const { return static_cast<std::uint32_t>(step_); }
  std::uint64_t prime() const { return prime_; }

 private:
  Divisor sets_, displacement_div_;
  std::uint64_t step_ = 1, prime_ = 1;
  bool hashed_ = false;
};

}  // namespace attnsim::sim
