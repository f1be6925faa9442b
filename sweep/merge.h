// Merging the results directories of a sweep's shards (job arrays) into one.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace attnsim::sweep {

struct MergeSummary {
  std::size_t points = 0;   // in the sweep
  std::size_t rows = 0;     // with a record in some directory
  std::size_t missing = 0;  // distinct points with no record anywhere
};

// Copies every point record of `dirs` into `out` and writes its manifest and results tables.
// Contract: throws arch::ConfigError naming the directory when one has no valid manifest or holds
// another sweep than the first (different points). `out` may be one of `dirs`.
MergeSummary merge_sweeps(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out);

}  // namespace attnsim::sweep
