// Peak resident memory of the benchmark process, for the memory targets.
#pragma once

#include <fstream>
#include <string>

namespace attnsim::bench {

// VmHWM from /proc/self/status in KiB; -1 where it cannot be read.
inline long peak_rss_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace attnsim::bench
