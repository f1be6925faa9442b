// The bytes one batch of requests (a tile's memory operation) puts on each channel of one level,
// so that each channel serves the batch once instead of once per line.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/bandwidth_server.h"
#include "sim/server_bank.h"

namespace attnsim::sim {

// Per-channel byte totals of a batch. Contract: serve() serves each channel once with all its
// bytes (a spread's channels first, then the others in the order the batch first touched them:
// deterministic) and leaves the demand empty. Even bytes (add_even) are for a demand served on a
// ServerBank; a spread (add_spread) for one served on a vector of servers.
class ChannelDemand {
 public:
  void resize(std::size_t channels) {
    bytes_.assign(channels, 0);
    touched_.assign(channels, 0);  // a channel is listed at most once per batch
    n_touched_ = 0;
  }
  void add(std::uint32_t channel, std::uint64_t bytes) {
    if (bytes == 0) return;
    if (bytes_[channel] == 0) touched_[n_touched_++] = channel;
    bytes_[channel] += bytes;
  }
  // Bytes spread evenly over all the channels of a ServerBank (the approximate mode's memory side).
  void add_even(std::uint64_t bytes) { even_ += bytes; }
  // `bytes` spread over channels [first, first + count): bytes / count on each, and a byte more on
  // each of the first bytes % count. One range per batch (a batch has one L2 instance).
  void add_spread(std::uint32_t first, std::uint32_t count, std::uint64_t bytes) {
    if (bytes == 0) return;
    spread_first_ = first;
    spread_count_ = count;
    spread_bytes_ += bytes;
  }
  bool empty() const { return n_touched_ == 0 && even_ == 0 && spread_bytes_ == 0; }
  // Multiplies every channel's demand by `k` (requests that each take a whole sector's slot for a
  // k-th of its bytes).
  void scale(std::uint32_t k) {
    for (std::uint32_t i = 0; i < n_touched_; ++i) bytes_[touched_[i]] *= k;
    even_ *= k;
    spread_bytes_ *= k;
  }
  // Serves each touched channel's bytes on servers[channel], all arriving at `t`; returns when the
  // last of them is served (`t` when the batch touched none).
  Tick serve(std::vector<BandwidthServer>& servers, Tick t) {
    Tick end = t;
    if (spread_bytes_) {
      // The spread's channels with their own bytes, once each (then the touched list skips them).
      const std::uint64_t each = spread_bytes_ / spread_count_, extra = spread_bytes_ % spread_count_;
      for (std::uint32_t k = 0; k < spread_count_; ++k) {
        const std::uint32_t ch = spread_first_ + k;
        end = std::max(end, servers[ch].serve(t, bytes_[ch] + each + (k < extra)));
        bytes_[ch] = 0;
      }
      spread_bytes_ = 0;
    }
    for (std::uint32_t i = 0; i < n_touched_; ++i) {
      const std::uint32_t ch = touched_[i];
      if (bytes_[ch] == 0) continue;  // served with the spread
      end = std::max(end, servers[ch].serve(t, bytes_[ch]));
      bytes_[ch] = 0;
    }
    n_touched_ = 0;
    return end;
  }
  // The same on a bank: the even bytes first (one pass over no channel), then each touched channel.
  Tick serve(ServerBank& bank, Tick t) {
    Tick end = t;
    if (even_) end = bank.serve_each(t, even_);
    even_ = 0;
    for (std::uint32_t i = 0; i < n_touched_; ++i) {
      const std::uint32_t ch = touched_[i];
      end = std::max(end, bank.serve(ch, t, bytes_[ch]));
      bytes_[ch] = 0;
    }
    n_touched_ = 0;
    return end;
  }

 private:
  std::vector<std::uint64_t> bytes_;
  std::vector<std::uint32_t> touched_;  // the first n_touched_ entries: channels in first-touch order
  std::uint32_t n_touched_ = 0;
  std::uint64_t even_ = 0;
  std::uint32_t spread_first_ = 0, spread_count_ = 1;
  std::uint64_t spread_bytes_ = 0;
};

}  // namespace attnsim::sim
