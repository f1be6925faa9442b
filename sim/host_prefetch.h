// A software prefetch into the host's caches that the optimiser keeps: GCC 12 deletes
// __builtin_prefetch calls as dead code once they are inlined into callers that use no result.
#pragma once

namespace attnsim::sim {

// Hints that the 64 B host line holding `p` is about to be read. No effect on results; never faults.
inline void prefetch_host_line(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace attnsim::sim
