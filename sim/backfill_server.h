// A fixed-rate resource whose requests may be presented out of time order: each is served in the
// free time after its arrival, around what is already reserved (the CU's LDS, which tile loads
// write when their data arrives, in the future of the operations issued meanwhile).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/bandwidth_server.h"
#include "sim/time.h"

namespace attnsim::sim {

// A resource of fixed rate that serves a request in the earliest free time at or after its arrival,
// split around the reservations of requests presented before it (a BandwidthServer would queue it
// behind the latest of them, even one that arrives later). Contract: after prune(now), no request
// arrives before `now`; the reservations are disjoint and sorted; serve returns when the request's
// last byte has been served. With requests presented in arrival order it is a BandwidthServer.
class BackfillServer {
 public:
  explicit BackfillServer(double bytes_per_second = 1) { set_rate(bytes_per_second); }
  void set_rate(double bytes_per_second) { ps_per_byte_ = 1e12 / bytes_per_second; }

  Tick serve(Tick arrival, std::uint64_t bytes) {
    Tick need = transfer_time(bytes, ps_per_byte_);
    busy_ += need;
    if (need == 0) return arrival;
    Tick t = arrival;
    std::size_t i = first_ending_after(t);
    while (i < reserved_.size()) {
      Interval& iv = reserved_[i];
      if (iv.start <= t) {  // inside a reservation: wait for its end
        t = iv.end;
        ++i;
        continue;
      }
      const Tick gap = iv.start - t;
      if (gap >= need) {  // fits before this reservation
        if (gap == need) {
          iv.start = t;
        } else {
          reserved_.insert(reserved_.begin() + static_cast<std::ptrdiff_t>(i), Interval{t, t + need});
        }
        merge_around(i);
        return t + need;
      }
      // Fill the gap entirely: this reservation now starts at t.
      need -= gap;
      iv.start = t;
      merge_around(i);
      i = first_ending_after(t);
      t = reserved_[i].end;
      ++i;
    }
    if (!reserved_.empty() && reserved_.back().end == t) {
      reserved_.back().end = t + need;
    } else {
      reserved_.push_back(Interval{t, t + need});
    }
    return t + need;
  }

  // Forgets reservations that end by `now` (no later request arrives before it).
  void prune(Tick now) {
    std::size_t n = 0;
    while (n < reserved_.size() && reserved_[n].end <= now) ++n;
    if (n > 0) reserved_.erase(reserved_.begin(), reserved_.begin() + static_cast<std::ptrdiff_t>(n));
  }

  Tick busy() const { return busy_; }
  // When the last reservation ends (the arrival time from which a request is served at once).
  Tick free_at() const { return reserved_.empty() ? 0 : reserved_.back().end; }

 private:
  struct Interval {
    Tick start = 0, end = 0;
  };
  std::size_t first_ending_after(Tick t) const {
    std::size_t i = 0;
    while (i < reserved_.size() && reserved_[i].end <= t) ++i;
    return i;
  }
  // Joins reservation i with its neighbours where they touch.
  void merge_around(std::size_t i) {
    if (i + 1 < reserved_.size() && reserved_[i].end >= reserved_[i + 1].start) {
      reserved_[i].end = std::max(reserved_[i].end, reserved_[i + 1].end);
      reserved_.erase(reserved_.begin() + static_cast<std::ptrdiff_t>(i + 1));
    }
    if (i > 0 && reserved_[i - 1].end >= reserved_[i].start) {
      reserved_[i - 1].end = std::max(reserved_[i - 1].end, reserved_[i].end);
      reserved_.erase(reserved_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  double ps_per_byte_ = 1;
  std::vector<Interval> reserved_;
  Tick busy_ = 0;
};

}  // namespace attnsim::sim
