// BackfillServer: requests served in the free time after their arrival, around earlier reservations.
// Hand cases at 1 byte per ps (1e12 B/s), so a request of n bytes needs n ps.
#include <doctest/doctest.h>

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
