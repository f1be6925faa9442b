// The event queue's ordering contract and the stats registry.
#include <doctest/doctest.h>

#include <set>
#include <stdexcept>
#include <tuple>

#include "sim/event_queue.h"
#include "sim/stats.h"
#include "sim/time.h"

using namespace attnsim::sim;

TEST_CASE("events pop in time then priority then sequence order") {
  EventQueue q;
  q.schedule(100, 1, 0, 1);
  q.schedule(50, 5, 0, 2);
  q.schedule(100, 0, 0, 3);
  q.schedule(100, 1, 0, 4);  // same time and priority as the first: after it (sequence)
  q.schedule(50, 5, 0, 5);
  std::vector<std::uint32_t> kinds;
  Event e;
  while (q.pop(e)) kinds.push_back(e.kind);
  CHECK(kinds == std::vector<std::uint32_t>{2, 5, 3, 1, 4});
  CHECK(q.now() == 100);
}

TEST_CASE("events at the present time keep the order after the heap's events of that time") {
  EventQueue q;
  q.schedule(5, 0, 0, 1);
  q.schedule(10, 0, 0, 2);
  q.schedule(10, 1, 0, 3);
  Event e;
  REQUIRE(q.pop(e));
  CHECK(e.kind == 1);
  q.schedule(10, 0, 0, 4);  // scheduled before time 10 is reached: after 2 (sequence), before 3
  REQUIRE(q.pop(e));
  CHECK(e.kind == 2);
  CHECK(q.now() == 10);
  q.schedule(10, 0, 0, 5);  // at the present time
  q.schedule(10, 2, 0, 6);
  q.schedule(10, 0, 0, 7);
  std::vector<std::uint32_t> kinds;
  while (q.pop(e)) kinds.push_back(e.kind);
  CHECK(kinds == std::vector<std::uint32_t>{4, 5, 7, 3, 6});
}

TEST_CASE("random schedules and pops come out in time then priority then sequence order") {
  // Against a reference: every pending event in an ordered set, the earliest taken each time.
  EventQueue q;
  std::set<std::tuple<Tick, std::uint32_t, std::uint64_t>> pending;
  std::uint64_t x = 12345, sequence = 0;
  const auto next = [&] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 33;
  };
  Event e;
  for (int i = 0; i < 20000; ++i) {
    if (next() % 3 != 0 || pending.empty()) {  // schedule, often at the present time
      const Tick t = q.now() + static_cast<Tick>(next() % 4 == 0 ? 0 : next() % 50);
      const auto priority = static_cast<std::uint32_t>(next() % 3);
      q.schedule(t, priority, 0, static_cast<std::uint32_t>(sequence));
      pending.emplace(t, priority, sequence++);
    } else {
      REQUIRE(q.pop(e));
      const auto [t, priority, seq] = *pending.begin();
      pending.erase(pending.begin());
      REQUIRE(e.time == t);
      REQUIRE(e.priority == priority);
      REQUIRE(e.kind == seq);
    }
  }
  CHECK(q.size() == pending.size());
}

TEST_CASE("an event cannot be scheduled in the past") {
  EventQueue q;
  q.schedule(10, 0, 0, 0);
  Event e;
  q.pop(e);
  CHECK_THROWS_AS(q.schedule(9, 0, 0, 0), std::logic_error);
  q.schedule(10, 0, 0, 0);  // the present is fine
  CHECK(q.size() == 1);
}

TEST_CASE("clock domains convert cycles to picoseconds once") {
  const Clock engine(2.1e9);
  CHECK(engine.ticks(1) == 476);
  CHECK(engine.ticks(2100) == 1'000'000);  // 2100 cycles at 2.1 GHz = 1 us, not 2100 x 476
  CHECK(Clock(1.3e9).cycles(1'000'000) == doctest::Approx(1300));
}

TEST_CASE("stats: hierarchical names become nested JSON") {
  Stats s;
  s.counter("xcd[1].l2.channel[2].hits") = 7;
  s.counter("xcd[1].l2.misses") += 3;
  s.counter("hbm.read_bytes") = 128;
  s.value("clock.engine_mhz") = 1207.5;
  std::uint64_t& hits = s.counter("xcd[1].l2.channel[2].hits");
  hits += 1;  // the same counter by reference
  CHECK(s.get("xcd[1].l2.channel[2].hits") == 8);
  CHECK(s.get("nope") == 0);
  const auto j = s.to_json();
  CHECK(j["xcd"][1]["l2"]["channel"][2]["hits"] == 8);
  CHECK(j["xcd"][0].is_null());
  CHECK(j["xcd"][1]["l2"]["misses"] == 3);
  CHECK(j["hbm"]["read_bytes"] == 128);
  CHECK(j["clock"]["engine_mhz"] == 1207.5);
  CHECK_THROWS_AS(s.value("hbm.read_bytes"), std::logic_error);
}

TEST_CASE("stats: a difference of two snapshots is what each figure gained between them") {
  Stats before, after;
  before.counter("hbm.channel[0].busy_ps") = 100;
  before.value("hbm.channel[0].bytes") = 64.5;
  after.counter("hbm.channel[0].busy_ps") = 350;
  after.value("hbm.channel[0].bytes") = 192.5;
  after.counter("hbm.channel[1].busy_ps") = 40;  // not in the earlier snapshot: counts from 0
  Stats k;
  k.counter("time_ps") = 1000;
  k.add_difference(after, before);
  CHECK(k.get("hbm.channel[0].busy_ps") == 250);
  CHECK(k.get_value("hbm.channel[0].bytes") == 128.0);
  CHECK(k.get("hbm.channel[1].busy_ps") == 40);
  CHECK(k.get("time_ps") == 1000);  // untouched
  Stats shrunk;
  shrunk.counter("hbm.channel[0].busy_ps") = 99;
  Stats bad;
  CHECK_THROWS_AS(bad.add_difference(shrunk, before), std::logic_error);
}
