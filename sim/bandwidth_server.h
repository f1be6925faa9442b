// A first-come, first-served resource of fixed rate (a channel, a link, a pipe).
#pragma once

#include <algorithm>
#include <cstdint>

#include "sim/time.h"

namespace attnsim::sim {

// The time `bytes` (below 2^63) take at `ps_per_byte`, rounded to the nearest picosecond. The
// bytes convert as a signed integer: the same value, in one instruction where an unsigned one
// takes a branch.
inline Tick transfer_time(std::uint64_t bytes, double ps_per_byte) {
  return static_cast<Tick>(static_cast<double>(static_cast<std::int64_t>(bytes)) * ps_per_byte + 0.5);
}

// A resource that serves requests in the order they are presented, at a fixed rate (a channel,
// a link, a pipe).
class BandwidthServer {
 public:
  explicit BandwidthServer(double bytes_per_second = 1) { set_rate(bytes_per_second); }
  void set_rate(double bytes_per_second) { ps_per_byte_ = 1e12 / bytes_per_second; }
  // Time the request's last byte has passed the server.
  Tick serve(Tick arrival, std::uint64_t bytes) {
    const Tick start = std::max(arrival, free_);
    free_ = start + transfer_time(bytes, ps_per_byte_);
    busy_ += free_ - start;
    bytes_ += bytes;
    return free_;
  }
  Tick busy() const { return busy_; }
  std::uint64_t bytes() const { return bytes_; }  // served so far
  Tick free_at() const { return free_; }

 private:
  double ps_per_byte_ = 1;
  Tick free_ = 0;
  Tick busy_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace attnsim::sim
