#include "sim/set_index_map.h"

#include <stdexcept>
#include <string>

namespace attnsim::sim {

SetIndexMap::SetIndexMap(std::uint64_t sets, SetIndex index, std::uint32_t step, std::uint64_t prime)
    : step_(step), prime_(prime), hashed_(index == SetIndex::hashed) {
  if (sets == 0) throw std::invalid_argument("set index: a cache has at least one set");
  if (step == 0 || (step & (step - 1)) != 0 || sets % step != 0) {
    throw std::invalid_argument("set index: the displacement step must be a power of two dividing the sets, not " +
                                std::to_string(step));
  }
  if (prime % 2 == 0 || prime >= (std::uint64_t{1} << 32)) {
    throw std::invalid_argument("set index: the hashed index's multiplier must be odd and below 2^32, not " +
                                std::to_string(prime));
  }
  sets_ = Divisor(sets);
  displacement_div_ = Divisor(sets / step);
}

}  // namespace attnsim::sim
