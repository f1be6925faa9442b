// Traffic replay: counters by hand for small cases; the MALL absorbs what several L2s fetch.
#include <doctest/doctest.h>

#include "sim/engine.h"
#include "workloads/analytic.h"
#include "workload_fixture.h"

using namespace attnsim;
using namespace attnsim::workloads;

namespace {
sim::RunResult replay(const PassPrograms& pp, const arch::GpuSpec& gpu) { return sim::simulate({&pp}, gpu); }

Problem one_block(std::uint32_t hq, std::uint32_t hkv) {
  Problem p;
  p.heads_q = hq;
  p.heads_kv = hkv;
  p.seqlen_q = p.seqlen_k = 256;  // one aiter-v3 forward workgroup per query head
  return p;
}
}  // namespace

TEST_CASE("one forward workgroup: every line fetched once in 128-byte requests") {
  const auto r = replay(test::build(one_block(1, 1), "aiter-v3", Direction::fwd), test::gpu("mi300x"));
  const sim::TrafficCounters& c = r.total;
  const std::uint64_t tile = 256 * 128 * 2;  // 64 KiB per Q, K, V, O tile
  CHECK(c.requested_read_bytes == 3 * tile);
  CHECK(c.ea_rdreq == 3 * tile / 128);
  CHECK(c.ea_rdreq_128b == c.ea_rdreq);
  CHECK(c.fetch_size_bytes() == 3 * tile);
  // O (512 lines) and LSE (256 rows x 4 B = 8 lines) are written back at the kernel's end, two
  // 64-byte requests per line.
  CHECK(c.ea_wrreq == 2 * (512 + 8));
  CHECK(c.write_size_bytes() == 128 * (512 + 8));
  CHECK(c.tcc_req == 3 * 512 + 512 + 8);
  CHECK(c.tcc_hit == 0);
  CHECK(c.hbm_read_bytes == 3 * tile);  // a cold MALL
  CHECK(c.hbm_write_bytes == 128 * (512 + 8));
}

TEST_CASE("GQA on two XCDs: each L2 fetches K and V and the MALL serves the second") {
  // Two query heads share one KV head; their workgroups go to XCD 0 and XCD 1.
  const auto r = replay(test::build(one_block(2, 1), "aiter-v3", Direction::fwd), test::gpu("mi300x"));
  const std::uint64_t tile = 256 * 128 * 2;
  CHECK(r.total.fetch_size_bytes() == 6 * tile);          // Q0, K, V on XCD 0; Q1, K, V on XCD 1
  CHECK(r.total.hbm_read_bytes == 4 * tile);              // K and V come from HBM once
  CHECK(r.total.mall_read_hits == 2 * tile / 64);         // the second XCD's K and V, in 64-byte lines
  // In CPX mode both workgroups share one XCD's L2, which catches the K/V reuse itself.
  const auto cpx = arch::load_arch_file(arch::resolve_arch("mi300x"), {"dispatch.xcds_per_partition=1"}).spec;
  const auto one_l2 = replay(test::build(one_block(2, 1), "aiter-v3", Direction::fwd), cpx);
  CHECK(one_l2.total.fetch_size_bytes() == 4 * tile);
  CHECK(one_l2.total.tcc_hit == 2 * tile / 128);
}

TEST_CASE("partial lines: row statistics are fetched in 32- and 64-byte requests") {
  Problem p = one_block(1, 1);
  p.seqlen_q = p.seqlen_k = 384;
  const auto r = replay(test::build(p, "aiter-v3", Direction::bwd), test::gpu("mi300x"));
  // The main loop reads LSE and D 16 rows (64 B) at a time: half-line requests.
  CHECK(r.total.ea_rdreq_64b > 0);
  const sim::TrafficCounters& c = r.total;
  CHECK(c.fetch_size_bytes() == 128 * c.ea_rdreq_128b + 64 * c.ea_rdreq_64b + 32 * c.ea_rdreq_32b);
  // fp32 dQ atomics: one 64-byte write request per 64 bytes added.
  CHECK(c.atomic_bytes > 0);
  CHECK(c.atomic_bytes % 64 == 0);
}

TEST_CASE("the replay is deterministic and honours the kernel order") {
  const auto pp = test::build(one_block(4, 2), "ck", Direction::bwd);
  const auto a = replay(pp, test::gpu("mi300x"));
  const auto b = replay(pp, test::gpu("mi300x"));
  CHECK(a.total.to_json() == b.total.to_json());
  REQUIRE(a.kernels.size() == pp.kernels.size());
  CHECK(a.kernels[0].name == "bwd_preprocess");
  // The requested bytes are the program's bytes, whatever the caches do.
  const TensorTraffic prog = program_traffic(pp);
  std::uint64_t read = 0, written = 0;
  for (std::size_t i = 0; i < kTensorCount; ++i) {
    read += prog.read[i];
    written += prog.written[i];
  }
  CHECK(a.total.requested_read_bytes == read);
  CHECK(a.total.requested_write_bytes + a.total.atomic_bytes == written);
}
