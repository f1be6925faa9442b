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

  // A request of `bytes` arriving at `arrival`: when its last byte has been served.
  Tick serve(Tick arrival, std::uint64_t bytes) {
    std::size_t from = head_;
    return serve_from(from, arrival, bytes);
  }
  // n requests of `bytes` each, the i-th arriving at arrival_of(i), served in that order: returns
  // when the last byte of any of them has been served (0 for n = 0). The same reservations as n
  // calls of serve(); while the arrivals do not decrease, each walk resumes where the previous one
  // began.
  template <class ArrivalOf>
  Tick serve_series(std::uint32_t n, std::uint64_t bytes, ArrivalOf&& arrival_of) {
    Tick done = 0, last = 0;
    std::size_t from = head_;
    for (std::uint32_t i = 0; i < n; ++i) {
      const Tick arrival = arrival_of(i);
      if (arrival < last) from = head_;  // an earlier arrival: from the first reservation again
      last = arrival;
      done = std::max(done, serve_from(from, arrival, bytes));
    }
    return done;
  }

  // Forgets reservations that end by `now` (no later request arrives before it).
  // (They stay below head_ until enough have gathered to be worth moving the list for.)
  void prune(Tick now) {
    while (head_ < reserved_.size() && reserved_[head_].end <= now) ++head_;
    if (head_ == reserved_.size()) {
      reserved_.clear();
      head_ = 0;
    } else if (head_ >= kPrunedToErase) {
      reserved_.erase(reserved_.begin(), reserved_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  Tick busy() const { return busy_; }
  // When the last reservation ends (the arrival time from which a request is served at once).
  Tick free_at() const { return reserved_.size() == head_ ? 0 : reserved_.back().end; }

 private:
  struct Interval {
    Tick start = 0, end = 0;
  };
  // The first reservation from index `from` on that ends after t.
  std::size_t first_ending_after(std::size_t from, Tick t) const {
    std::size_t i = from;
    while (i < reserved_.size() && reserved_[i].end <= t) ++i;
    return i;
  }
  // serve(), given that every reservation before index `from` ends by `arrival`; leaves in `from`
  // an index with the same property for any later arrival. (A serve changes reservations only from
  // the one before the first ending after its arrival on: that one a merge may extend.)
  Tick serve_from(std::size_t& from, Tick arrival, std::uint64_t bytes) {
    Tick need = transfer_time(bytes, ps_per_byte_);
    busy_ += need;
    if (need == 0) return arrival;
    Tick t = arrival;
    std::size_t i = first_ending_after(from, t);
    from = i > head_ ? i - 1 : head_;
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
      i = first_ending_after(i > head_ ? i - 1 : head_, t);
      t = reserved_[i].end;
      ++i;
    }
    if (reserved_.size() > head_ && reserved_.back().end == t) {
      reserved_.back().end = t + need;
    } else {
      reserved_.push_back(Interval{t, t + need});
    }
    return t + need;
  }
  // Joins reservation i with its neighbours where they touch.
  void merge_around(std::size_t i) {
    if (i + 1 < reserved_.size() && reserved_[i].end >= reserved_[i + 1].start) {
      reserved_[i].end = std::max(reserved_[i].end, reserved_[i + 1].end);
      reserved_.erase(reserved_.begin() + static_cast<std::ptrdiff_t>(i + 1));
    }
    if (i > head_ && reserved_[i - 1].end >= reserved_[i].start) {
      reserved_[i - 1].end = std::max(reserved_[i - 1].end, reserved_[i].end);
      reserved_.erase(reserved_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  static constexpr std::size_t kPrunedToErase = 16;
  double ps_per_byte_ = 1;
  std::vector<Interval> reserved_;  // [head_, size): the reservations; before head_: pruned
  std::size_t head_ = 0;
  Tick busy_ = 0;
};

}  // namespace attnsim::sim
