// The write side of the HBM memory controllers: each channel's write queue, acknowledged on
// acceptance and drained in bursts between runs of reads, paying the bus turnaround per switch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/bandwidth_server.h"
#include "sim/time.h"

namespace attnsim::sim {

// Contract: accept() returns when channel `ch`'s controller accepts a write of `bytes` arriving at
// `arrival`, and the turnaround time to charge the channel with it. The queue holds `entries`
// writes; an entry frees when its write has drained, the channel's writes draining in order at
// the channel's rate as a controller drains a full queue ahead of reads (the reads still see the
// writes' time: the caller books it on the channel). The turnaround is charged once per
// `burst_bytes` written, and only when the channel served reads since the previous charge:
// `channel_bytes` is every byte the channel served before this write, read or written, of which
// this queue knows its own writes. A channel that only writes, or only reads, never switches.
// Deterministic; no allocation after construction.
class HbmWriteQueues {
 public:
  struct Accepted {
    Tick at = 0;          // the controller has accepted the write (and acknowledges it)
    Tick turnaround = 0;  // bus time the channel loses to a read/write switch pair, 0 or the configured time
  };
  HbmWriteQueues() = default;
  HbmWriteQueues(std::size_t channels, std::size_t entries, double bytes_per_second, std::uint64_t burst_bytes,
                 Tick turnaround)
      : entries_(std::max<std::size_t>(1, entries)),
        burst_(std::max<std::uint64_t>(1, burst_bytes)),
        turnaround_(turnaround),
        drained_(channels * entries_, 0),
        channels_(channels, Channel{0, BandwidthServer(bytes_per_second), 0, 0}) {}

  Accepted accept(std::uint32_t ch, Tick arrival, std::uint64_t bytes, double channel_bytes) {
    Channel& c = channels_[ch];
    Tick& entry = drained_[ch * entries_ + c.next];
    if (++c.next == entries_) c.next = 0;
    Accepted a;
    a.at = std::max(arrival, entry);  // the write `entries` places back has drained
    const double reads = channel_bytes - static_cast<double>(c.drain.bytes());  // bytes not written here
    entry = c.drain.serve(a.at, bytes);
    c.pending += bytes;
    if (c.pending >= burst_) {
      c.pending -= burst_;
      if (reads > c.reads_at_switch) {
        a.turnaround = turnaround_;
        c.reads_at_switch = reads;
      }
    }
    return a;
  }

 private:
  // One channel's controller, together so that a write touches one host cache line (beside its entry).
  struct Channel {
    std::size_t next = 0;          // the entry the next write takes
    BandwidthServer drain;         // its writes draining in order at its rate
    std::uint64_t pending = 0;     // bytes written since the last burst boundary
    double reads_at_switch = 0;    // other bytes it had served at its last switch
  };
  std::size_t entries_ = 1;
  std::uint64_t burst_ = 1;
  Tick turnaround_ = 0;
  std::vector<Tick> drained_;      // per channel and entry: when the entry's write has drained
  std::vector<Channel> channels_;
};

}  // namespace attnsim::sim
