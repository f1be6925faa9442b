#include "sim/set_fill_counts.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attnsim::sim {

SetFillCounts::SetFillCounts(const SetIndexMap& map, std::uint32_t ways)
    : map_(map), ways_(static_cast<std::uint16_t>(ways)), filled_(map.sets(), 0) {
  if (ways == 0 || ways > 65535) {
    throw std::invalid_argument("set fill counts: 1 to 65535 ways, not " + std::to_string(ways));
  }
}

void SetFillCounts::clear() {
  std::fill(filled_.begin(), filled_.end(), std::uint16_t{0});
  full_sets_ = 0;
}

}  // namespace attnsim::sim
