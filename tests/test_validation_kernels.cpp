// The validation suite's host-side parts, without a GPU: the portability layer's fragment layouts
// and bf16, the kernels' tiling against the mask by brute force, the harness's CPU reference against
// attnsim's own reference, and the harness's options, profiler CSV and measurement rows (which
// `attnsim validate` must read back).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "report/measurements.h"
#include "validation/harness/harness_core.h"
#include "validation/kernels/cpu_reference.h"
#include "workloads/reference.h"

namespace {

template <attn::Vendor V>
void check_layout_covers_tile() {
  using L = attn::Layout<V>;
  std::set<std::pair<int, int>> a, b, c;
  for (int lane = 0; lane < L::lanes; ++lane) {
    for (int i = 0; i < L::a_elems; ++i) a.insert({L::a_row(lane, i), L::a_col(lane, i)});
    for (int i = 0; i < L::b_elems; ++i) b.insert({L::b_row(lane, i), L::b_col(lane, i)});
    for (int i = 0; i < L::c_elems; ++i) c.insert({L::c_row(lane, i), L::c_col(lane, i)});
  }
  CHECK(L::lanes * L::a_elems == 256);
  CHECK(L::lanes * L::b_elems == 256);
  CHECK(L::lanes * L::c_elems == 256);
  for (const auto* s : {&a, &b, &c}) {
    CHECK(s->size() == 256);  // every element of the 16 x 16 tile exactly once
    CHECK(s->begin()->first == 0);
    CHECK(s->rbegin()->first == 15);
  }
}

// What the hardware computes from the lanes' fragments: C += A B with A and B as the layout places
// them, written back to the lanes by the C layout.
std::vector<float> emulated_mma(const std::vector<attn::FragA>& fa, const std::vector<attn::FragB>& fb) {
  using L = attn::Native;
  float a[16][16], b[16][16];
  for (int lane = 0; lane < L::lanes; ++lane) {
    for (int i = 0; i < L::a_elems; ++i) a[L::a_row(lane, i)][L::a_col(lane, i)] = attn::from_bf16(fa[lane].v[i]);
    for (int i = 0; i < L::b_elems; ++i) b[L::b_row(lane, i)][L::b_col(lane, i)] = attn::from_bf16(fb[lane].v[i]);
  }
  std::vector<float> c(256, 0.0f);
  for (int r = 0; r < 16; ++r) {
    for (int n = 0; n < 16; ++n) {
      for (int k = 0; k < 16; ++k) c[r * 16 + n] += a[r][k] * b[k][n];
    }
  }
  return c;
}

std::string temp_path(const std::string& name) { return (std::filesystem::temp_directory_path() / name).string(); }

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

std::string bad_input(const std::vector<std::string>& args) {
  try {
    attn::parse_options(args);
  } catch (const attn::BadInput& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("each vendor's fragment layouts cover a 16x16 tile exactly once") {
  check_layout_covers_tile<attn::Vendor::amd>();
  check_layout_covers_tile<attn::Vendor::nvidia>();
}

TEST_CASE("strided fragment loads give the kernels' operands: a product through LDS layouts and transposes") {
  // S = Q K^T as the forward computes it: Q row-major [row][d], K row-major [key][d] read as B(d, key).
  std::vector<std::uint16_t> q(16 * 16), k(16 * 16);
  attn::fill_random(q, 7);
  attn::fill_random(k, 8);
  std::vector<attn::FragA> fa(attn::kWaveLanes);
  std::vector<attn::FragB> fb(attn::kWaveLanes);
  for (int lane = 0; lane < attn::kWaveLanes; ++lane) {
    attn::load_a(fa[lane], q.data(), 16, 1, lane);
    attn::load_b(fb[lane], k.data(), 1, 16, lane);  // B(d, key) = K(key, d)
  }
  const std::vector<float> c = emulated_mma(fa, fb);
  for (int r = 0; r < 16; ++r) {
    for (int n = 0; n < 16; ++n) {
      float want = 0;
      for (int d = 0; d < 16; ++d) want += attn::from_bf16(q[r * 16 + d]) * attn::from_bf16(k[n * 16 + d]);
      CHECK(c[r * 16 + n] == doctest::Approx(want).epsilon(1e-6));
    }
  }
}

TEST_CASE("bf16 conversion rounds to nearest even and keeps NaN") {
  CHECK(attn::to_bf16(1.0f) == 0x3F80);
  CHECK(attn::to_bf16(1.00390625f) == 0x3F80);  // 1 + 2^-8: halfway, to the even 0x3F80
  CHECK(attn::to_bf16(1.01171875f) == 0x3F82);  // 1 + 3 x 2^-8: halfway, to the even 0x3F82
  CHECK(attn::to_bf16(-2.0f) == 0xC000);
  CHECK(attn::from_bf16(0x4049) == 3.140625f);
  CHECK(std::isnan(attn::from_bf16(attn::to_bf16(std::nanf("")))));
}

TEST_CASE("the kernels' block ranges are exactly the blocks the causal mask leaves visible") {
  for (int causal = 0; causal < 2; ++causal) {
    for (int nq : {1, 31, 64, 100, 257}) {
      for (int extra : {0, 5, 64, 130}) {
        attn::Shape s;
        s.seqlen_q = nq;
        s.seqlen_k = nq + extra;
        s.causal = causal == 1;
        CAPTURE(nq);
        CAPTURE(extra);
        CAPTURE(causal);
        for (int q0 = 0; q0 < nq; q0 += attn::kFwdBlockM) {  // forward: key blocks of a query block
          int want = 0;
          for (int i = q0; i < std::min(nq, q0 + attn::kFwdBlockM); ++i) {
            for (int j = 0; j < s.seqlen_k; ++j) {
              if (attn::visible(s, i, j)) want = std::max(want, j / attn::kFwdBlockN + 1);
            }
          }
          CHECK(attn::kv_blocks_end(s, q0, attn::kFwdBlockM, attn::kFwdBlockN) == want);
        }
        for (int k0 = 0; k0 < s.seqlen_k; k0 += attn::kBwdBlockN) {  // backward: query blocks of a key block
          int first = attn::ceil_div(nq, attn::kBwdBlockM);
          for (int i = 0; i < nq; ++i) {
            for (int j = k0; j < std::min(s.seqlen_k, k0 + attn::kBwdBlockN); ++j) {
              if (attn::visible(s, i, j)) first = std::min(first, i / attn::kBwdBlockM);
            }
          }
          // Blocks before `first` see none of the keys; the kernel may start at or before it.
          CHECK(attn::q_blocks_begin(s, k0, attn::kBwdBlockM) <= first);
          CHECK(attn::q_blocks_begin(s, k0, attn::kBwdBlockM) >= (first == attn::ceil_div(nq, attn::kBwdBlockM) ? 0 : first));
        }
      }
    }
  }
}

TEST_CASE("the harness's CPU reference agrees with attnsim's reference attention") {
  using namespace attnsim::workloads;
  attn::HostInputs in;
  attn::Shape& s = in.shape;
  s.batch = 2;
  s.heads_q = s.heads_kv = 2;
  s.seqlen_q = 40;
  s.seqlen_k = 56;
  s.head_dim = 64;
  s.causal = true;
  in.scale = 1.0f / 8.0f;
  const std::size_t qn = 2ull * 40 * 2 * 64, kn = 2ull * 56 * 2 * 64;
  in.q.resize(qn);
  in.k.resize(kn);
  in.v.resize(kn);
  in.d_o.resize(qn);
  attn::fill_random(in.q, 1);
  attn::fill_random(in.k, 2);
  attn::fill_random(in.v, 3);
  attn::fill_random(in.d_o, 4);

  Problem p;
  p.batch = 2;
  p.heads_q = p.heads_kv = 2;
  p.seqlen_q = 40;
  p.seqlen_k = 56;
  p.head_dim_qk = p.head_dim_v = 64;
  p.causal = true;
  TensorNeeds needs;
  needs.backward = true;
  const TensorSet ts(p, needs);
  HostTensors host;
  for (std::size_t i = 0; i < kTensorCount; ++i) {
    const TensorDesc& d = ts[static_cast<TensorId>(i)];
    if (d.present) host.data[i].assign(d.bytes() / d.elem_bytes, 0.0f);
  }
  // Both use BSHD with the same element order.
  for (std::size_t e = 0; e < qn; ++e) {
    host[TensorId::q][e] = attn::from_bf16(in.q[e]);
    host[TensorId::d_o][e] = attn::from_bf16(in.d_o[e]);
  }
  for (std::size_t e = 0; e < kn; ++e) {
    host[TensorId::k][e] = attn::from_bf16(in.k[e]);
    host[TensorId::v][e] = attn::from_bf16(in.v[e]);
  }
  reference_attention(p, ts, host, false);
  reference_attention(p, ts, host, true);

  const int b = 1, h = 1;
  std::vector<double> out, dq, dk, dv, lse(40), delta(40);
  for (int i = 0; i < 40; ++i) {
    double l = 0;
    attn::reference_forward_row(in, b, h, i, out, l);
    CHECK(l == doctest::Approx(host[TensorId::lse][attn::row_offset(s, b, h, i)]).epsilon(1e-5));
    CHECK(attn::row_error(out, [&](std::size_t d) { return host[TensorId::o][attn::q_offset(s, b, i, h, static_cast<int>(d))]; }) < 1e-5);
    lse[i] = l;
    delta[i] = 0;
    for (int d = 0; d < 64; ++d) delta[i] += out[d] * attn::from_bf16(in.d_o[attn::q_offset(s, b, i, h, d)]);
  }
  for (int i = 0; i < 40; ++i) {
    attn::reference_dq_row(in, b, h, i, lse[i], delta[i], dq);
    CHECK(attn::row_error(dq, [&](std::size_t d) { return host[TensorId::dq][attn::q_offset(s, b, i, h, static_cast<int>(d))]; }) < 1e-5);
  }
  for (int j = 0; j < 56; ++j) {
    attn::reference_dkdv_row(in, b, h, j, lse, delta, dk, dv);
    CHECK(attn::row_error(dk, [&](std::size_t d) { return host[TensorId::dk][attn::kv_offset(s, b, j, h, static_cast<int>(d))]; }) < 1e-5);
    CHECK(attn::row_error(dv, [&](std::size_t d) { return host[TensorId::dv][attn::kv_offset(s, b, j, h, static_cast<int>(d))]; }) < 1e-5);
  }
}

TEST_CASE("the dispatch probe's run-ahead: how far a workgroup started ahead of the id sequence") {
  // Tickets in id order: nothing ran ahead.
  CHECK(attn::largest_run_ahead({0, 1, 2, 3, 4, 5}) == 0);
  // Workgroup 5 started third (ticket 2), when only 2 of the 5 lower ids had: 3 ahead. Workgroups
  // 1 and 2 started after it, so they ran behind (negative), which does not count.
  CHECK(attn::largest_run_ahead({0, 3, 4, 1, 5, 2}) == 3);
  // XCD 0 (ids 0, 8, 16) slow under free round-robin over 8 XCDs: ids 0-7 start, then the other
  // XCDs' 9-15 and 17-23, then 8 and 16. Id 17 took ticket 15 while 8 and 16 had not started: 2.
  const std::vector<std::uint32_t> free_run = {0, 1, 2, 3, 4, 5, 6, 7, 22, 8, 9, 10, 11, 12, 13, 14, 23, 15, 16, 17, 18, 19, 20, 21};
  CHECK(attn::largest_run_ahead(free_run) == 2);
  attn::check_tickets(free_run);
  CHECK_THROWS_AS(attn::check_tickets({0, 1, 1}), attn::BadInput);
  CHECK_THROWS_AS(attn::check_tickets({0, 3, 1}), attn::BadInput);
  CHECK(attn::parse_options({"--dispatch-probe"}).dispatch_probe);
  CHECK_FALSE(attn::parse_options({}).dispatch_probe);
}

TEST_CASE("the matrix rate probe's FLOPs per clock from a workgroup's cycles") {
  // One workgroup of 8 waves, 8 chains of 20000 instructions of 8192 FLOPs (a 16x16x16 product):
  // 1.048576e10 FLOPs. At H100's wgmma peak, 4096 per clock per SM, that takes 2,560,000 cycles;
  // at the two thirds attnsim's config gives mma.sync (6 cycles per 4096-FLOP instruction on each
  // of 4 sub-partitions: 2730.67 per clock), 3,840,000.
  CHECK(attn::matrix_flop_per_clock(8, 8, 20000, 8192.0, 2'560'000) == doctest::Approx(4096.0));
  CHECK(attn::matrix_flop_per_clock(8, 8, 20000, 8192.0, 3'840'000) == doctest::Approx(4 * 4096.0 / 6));
  CHECK_THROWS_AS(attn::matrix_flop_per_clock(8, 8, 20000, 8192.0, 0), attn::BadInput);
  CHECK_THROWS_AS(attn::matrix_flop_per_clock(0, 8, 20000, 8192.0, 100), attn::BadInput);
  // The median workgroup: the middle of an odd count, the upper middle of an even one.
  CHECK(attn::median_cycles({30, 10, 20}) == 20);
  CHECK(attn::median_cycles({40, 10, 30, 20}) == 30);
  CHECK_THROWS_AS(attn::median_cycles({}), attn::BadInput);
  CHECK(attn::parse_options({"--matrix-rate-probe"}).matrix_rate_probe);
  CHECK_FALSE(attn::parse_options({}).matrix_rate_probe);
}

TEST_CASE("the memory probe's bandwidth counts a copy's reads and writes") {
  // 1 GiB read once in 0.25 ms: 2^30 / 2.5e-4 s = 4.294967296e12 B/s; copied, twice the bytes
  // (attnsim micro's copy counts both); 4 MiB read 256 times in the same time, the same bytes.
  CHECK(attn::stream_bandwidth(1ull << 30, 1, false, 0.25) == doctest::Approx(4.294967296e12));
  CHECK(attn::stream_bandwidth(1ull << 30, 1, true, 0.25) == doctest::Approx(8.589934592e12));
  CHECK(attn::stream_bandwidth(4ull << 20, 256, false, 0.25) == doctest::Approx(4.294967296e12));
  CHECK_THROWS_AS(attn::stream_bandwidth(1ull << 30, 1, false, 0.0), attn::BadInput);
  CHECK_THROWS_AS(attn::stream_bandwidth(0, 1, false, 1.0), attn::BadInput);
  CHECK(attn::parse_options({"--memory-probe"}).memory_probe);
  CHECK_FALSE(attn::parse_options({}).memory_probe);
  CHECK(attn::parse_options({"--l2-probe"}).l2_probe);
  CHECK_FALSE(attn::parse_options({}).l2_probe);
}

TEST_CASE("the L1 probe's chain is a cycle of lines in address order and its reading finds the last count held") {
  // 3 lines 256 B apart: 64 words each; line 0's first word points at word 64, line 1's at 128,
  // line 2's back at 0; every other word 0.
  const std::vector<std::uint32_t> c = attn::l1_chase_chain(3, 256);
  REQUIRE(c.size() == 192);
  CHECK(c[0] == 64);
  CHECK(c[64] == 128);
  CHECK(c[128] == 0);
  CHECK(std::count(c.begin(), c.end(), 0u) == 190);  // all but lines 0's and 1's first words
  CHECK(attn::l1_chase_chain(1, 128) == std::vector<std::uint32_t>(32, 0));  // one line: its own
  // Hits at about 33 clocks per step, misses at about 260 (an H200's L1 and L2 chase latencies):
  // served up to 4 lines; a count after the first miss is not looked at.
  CHECK(attn::largest_l1_held({2, 3, 4, 5, 6, 8}, {33, 34, 33, 180, 262, 40}) == 4);
  CHECK(attn::largest_l1_held({2, 3, 4}, {33, 49, 50}) == 3);  // 1.5 x 33 = 49.5: 49 held, 50 not
  CHECK(attn::largest_l1_held({64, 128}, {40, 41}) == 128);
  CHECK(attn::largest_l1_held({}, {}) == 0);
  // The counts chased per stride stop where the chain would span more than the 8 MiB limit: at
  // 4 KiB every count to 2048 (8 MiB exactly: past a 4-set L1's 496 ways of one set), at 64 KiB
  // up to 128, at 8 MiB none.
  const std::vector<std::uint32_t> at4k = attn::l1_probe_counts(4096, 8u << 20);
  CHECK(at4k.front() == 2);
  CHECK(at4k.back() == 2048);
  CHECK(std::is_sorted(at4k.begin(), at4k.end()));
  CHECK(attn::l1_probe_counts(65536, 8u << 20).back() == 128);
  CHECK(attn::l1_probe_counts(8u << 20, 8u << 20).empty());
  CHECK(attn::parse_options({"--l1-probe"}).l1_probe);
  CHECK_FALSE(attn::parse_options({}).l1_probe);
}

TEST_CASE("the placement probe's summary tells breadth-first from depth-first placement") {
  // 4 units, 3 workgroups each at once (a first wave of 12). Breadth-first, as attnsim places: id i
  // on unit i % 4, so no consecutive pair shares a unit and each unit's ids are 4 apart.
  std::vector<std::uint32_t> breadth(24), depth(24);
  for (std::uint32_t i = 0; i < 24; ++i) {
    breadth[i] = i % 4;
    depth[i] = (i / 3) % 4;  // depth-first: 3 consecutive ids per unit
  }
  const attn::PlacementSummary b = attn::placement_summary(breadth, 12);
  CHECK(b.neighbour_share == 0.0);
  CHECK(b.common_stride == 4);
  // Depth-first: of the 11 consecutive pairs, 8 share a unit (2 in each of the 4 triples).
  const attn::PlacementSummary d = attn::placement_summary(depth, 12);
  CHECK(d.neighbour_share == doctest::Approx(8.0 / 11.0));
  CHECK(d.common_stride == 1);
  // The H200's first ids (measurements/h200_placement_20261204.txt): ids 0 and 8 apart on no unit,
  // 0 and 32 on one; over ids 0-39 the only repeats are 32 apart.
  const std::vector<std::uint32_t> h200{128, 129, 130, 131, 124, 125, 126, 127, 0,   1,   16,  17,  32,  33,
                                        48,  49,  2,   3,   18,  19,  34,  35,  50,  51,  64,  65,  78,  79,
                                        92,  93,  106, 107, 128, 129, 130, 131, 124, 125, 126, 127};
  const attn::PlacementSummary h = attn::placement_summary(h200, h200.size());
  CHECK(h.neighbour_share == 0.0);
  CHECK(h.common_stride == 32);
  CHECK_THROWS_AS(attn::placement_summary(h200, h200.size() + 1), attn::BadInput);
  CHECK(attn::parse_options({"--placement-probe", "58112"}).placement_probe_lds == 58112);
  CHECK(attn::parse_options({}).placement_probe_lds == -1);
  CHECK(attn::parse_options({"--placement-probe", "fwd"}).placement_probe_lds == attn::fwd_lds_bytes(128));
  CHECK(attn::parse_options({"--placement-probe", "bwd"}).placement_probe_lds == attn::bwd_lds_bytes(128));
  CHECK(bad_input({"--placement-probe", "-1"}) == "--placement-probe: expected LDS bytes >= 0, fwd or bwd");
}

TEST_CASE("harness options: shapes the kernels cannot run are refused by name") {
  const attn::Options o = attn::parse_options({"--direction", "bwd", "--batch", "2", "--heads", "16", "--seqlen", "4096", "--causal"});
  CHECK(o.shape.heads_q == 16);
  CHECK(o.shape.heads_kv == 16);
  CHECK(o.shape.seqlen_k == 4096);
  CHECK(o.shape.causal);
  CHECK(bad_input({"--head-dim", "96"}) == "unsupported shape: head_dim must be 64 or 128");
  CHECK(bad_input({"--direction", "bwd", "--heads", "8:2"}) ==
        "unsupported shape: the backward kernels need heads_q == heads_kv (no GQA reduction)");
  CHECK(bad_input({"--seqlen", "4k"}) == "--seqlen: expected an integer, got '4k'");
  CHECK(bad_input({"--causal", "--seqlen", "512:256"}) == "unsupported shape: causal needs seqlen_k >= seqlen_q (bottom-right mask)");
  CHECK(bad_input({"--reps", "0"}) == "--warmup must be >= 0 and --reps >= 1");
  CHECK(bad_input({"--bogus"}).rfind("unknown option '--bogus'", 0) == 0);
  CHECK(attn::arch_of("NVIDIA H200") == "h200");
  CHECK(attn::arch_of("AMD Instinct MI300X (gfx942:sramecc+:xnack-)") == "mi300x");
  CHECK(attn::arch_of("NVIDIA A100-SXM4-80GB").empty());
}

TEST_CASE("profiler CSVs are summed over the attention kernels and become attnsim metrics") {
  // Nsight Compute, --csv --print-units base, with its own messages first and a kernel of another program.
  const std::string ncu = write_temp(
      "attnsim_ncu.csv",
      "==PROF== Connected to process 1234\n"
      "\"ID\",\"Process ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"1\",\"void attn::attention_fwd<128>(attn::Tensors)\",\"dram__bytes_read.sum\",\"byte\",\"1,048,576\"\n"
      "\"0\",\"1\",\"void attn::attention_fwd<128>(attn::Tensors)\",\"dram__bytes_write.sum\",\"byte\",\"2048\"\n"
      "\"1\",\"1\",\"other_kernel\",\"dram__bytes_read.sum\",\"byte\",\"999\"\n"
      "\"2\",\"1\",\"attn::attention_bwd_convert(attn::Tensors)\",\"dram__bytes_read.sum\",\"byte\",\"1000\"\n"
      "\"2\",\"1\",\"attn::attention_bwd_convert(attn::Tensors)\",\"lts__t_sectors_srcunit_tex_op_read.sum\",\"sector\",\"10\"\n"
      "\"3\",\"1\",\"attn::attention_bwd(attn::Tensors)\",\"lts__t_sectors_srcunit_tex_op_red.sum\",\"sector\",\"4\"\n"
      "\"3\",\"1\",\"attn::attention_bwd(attn::Tensors)\",\"lts__t_sectors_srcunit_ltcfabric.sum\",\"sector\",\"3\"\n"
      "\"3\",\"1\",\"attn::attention_bwd(attn::Tensors)\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\",\"sector\",\"40\"\n"
      "\"3\",\"1\",\"attn::attention_bwd(attn::Tensors)\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum\",\"sector\",\"10\"\n");
  attn::ProfileSums sums;
  attn::add_profile_csv(ncu, attn::kernel_prefix("fwd"), sums);
  CHECK(sums.get("dram__bytes_read.sum") == 1048576.0);  // the forward only: not the other program's, not the bwd's
  CHECK(sums.tool == "ncu");
  attn::ProfileSums all;
  attn::add_profile_csv(ncu, attn::kernel_prefix("both"), all);
  CHECK(all.get("dram__bytes_read.sum") == 1048576.0 + 1000.0);
  const auto m = attn::metrics_from_profile(all);
  REQUIRE(m.size() == 6);
  CHECK(m[2].metric == "l2_read_request_bytes");
  CHECK(m[2].value == 320.0);
  CHECK(m[3].metric == "l2_atomic_request_bytes");
  CHECK(m[3].value == 128.0);
  CHECK(m[4].metric == "l2_far_partition_bytes");  // 3 sectors between the L2's partitions
  CHECK(m[4].value == 96.0);
  CHECK(m[5].metric == "l1_read_hit_rate");  // 10 of 40 load sectors held by the L1
  CHECK(m[5].value == 0.25);
  // rocprofv3 counter collection in two passes (files): FETCH_SIZE = 128 x 10 + 64 x (30 - 10 - 5)
  // + 32 x 5 = 2400 B; WRITE_SIZE = 32 x (8 - 6) + 64 x 6 = 448 B; 3 MOPS = 1536 FLOPs.
  const std::string roc1 = write_temp("attnsim_rocprof1.csv",
                                      "Correlation_Id,Kernel_Name,Counter_Name,Counter_Value\n"
                                      "1,attention_bwd<128>,TCC_EA0_RDREQ,30\n1,attention_bwd<128>,TCC_EA0_RDREQ_32B,5\n"
                                      "1,attention_bwd<128>,TCC_BUBBLE,10\n1,attention_fwd<128>,TCC_BUBBLE,1000\n");
  const std::string roc2 = write_temp("attnsim_rocprof2.csv",
                                      "Correlation_Id,Kernel_Name,Counter_Name,Counter_Value\n"
                                      "1,attention_bwd<128>,TCC_EA0_WRREQ,8\n1,attention_bwd<128>,TCC_EA0_WRREQ_64B,6\n"
                                      "1,attention_bwd_convert,SQ_INSTS_VALU_MFMA_MOPS_BF16,3\n");
  // A third pass: 100 L1 lookups of which 20 writes; 60 of the 80 reads went on to the L2.
  const std::string roc3 = write_temp("attnsim_rocprof3.csv",
                                      "Correlation_Id,Kernel_Name,Counter_Name,Counter_Value\n"
                                      "1,attention_bwd<128>,TCP_TOTAL_CACHE_ACCESSES,100\n"
                                      "1,attention_bwd<128>,TCP_TCC_READ_REQ,60\n1,attention_bwd<128>,TCP_TCC_WRITE_REQ,20\n");
  attn::ProfileSums roc;
  attn::add_profile_csv(roc1, attn::kernel_prefix("bwd"), roc);
  attn::add_profile_csv(roc2, attn::kernel_prefix("bwd"), roc);
  attn::add_profile_csv(roc3, attn::kernel_prefix("bwd"), roc);
  CHECK(roc.tool == "rocprofv3");
  const auto rm = attn::metrics_from_profile(roc);
  REQUIRE(rm.size() == 4);
  CHECK(rm[0].metric == "l1_read_hit_rate");
  CHECK(rm[0].value == doctest::Approx(0.25));
  CHECK(rm[1].metric == "l2_fabric_read_bytes");
  CHECK(rm[1].value == 2400.0);
  CHECK(rm[2].value == 448.0);
  CHECK(rm[3].metric == "matrix_flops");
  CHECK(rm[3].value == 1536.0);
  const std::string bad = write_temp("attnsim_bad_profile.csv", "Kernel_Name,Counter_Name,Counter_Value\nattention_fwd,TCC_BUBBLE,lots\n");
  attn::ProfileSums ignored;
  CHECK_THROWS_WITH_AS(attn::add_profile_csv(bad, "attention_", ignored),
                       (bad + ":2: metric 'TCC_BUBBLE' has a value that is not a number: 'lots'").c_str(), attn::BadInput);
  const std::string none = write_temp("attnsim_none_profile.csv", "a,b\n1,2\n");
  CHECK_THROWS_AS(attn::add_profile_csv(none, "attention_", ignored), attn::BadInput);
}

TEST_CASE("the harness's measurement rows are what attnsim validate reads") {
  attn::Shape s;
  s.batch = 4;
  s.heads_q = s.heads_kv = 16;
  s.seqlen_q = s.seqlen_k = 2048;
  s.head_dim = 64;
  s.causal = true;
  const double flops = attn::fa_flops(s, "fwd");
  CHECK(flops == 4.0 * 4 * 16 * (2048.0 * 2049 / 2) * 64);  // causal: the visible pairs exactly
  const std::string path = write_temp(
      "attnsim_harness_rows.csv",
      std::string(attn::kMeasurementsHeader) +
          attn::measurement_row("h200", "NVIDIA H200", "ref-cuda", s, "fwd", "time_us", 812.5, "us", "harness",
                                "driver 580, clocks 1755-1980 MHz") +
          attn::measurement_row("h200", "NVIDIA H200", "ref-cuda", s, "bwd", "hbm_read_bytes", 1.5e9, "B", "harness",
                                "driver 580; counters by ncu (cache control all)"));
  const auto cases = attnsim::report::read_measurements(path);
  REQUIRE(cases.size() == 2);
  CHECK(cases[0].point.arch == "h200");
  CHECK(cases[0].point.kernel == "ref-cuda");
  CHECK(cases[0].point.direction == "fwd");
  CHECK(cases[0].point.problem.seqlen_q == 2048);
  CHECK(cases[0].point.problem.head_dim_qk == 64);
  CHECK(cases[0].point.problem.causal);
  CHECK(cases[0].measured == 812.5);
  CHECK(cases[1].metric == "hbm_read_bytes");
  CHECK(cases[1].measured == 1.5e9);
  // The timed row runs as the GPU does; the row ncu counted with empty caches per kernel.
  CHECK_FALSE(cases[0].point.empty_caches_per_kernel);
  CHECK(cases[1].point.empty_caches_per_kernel);
}
