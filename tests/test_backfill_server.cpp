// BackfillServer: requests served in the free time after their arrival, around earlier reservations.
// Hand cases at 1 byte per ps (1e12 B/s), so a request of n bytes needs n ps.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "sim/backfill_server.h"
#include "sim/bandwidth_server.h"

using attnsim::sim::BackfillServer;
using attnsim::sim::BandwidthServer;
using attnsim::sim::Tick;

TEST_CASE("presented in arrival order the backfill server is a first-come first-served server") {
  BackfillServer b(1e12);
  BandwidthServer f(1e12);
  const Tick arrivals[] = {0, 5, 5, 40, 41, 100, 100};
  const std::uint64_t sizes[] = {10, 3, 20, 1, 7, 0, 50};
  for (int i = 0; i < 7; ++i) {
    CAPTURE(i);
    CHECK(b.serve(arrivals[i], sizes[i]) == (sizes[i] ? f.serve(arrivals[i], sizes[i]) : arrivals[i]));
  }
  CHECK(b.busy() == f.busy());
}

TEST_CASE("a request arriving before a later reservation fills the gaps in front of it") {
  BackfillServer b(1e12);
  CHECK(b.serve(100, 50) == 150);  // a tile load's LDS write, reserved ahead: [100, 150)
  CHECK(b.serve(0, 30) == 30);     // arrives first: served at once, [0, 30), not after 150
  CHECK(b.serve(20, 70) == 100);   // waits for 30, then exactly fills [30, 100)
  CHECK(b.serve(20, 80) == 230);   // no gap left before 150
  CHECK(b.free_at() == 230);
  CHECK(b.busy() == 50 + 30 + 70 + 80);
}

TEST_CASE("a request larger than a gap is split around the reservation after it") {
  BackfillServer b(1e12);
  CHECK(b.serve(0, 10) == 10);
  CHECK(b.serve(20, 10) == 30);  // [0, 10) and [20, 30)
  CHECK(b.serve(0, 15) == 35);   // 10 ps in [10, 20), the other 5 after 30
  b.prune(35);                   // nothing arrives before 35 any more
  CHECK(b.free_at() == 0);
  CHECK(b.serve(40, 5) == 45);
}

namespace {
// The reference: a timeline of picoseconds, each free or taken; a request takes the first `bytes`
// free picoseconds at or after its arrival (at 1 byte per ps) and ends after the last of them.
struct Timeline {
  std::vector<bool> taken = std::vector<bool>(1 << 16, false);
  Tick serve(Tick arrival, std::uint64_t bytes) {
    Tick t = arrival;
    for (std::uint64_t left = bytes; left > 0; ++t) {
      if (taken[static_cast<std::size_t>(t)]) continue;
      taken[static_cast<std::size_t>(t)] = true;
      --left;
    }
    return t;
  }
};
}  // namespace

TEST_CASE("the backfill server takes the first free time after each arrival alone or in a series") {
  // Random requests around reservations made ahead of them, pruned as time advances, checked
  // against a timeline of picoseconds; series of n requests (serve_series) against the same.
  std::mt19937_64 rng(7);
  for (int run = 0; run < 50; ++run) {
    CAPTURE(run);
    BackfillServer b(1e12);
    Timeline ref;
    Tick now = 0;
    for (int step = 0; step < 200; ++step) {
      CAPTURE(step);
      if (rng() % 4 == 0) {
        now += static_cast<Tick>(rng() % 40);
        b.prune(now);
      }
      const Tick arrival = now + 300 + static_cast<Tick>(rng() % 120);
      const std::uint64_t bytes = rng() % 30;
      if (rng() % 2 == 0) {
        REQUIRE(b.serve(arrival, bytes) == (bytes ? ref.serve(arrival, bytes) : arrival));
        continue;
      }
      const auto n = static_cast<std::uint32_t>(1 + rng() % 8);
      // Mostly increasing arrivals (as the engine presents them), sometimes decreasing ones.
      const Tick stretch = rng() % 4 == 0 ? -static_cast<Tick>(rng() % 40) : static_cast<Tick>(rng() % 25);
      Tick expected = 0;
      for (std::uint32_t i = 0; i < n; ++i) {
        expected = std::max(expected, bytes ? ref.serve(arrival + i * stretch, bytes) : arrival + i * stretch);
      }
      REQUIRE(b.serve_series(n, bytes, [&](std::uint32_t i) { return arrival + i * stretch; }) == expected);
    }
  }
}
