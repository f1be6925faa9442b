// ServerBank: a bank of first-come first-served channels against one BandwidthServer per channel,
// and its even spread against serving every channel by hand. Rates of 1 byte per ps (1e12 B/s) per
// channel, so a channel serves n bytes in n ps.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "sim/bandwidth_server.h"
#include "sim/channel_demand.h"
#include "sim/server_bank.h"

using attnsim::sim::BandwidthServer;
using attnsim::sim::ChannelDemand;
using attnsim::sim::ServerBank;
using attnsim::sim::Tick;

TEST_CASE("a server bank serves each channel as a bandwidth server of its own") {
  ServerBank bank(3, 1e12);
  std::vector<BandwidthServer> servers(3, BandwidthServer(1e12));
  struct Request {
    std::uint32_t ch;
    Tick at;
    std::uint64_t bytes;
  };
  const Request requests[] = {{0, 0, 10}, {1, 5, 7}, {0, 3, 4}, {2, 50, 1}, {1, 8, 20}, {0, 100, 6}};
  for (const Request& r : requests) {
    CAPTURE(r.ch);
    CHECK(bank.serve(r.ch, r.at, r.bytes) == servers[r.ch].serve(r.at, r.bytes));
  }
  Tick busy = 0;
  for (std::uint32_t ch = 0; ch < 3; ++ch) {
    CHECK(bank.free_at(ch) == servers[ch].free_at());
    busy += servers[ch].busy();
  }
  CHECK(bank.busy() == busy);
}

TEST_CASE("an even spread serves bytes over channels on every channel and returns the last finish") {
  // Four channels; by hand: channel 0 busy until 30, channel 2 until 12, the others free.
  ServerBank bank(4, 1e12);
  CHECK(bank.serve(0, 0, 30) == 30);
  CHECK(bank.serve(2, 2, 10) == 12);
  // 40 bytes at t = 5: 10 ps per channel. Channel 0 ends at 40, 1 and 3 at 15, 2 at 22.
  CHECK(bank.serve_each(5, 40) == 40);
  CHECK(bank.free_at(0) == 40);
  CHECK(bank.free_at(1) == 15);
  CHECK(bank.free_at(2) == 22);
  CHECK(bank.free_at(3) == 15);
  // A later single request sees the spread's backlog on its channel: 15 -> 15 + 5.
  CHECK(bank.serve(3, 14, 5) == 20);
  // 8 bytes at t = 21: 2 ps each; 1 was free at 15 (now 23), 0 at 40 (now 42), 3 at 20 (now 23).
  CHECK(bank.serve_each(21, 8) == 42);
  CHECK(bank.free_at(1) == 23);
  CHECK(bank.free_at(2) == 24);
  CHECK(bank.free_at(3) == 23);
  CHECK(bank.busy() == 30 + 10 + 40 + 5 + 8);
}

TEST_CASE("a channel demand's even bytes and its channels' own bytes add up on a bank") {
  ServerBank bank(2, 1e12);
  ChannelDemand demand;
  demand.resize(2);
  demand.add(1, 6);
  demand.add_even(8);  // 4 ps on each channel
  CHECK_FALSE(demand.empty());
  // Channel 0: 4 ps; channel 1: 4 + 6 ps; from t = 10.
  CHECK(demand.serve(bank, 10) == 20);
  CHECK(demand.empty());
  CHECK(bank.free_at(0) == 14);
  CHECK(bank.free_at(1) == 20);
}
