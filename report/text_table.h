// A minimal aligned text table for terminal reports.
#pragma once

#include <string>
#include <vector>

namespace attnsim::report {

// Rows of cells printed with each column padded to its widest cell.
class TextTable {
 public:
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Each line starts with `indent` spaces; columns are separated by two spaces.
  std::string render(int indent = 2) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

// printf-style number formatting with a fixed number of decimals.
std::string fixed(double v, int decimals);

}  // namespace attnsim::report
