// Splitting one CSV record into fields, header-only so the GPU harness (built by hipcc or nvcc,
// without attnsim's libraries) shares it with the measurements reader.
#pragma once

#include <string>
#include <vector>

namespace attnsim::report {

// Splits one CSV record; a quoted field may hold commas and doubled quotes; a '\r' is dropped.
inline std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        fields.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      fields.emplace_back();
    } else if (ch != '\r') {
      fields.back() += ch;
    }
  }
  return fields;
}

}  // namespace attnsim::report
