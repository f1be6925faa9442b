// Timing of cache-line requests through the memory hierarchy: L2 channels per XCD, the L2-to-fabric
// links, the memory-side cache (MALL) channels and the HBM channels, each a bandwidth server, with
// the configured added latency of each level.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "arch/gpu_spec.h"
#include "sim/cache.h"
#include "sim/time.h"

namespace attnsim::sim {

// A resource that serves requests in arrival order at a fixed rate (a channel, a link).
class BandwidthServer {
 public:
  explicit BandwidthServer(double bytes_per_second = 1) : ps_per_byte_(1e12 / bytes_per_second) {}
  // Time the request's last byte has passed the server.
  Tick serve(Tick arrival, std::uint64_t bytes) {
    const Tick start = std::max(arrival, free_);
    free_ = start + static_cast<Tick>(static_cast<double>(bytes) * ps_per_byte_ + 0.5);
    busy_ += free_ - start;
    return free_;
  }
  Tick busy() const { return busy_; }

 private:
  double ps_per_byte_;
  Tick free_ = 0;
  Tick busy_ = 0;
};

// Where a read was served.
enum class ServedBy : std::uint8_t { l2, mall, hbm };

// The path of one L2 line request. Contract: requests must be issued in non-decreasing arrival
// order per server for the queueing to be exact (the event engine guarantees it; the
// microbenchmarks issue in time order). Deterministic.
class MemoryPath {
 public:
  MemoryPath(const arch::GpuSpec& gpu, double engine_hz);

  // A CU on `xcd` reads the L2 line at `address` (issued at `t`): the time the data is back.
  Tick read_line(std::uint32_t xcd, std::uint64_t address, Tick t, ServedBy* served = nullptr);
  // A CU writes a whole line: the time the L2 has accepted it (writes are posted), or, when the
  // allocation evicts a dirty line, the time that line's write-back has been served.
  Tick write_line(std::uint32_t xcd, std::uint64_t address, Tick t);

  std::uint32_t l2_channel(std::uint64_t address) const;
  std::uint32_t mall_channel(std::uint64_t address) const;
  std::uint32_t hbm_channel(std::uint64_t address) const;
  std::uint32_t line_bytes() const { return line_; }

  // Kernel end: writes back every dirty L2 line from `t` on; returns when the last is served.
  Tick flush(Tick t);

  // Busy time of the HBM channels, summed (for bandwidth utilisation).
  Tick hbm_busy() const;

 private:
  Tick write_back(std::uint32_t xcd, std::uint64_t line_address, Tick t);

  const arch::GpuSpec& gpu_;
  Clock engine_;
  std::uint32_t line_;
  Tick l1_latency_, l2_latency_, mall_latency_, hbm_latency_;
  std::vector<std::unique_ptr<SetAssocCache>> l2_;
  std::unique_ptr<SetAssocCache> mall_;
  std::vector<BandwidthServer> l2_read_, l2_write_, link_, mall_ch_, hbm_ch_;  // l2_*, link_: xcd x channel
};

}  // namespace attnsim::sim
