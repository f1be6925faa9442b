// The bound on a simulation's tag state: computed from the geometry before anything is allocated,
// never below what the caches then hold, and a config beyond it refused with the key to blame.
#include <doctest/doctest.h>

#include <string>

#include "arch/arch_locator.h"
#include "arch/config_error.h"
#include "workload_fixture.h"
#include "sim/cache.h"
#include "sim/group_cache.h"
#include "sim/l1_cache.h"
#include "sim/lru_ring.h"
#include "sim/memory_path.h"
#include "sim/small_group_cache.h"
#include "sim/state_budget.h"

using namespace attnsim;
using namespace attnsim::sim;

TEST_CASE("the geometry's tag state is the state a cache of it holds") {
  // LruRing: 6 bytes a way, 4 a set, and with 96 ways or more a byte per filter key of each set.
  CHECK(LruRing::state_bytes_for(32 << 10, 64, 128) == LruRing(32 << 10, 64, 128).state_bytes());
  CHECK(LruRing::state_bytes_for(32 << 10, 64, 128) == 4 * 64 * 6 + 4 * 4);
  CHECK(LruRing::state_bytes_for(256 << 10, 128, 128) == LruRing(256 << 10, 128, 128).state_bytes());
  CHECK(LruRing::state_bytes_for(256 << 10, 128, 128) == 16 * 128 * 6 + 16 * 4 + 16 * 2048);
  // SetAssocCache: 16 ways of 16-bit tags in 32 bytes and a recency word (40 B a set) where every
  // tag below the address limit fits 15 bits, 16 ways of 32-bit tags (64 + 8 B) where not; more
  // than 16 ways: a tag and a rank word per way.
  const std::uint64_t mi300x_l2 = std::uint64_t{4} << 20;
  CHECK(SetAssocCache::state_bytes_split(mi300x_l2, 16, 128, std::uint64_t{1} << 30) ==
        SetAssocCache(mi300x_l2, 16, 128, WritePolicy::write_back, 1, SetIndex::modulo, 0, std::uint64_t{1} << 30)
            .state_bytes());
  CHECK(SetAssocCache::state_bytes_split(mi300x_l2, 16, 128, std::uint64_t{1} << 30) == 2048 * 40);
  CHECK(SetAssocCache::state_bytes_split(mi300x_l2, 16, 128) == 2048 * 72);
  CHECK(SetAssocCache::state_bytes_split(mi300x_l2, 32, 128) ==
        SetAssocCache(mi300x_l2, 32, 128, WritePolicy::write_back).state_bytes());
  CHECK(SetAssocCache::state_bytes_split(mi300x_l2, 32, 128) == 1024 * 32 * 8);
  // GroupCache: a group (32 B) and its free-list entry (4 B), a table of the least power of two of
  // at least twice the groups (4 B a slot), per-set unit words with sets > 1, two dense-list entries
  // (8 B) and a position (4 B) with sampled victims.
  CHECK(GroupCache::state_bytes_for(4096, 1, 16) == GroupCache(4u << 20, 4096, 1, 128, 16).state_bytes());
  CHECK(GroupCache::state_bytes_for(4096, 1, 16) == 4096 * 36 + 8192 * 4 + 4096 * 20);
  CHECK(GroupCache::state_bytes_for(3000, 4, 0) == GroupCache(3000 * 1024, 3000, 4, 128).state_bytes());
  CHECK(GroupCache::state_bytes_for(3000, 4, 0) == 3000 * 36 + 8192 * 4 + 3000 * 5 * 8 + 5 * 8);  // + the memo's scratch
  CHECK(GroupCache::room_for(4u << 20) == 4096);
  // SmallGroupCache: itself, a key and a valid word per slot, sets + 1 mask words per slot, two
  // words per set.
  CHECK(SmallGroupCache::state_bytes_for(32, 4) == SmallGroupCache(32 << 10, 32, 4).state_bytes());
  CHECK(SmallGroupCache::state_bytes_for(32, 4) == sizeof(SmallGroupCache) + (64 + 32 * 5 + 8) * 8);
}

TEST_CASE("the estimate bounds the state the shipped hierarchies hold in both tag modes") {
  for (const char* name : {"mi300x", "mi325x", "mi355x", "h100", "h200"}) {
    for (const TagMode mode : {TagMode::exact, TagMode::approximate}) {
      const std::string gpu_name = name;
      CAPTURE(gpu_name);
      CAPTURE(static_cast<int>(mode));
      const arch::GpuSpec& gpu = test::gpu(name);
      const StateEstimate e = estimate_state_bytes(gpu, mode);
      const std::uint64_t held = MemoryPath(gpu, 2.1e9, mode).state_bytes();
      CHECK(e.bytes >= held);
      // A bound, and a close one: an exact MALL of lines twice its granule starts granular (half
      // the tags of the line cache it turns into when a request covers part of a granule). An L1
      // beside the LDS is built at l1.size and grows with a kernel's carve-out (to 256 KiB on the
      // H100 and H200, which the estimate counts): no such check there.
      if (gpu.l1.carveouts.empty()) CHECK(e.bytes <= 2 * held);
      CHECK(e.bytes <= kMaxStateBytes);
    }
  }
}

TEST_CASE("a hierarchy whose tags the host cannot hold is refused before it is allocated") {
  // 4,096 approximate L1s (512 CUs per XCD) of 8 MiB at 1,024 ways (64 sets): 8,192 groups each,
  // each with a word per set and one for the sets (4.6 MB an L1, 19 GB in all).
  const auto big_l1 = arch::load_arch_file(arch::resolve_arch("mi300x"),
                                           {"chip.cus_per_xcd=512", "l1.size=8MiB", "l1.ways=1024"})
                          .spec;
  CHECK(GroupCache::state_bytes_for(8192, 64, 0) == 8192 * 36 + 16384 * 4 + 8192 * 65 * 8 + 65 * 8);
  std::string message;
  try {
    MemoryPath path(big_l1, 2.1e9, TagMode::approximate);
  } catch (const arch::ConfigError& e) {
    message = e.what();
  }
  CHECK(message.find("key 'l1.size'") != std::string::npos);
  CHECK(message.find("without --approximate") != std::string::npos);
  // Their exact tags: 4,096 x (64 Ki lines of 6 bytes, 64 sets of 4 and their presence filters of
  // 2 Ki bytes), 2.1 GB: allowed.
  CHECK(L1Caches::state_bytes_at_most(big_l1, false) == 4096 * ((std::uint64_t{64} << 10) * 6 + 64 * 4 + 64 * 2048));
  CHECK(estimate_state_bytes(big_l1, TagMode::exact).bytes < kMaxStateBytes);
}

TEST_CASE("an approximate L1 of more sets than a group's word covers keeps exact tags") {
  // 304 L1s of 64 MiB at 64 ways (8,192 sets): the exact mode's tags in both modes, 304 x (512 Ki
  // lines of 6 bytes and 8 Ki sets of 4) in place of the shipped L1s' 304 x (256 lines and 4 sets).
  const auto big_l1 = arch::load_arch_file(arch::resolve_arch("mi300x"), {"l1.size=64MiB"}).spec;
  const std::uint64_t shipped = estimate_state_bytes(test::gpu("mi300x"), TagMode::exact).bytes;
  const std::uint64_t exact = estimate_state_bytes(big_l1, TagMode::exact).bytes;
  CHECK(exact == shipped - 304 * (256 * 6 + 4 * 4) + 304 * ((std::uint64_t{512} << 10) * 6 + 8192 * 4));
  CHECK(exact < kMaxStateBytes);
  const std::uint64_t shipped_approximate = estimate_state_bytes(test::gpu("mi300x"), TagMode::approximate).bytes;
  CHECK(estimate_state_bytes(big_l1, TagMode::approximate).bytes ==
        shipped_approximate - L1Caches::state_bytes_at_most(test::gpu("mi300x"), true) + 304 * ((std::uint64_t{512} << 10) * 6 + 8192 * 4));
}
