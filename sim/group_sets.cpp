#include "sim/group_sets.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attnsim::sim {

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

namespace {

// Group `key` of `shape`'s units in each set of a cache of `sets` sets indexed by (address / line)
// mod sets, into m: GroupSetMasks::of's words.
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

}  // namespace

GroupSetMasks::GroupSetMasks(std::uint32_t sets, std::uint32_t line_bytes)
    : sets_(sets),
      line_div_(std::max<std::uint32_t>(64, line_bytes)),
      period_div_(std::uint64_t{std::max<std::uint32_t>(64, line_bytes)} * std::max<std::uint32_t>(1, sets)),
      scratch_(std::size_t{sets} + 1, 0) {
  if (sets == 0) throw std::invalid_argument("GroupSetMasks: a cache has at least one set");
  if (line_bytes == 0 || line_bytes % 64 != 0) {
    throw std::invalid_argument("GroupSetMasks: the line must be a positive multiple of 64 B, not " +
                                std::to_string(line_bytes) + " B");
  }
}

const std::uint64_t* GroupSetMasks::of(std::uint64_t key, const GroupShape& shape) {
  // A unit's set depends on the key only through key mod the period: the sets of a shape at each
  // 64 B offset within the period are found once.
  if (key % 64 != 0) {
    find_group_sets(scratch_.data(), key, shape, sets_, line_div_);
    return scratch_.data();
  }
  const std::uint64_t offset = period_div_.mod(key);
  if (offset == last_offset_ && shape.stride == last_shape_.stride && shape.units_per_row == last_shape_.units_per_row) {
    return last_;
  }
  const std::size_t width = std::size_t{sets_} + 1;
  const std::uint64_t offsets = period_div_.value() / 64;
  const std::uint64_t entry = shapes_.index_of(shape) * offsets + offset / 64;
  if (entry >= ready_.size()) {
    ready_.resize((entry / offsets + 1) * offsets, 0);
    memo_.resize(ready_.size() * width, 0);
  }
  std::uint64_t* m = &memo_[entry * width];
  if (!ready_[entry]) {
    find_group_sets(m, key, shape, sets_, line_div_);
    ready_[entry] = 1;
  }
  last_shape_ = shape;
  last_offset_ = offset;
  last_ = m;
  return m;
}

std::uint64_t GroupSetMasks::state_bytes() const {
  return (memo_.capacity() + scratch_.capacity()) * sizeof(std::uint64_t) + ready_.capacity();
}

}  // namespace attnsim::sim
