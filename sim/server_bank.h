// A bank of equal first-come, first-served channels (the MALL's or HBM's) that can also serve a
// batch spread evenly over all of them in constant time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/bandwidth_server.h"

namespace attnsim::sim {

// `channels` servers of `bytes_per_second` each. Contract: serve(ch, ...) times channel `ch` exactly
// as a BandwidthServer would; serve_each(t, bytes) is the same as serving bytes / channels on every
// channel at `t` (the per-channel time rounded once, to the nearest picosecond) and returns when the
// last channel is through, in constant time. busy() sums every channel's busy time; busy(ch) and
// bytes(ch) are channel ch's own (its share of every even spread included).
//
// How: channel ch is free at max(own[ch] + shift, floor). Serving d on every channel at t makes
// each max(t, free) + d = max(own[ch] + shift + d, max(t, floor) + d), so it adds d to `shift` and
// sets `floor` to max(t, floor) + d without visiting the channels.
class ServerBank {
 public:
  ServerBank() = default;
  ServerBank(std::size_t channels, double bytes_per_second) : channels_(channels), ps_per_byte_(1e12 / bytes_per_second) {}

  std::size_t size() const { return channels_.size(); }
  Tick free_at(std::uint32_t ch) const { return free_at(channels_[ch]); }
  // `extra`: time the channel loses beyond the bytes' transfer (a bus turnaround), busy but no bytes.
  Tick serve(std::uint32_t ch, Tick arrival, std::uint64_t bytes, Tick extra = 0) {
    const Tick d = transfer_time(bytes, ps_per_byte_) + extra;
    Channel& c = channels_[ch];
    const Tick end = std::max(arrival, free_at(c)) + d;
    c.own = end - shift_;
    max_own_ = std::max(max_own_, c.own);
    c.busy += d;
    c.bytes += bytes;
    return end;
  }
  Tick serve_each(Tick arrival, std::uint64_t bytes) {
    const Tick d = transfer_time(bytes, ps_per_byte_ / static_cast<double>(channels_.size()));
    shift_ += d;
    floor_ = std::max(arrival, floor_) + d;
    each_busy_ += d;
    each_bytes_ += bytes;
    each_share_ = static_cast<double>(each_bytes_) / static_cast<double>(channels_.size());
    return std::max(max_own_ + shift_, floor_);
  }
  Tick busy() const {
    Tick sum = each_busy_ * static_cast<Tick>(channels_.size());
    for (const Channel& c : channels_) sum += c.busy;
    return sum;
  }
  Tick busy(std::uint32_t ch) const { return channels_[ch].busy + each_busy_; }
  double bytes(std::uint32_t ch) const {
    return static_cast<double>(channels_[ch].bytes) + each_share_;
  }

 private:
  // One channel's state, together so that a serve touches one host cache line.
  struct Channel {
    Tick own = 0;             // free time, less shift_
    Tick busy = 0;            // busy time from serve()
    std::uint64_t bytes = 0;  // and bytes
  };
  Tick free_at(const Channel& c) const { return std::max(c.own + shift_, floor_); }
  std::vector<Channel> channels_;
  Tick shift_ = 0, floor_ = 0, max_own_ = 0;
  Tick each_busy_ = 0;                     // every channel's busy time from serve_each()
  std::uint64_t each_bytes_ = 0;           // bytes spread evenly by serve_each()
  double each_share_ = 0;                  // each channel's share of them
  double ps_per_byte_ = 1;
};

}  // namespace attnsim::sim
