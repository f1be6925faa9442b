// Presets: aiter-v3's loop costs equal the counts read from its code objects; overrides and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>

#include "arch/config_error.h"
#include "workload_fixture.h"

using namespace attnsim;
using namespace attnsim::workloads;

namespace {
Problem d128(std::uint64_t n) {
  Problem p;
  p.heads_q = p.heads_kv = 1;
  p.seqlen_q = p.seqlen_k = n;
  return p;
}
OpCost total(const CompiledBody& b) {
  OpCost t;
  for (const auto& op : b.ops) {
    t.mfma += op.cost.mfma;
    t.valu += op.cost.valu;
    t.trans += op.cost.trans;
    t.mask_valu += op.cost.mask_valu;
    t.lds_read += op.cost.lds_read;
    t.lds_write += op.cost.lds_write;
    t.barriers += op.cost.barriers;
    t.issue_only += op.cost.issue_only;
    t.lds_wavefronts += op.cost.lds_wavefronts;
  }
  return t;
}
// A backward pass's main kernel (null if it has none).
const KernelProgram* main_kernel(const PassPrograms& bwd) {
  for (const auto& kp : bwd.kernels) {
    if (kp.kind == KernelKind::bwd_main) return &kp;
  }
  return nullptr;
}
std::string spec_error(const std::string& spec) {
  try {
    parse_kernel_spec(spec);
  } catch (const arch::ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("aiter-v3 forward loop: per wave per iteration as in its code object (aiter-v3-kernels.md section 4)") {
  const auto pp = test::build(d128(1024), "aiter-v3", Direction::fwd);
  const OpCost c = total(pp.kernels.at(0).body);
  CHECK(c.mfma == 32);          // 32 x v_mfma_f32_32x32x8_bf16
  CHECK(c.valu == 170);         // rtna
  CHECK(c.trans == 17);         // 16 exp for P + 1 rescale
  CHECK(c.mask_valu == 66);     // the causal kernel's masking blocks (fwd_hd128_bf16_causal_rtna.co)
  CHECK(c.lds_read == 16384);
  CHECK(c.lds_write == 2048);   // 1024 ds_write + 1024 LDS-DMA
  CHECK(c.barriers == 5);
  // Issue-only turns, the mean of the two loop copies: (297 - 32 - 170 - 17 - 10.5 s_nop + 72.5 wait
  // states + 293.5 - 32 - 170 - 17 - 8 + 52) / 2 = 129.25, rounded.
  CHECK(c.issue_only == 129);
  CHECK(test::op_named(pp.kernels[0].prologue, "setup").cost.issue_only == 564 - 16 - 219 - 19);
  CHECK(test::op_named(pp.kernels[0].epilogue, "finalize").cost.issue_only == 569 - 16 - 450 - 4);
  CHECK(pp.kernels[0].waves == 8);
  CHECK(pp.kernels[0].outer_rows == 256);
  CHECK(pp.kernels[0].inner_rows == 32);
}

TEST_CASE("aiter-v3 backward loop: per wave per iteration as in its code object") {
  const auto pp = test::build(d128(1536), "aiter-v3", Direction::bwd);
  REQUIRE(pp.kernels.size() == 4);  // preprocess, zero dq_acc, main, convert
  CHECK(pp.kernels[0].kind == KernelKind::preprocess);
  CHECK(pp.kernels[1].kind == KernelKind::zero_dq_acc);
  CHECK(pp.kernels[2].kind == KernelKind::bwd_main);
  CHECK(pp.kernels[3].kind == KernelKind::convert_dq);
  const OpCost c = total(pp.kernels[2].body);
  CHECK(c.mfma == 120);   // 5 GEMMs x 24 v_mfma_f32_16x16x16_bf16
  CHECK(c.valu == 172);       // bwd_hd128_bf16_a32_rtna_psskddv.co: aiter's default rtna conversion
  CHECK(c.mask_valu == 45);   // causal_br_a32_rtna_psskddv.co's masking blocks
  CHECK(c.trans == 12);
  CHECK(c.lds_read == 25088);
  CHECK(c.lds_write == 7936);  // 7680 ds_write + 256 LDS-DMA
  CHECK(c.barriers == 6);
  CHECK(c.issue_only == 117);  // 420.5 instructions - 120 MFMA - 172 VALU - 12 exp = 116.5, rounded
  CHECK(test::op_named(pp.kernels[2].prologue, "setup").cost.issue_only == 1795 - 826 - 1);
  CHECK(test::op_named(pp.kernels[2].epilogue, "finalize").cost.issue_only == 1546 - 1302);
  const auto& atomic = test::op_named(pp.kernels[2].body, "atomic_dq");
  CHECK(atomic.tensor == TensorId::dq_acc);
}

TEST_CASE("fa3: a warpgroup MMA reads its shared-memory operands once for its four warps") {
  // WGMMA-GUIDE; FA-SCHED B4 (d128, kBlockN = 176 non-causal, P V with P in registers). Per
  // warpgroup per iteration: Q's 64-row slice (16 KiB) and K (44 KiB) for Q K^T, V (44 KiB) for
  // P V; each of its four waves is charged a quarter: (16384 + 2 x 45056) / 4 = 26624 B.
  Problem p = d128(4096);
  p.causal = false;
  const auto pp = test::build(p, "fa3", Direction::fwd);
  REQUIRE(pp.kernels[0].inner_rows == 176);
  CHECK(total(pp.kernels[0].body).lds_read == 26624);
  // Backward (kBlockM 80, kBlockN 128, two warpgroups; P and dS from registers for dV and dK):
  // S^T, dP^T and dQ^T read 84 KiB each, dV and dK 40 KiB each, and the TMA reads dQ's 40 KiB of
  // partial sums back (FA3-SRC): 372 KiB per iteration for 8 waves. Written: Q and dO (40 KiB), dS
  // (20 KiB) and dQ's partial sums (40 KiB), 100 KiB, charged on the loads.
  const auto bwd = test::build(p, "fa3", Direction::bwd);
  const auto& main = bwd.kernels.at(2);
  REQUIRE(main.kind == KernelKind::bwd_main);
  CHECK(static_cast<double>(total(main.body).lds_read) == doctest::Approx(372.0 * 1024 / 8).epsilon(0.001));
  CHECK(static_cast<double>(total(main.body).lds_write) * main.waves == doctest::Approx(100.0 * 1024).epsilon(0.001));
}

TEST_CASE("fa3: a warpgroup MMA of any N in steps of 8 issues the tile's FLOPs without padding to N = 256") {
  // PTX-ISA: wgmma .m64nNk16, N = 8..256 in steps of 8; the configs count its work in N = 8 slices
  // (m64n8k16: 16384 FLOP, 4 cycles). FA-SCHED B4, d128 non-causal: kBlockM 128, kBlockN 176, two
  // MMA warpgroups (8 waves). Q K^T per iteration: 2 x 128 x 176 x 128 = 5767168 FLOP = 352 slices,
  // 44 per wave; each warpgroup issues its 64 rows as 128 / 16 = 8 m64n176k16 instructions, every
  // one of its waves issuing each. P V (N = d = 128, K = 176): the same FLOPs, 44 slices per wave,
  // 176 / 16 = 11 m64n128k16 instructions. With one N = 256 instruction per 176 columns the work
  // was 256 / 176 = 1.45 times the tile's.
  Problem p = d128(4096);
  p.causal = false;
  p.dtype = Dtype::fp16;
  const auto pp = test::build(p, "fa3", Direction::fwd);
  const KernelProgram& kp = pp.kernels[0];
  REQUIRE(kp.inner_rows == 176);
  CHECK(kp.mfma_flops == doctest::Approx(2.0 * 64 * 8 * 16));
  const OpCost& qk = test::op_named(kp.body, "qk").cost;
  const OpCost& pv = test::op_named(kp.body, "pv").cost;
  CHECK(qk.mfma == 44);
  CHECK(qk.issued_mfma() == 8);
  CHECK(pv.mfma == 44);
  CHECK(pv.issued_mfma() == 11);
  CHECK(static_cast<double>(qk.mfma + pv.mfma) * kp.waves * kp.mfma_flops == doctest::Approx(4.0 * 128 * 176 * 128));
  // A fixed-shape instruction counts instructions: aiter-v3's 32x32x8 MFMA (16384 FLOP), 256 x 32
  // tile, 8 waves: Q K^T 2 x 256 x 32 x 128 / 16384 / 8 = 16 per wave, issued as counted.
  const auto aiter = test::build(d128(4096), "aiter-v3", Direction::fwd);
  const OpCost& aqk = test::op_named(aiter.kernels[0].body, "qk").cost;
  CHECK(aqk.mfma == 16);
  CHECK(aqk.mfma_issued == 0);
  CHECK(aqk.issued_mfma() == 16);
}

TEST_CASE("fa2 and fa3 forward: the softmax's VALU and exp per iteration as counted from their source") {
  // FA2-SRC / FA3-SRC: per score a max, an FFMA, an add and half a 16-bit pack (3.5), per O element
  // a rescale multiply (d / kBlockN per score); per thread's row one exp2 for the running max; a
  // causal tile's mask a compare and a select per score. Per warp (32 lanes) and iteration:
  // fa3 128 x 176 over 8 MMA warps = 88 scores per lane: VALU 88 x 3.5 + 88 x 128 / 176 = 372,
  // exp 88 + 2 (2 rows per thread), mask 176.
  Problem p = d128(4096);
  p.causal = false;
  const OpCost fa3 = total(test::build(p, "fa3", Direction::fwd).kernels[0].body);
  CHECK(fa3.valu == 372);
  CHECK(fa3.trans == 90);
  CHECK(fa3.mask_valu == 176);
  // fa2 128 x 64 over 4 warps = 64 scores per lane: VALU 64 x (3.5 + 128 / 64) = 352, exp 64 + 4
  // (4 rows per thread: 32 rows per warp in m16n8 fragments), mask 128.
  const OpCost fa2 = total(test::build(p, "fa2", Direction::fwd).kernels[0].body);
  CHECK(fa2.valu == 352);
  CHECK(fa2.trans == 68);
  CHECK(fa2.mask_valu == 128);
  // fa2's shared memory from its MMA layout (4 warps along M, Q read from shared memory, P from
  // registers): each warp reads 32 rows of Q and the whole K and V tiles, 8 + 16 + 16 = 40 KiB.
  CHECK(fa2.lds_read == 40 * 1024);
}

TEST_CASE("fa2 backward: VALU per score from its source and shared-memory reads from its MMA layouts") {
  // FA2-SRC flash_bwd_kernel.h, d = 128, kBlockM 64, kBlockN 128, 8 warps: 64 x 128 / 8 = 1024 scores
  // per warp = 32 per lane. VALU 4 per score and lane (P's FFMA, dS's two, two halves of a pack): 128;
  // one exp per score: 32. Shared-memory reads per iteration: S and dP 128 KiB each (2 x 4 warps), dV
  // and dK 96 KiB each (4 x 2), dQ 128 KiB (2 x 4): 576 KiB, 72 KiB per wave.
  Problem p = d128(4096);
  p.causal = false;
  const auto bwd = test::build(p, "fa2", Direction::bwd);
  const KernelProgram* main = main_kernel(bwd);
  REQUIRE(main != nullptr);
  const OpCost c = total(main->body);
  CHECK(c.valu == 128);
  CHECK(c.trans == 32);
  CHECK(c.lds_read == 72 * 1024);
}

TEST_CASE("fa2 issues the instructions per warp the H200 measured and waits as measured") {
  // h200_torch_fa2_ncu_raw_20261204.csv (B = 4, 16 heads, N = 4096, d = 128), smsp__inst_executed
  // over the warps (8,192 forward, 16,384 backward): dense 78,897.0 and 65,006.0 per warp, causal
  // 41,580.7 and 36,652.0. A warp's fixed part F plus I per iteration: dense F + 64 I; causal
  // F + 33 I (on average) plus two masked iterations' mask VALU (128 forward, 64 backward), so
  // 31 I = dense - causal + 2 x mask: I = (78,897.0 - 41,580.7 + 256) / 31 = 1,212.0 forward and
  // (65,006.0 - 36,652.0 + 128) / 31 = 918.8 backward.
  const double fwd_measured = (646'324'224.0 / 8192 - 340'629'248.0 / 8192 + 2 * 128) / 31;
  const double bwd_measured = (1'065'058'304.0 / 16384 - 600'506'368.0 / 16384 + 2 * 64) / 31;
  const auto issued = [](const OpCost& c) {
    return static_cast<double>(c.issued());
  };
  Problem p = d128(4096);
  p.causal = false;
  const auto fwd = test::build(p, "fa2", Direction::fwd);
  CHECK(std::abs(issued(total(fwd.kernels.front().body)) - fwd_measured) <= 1.0);
  const auto bwd = test::build(p, "fa2", Direction::bwd);
  const KernelProgram* main = main_kernel(bwd);
  REQUIRE(main != nullptr);
  CHECK(std::abs(issued(total(main->body)) - bwd_measured) <= 1.0);
  // stall_wait per issued instruction: 1.34 forward (both kernels); backward 2.22 and 2.07, whose
  // iterations' instructions took (2.22 x 65,006.0 - 2.07 x 36,652.0) / (31 x 918.8 - 128) = 2.41
  // each. Every compute operation of a loop waits so; its memory operations (issued by the L1) and
  // the loop-free kernels do not.
  const auto waits = [](const CompiledBody& b, float expected) {
    for (const auto& op : b.ops) {
      CAPTURE(static_cast<int>(op.pipe));
      const bool computes = op.pipe == Pipe::matrix || op.pipe == Pipe::vector;
      CHECK(op.cost.issue_wait == doctest::Approx(computes ? expected : 0.0f));
    }
  };
  waits(fwd.kernels.front().body, 1.34f);
  waits(main->body, 2.41f);
  // The rest of each warp's instructions, its fixed part F = dense - 64 I (1,329 forward, 6,203
  // backward), are the prologue's and epilogue's together; their waits: 1.34 forward, and in the
  // backward (2.22 x 65,006.0 - 64 x 918.8 x 2.414) / 6,203 = 0.38 per instruction.
  const auto fixed = [&](const KernelProgram& kp) { return issued(total(kp.prologue)) + issued(total(kp.epilogue)); };
  CHECK(std::abs(fixed(fwd.kernels.front()) - (646'324'224.0 / 8192 - 64 * fwd_measured)) <= 2.0);
  CHECK(std::abs(fixed(*main) - (1'065'058'304.0 / 16384 - 64 * bwd_measured)) <= 3.0);
  waits(fwd.kernels.front().prologue, 1.34f);
  waits(fwd.kernels.front().epilogue, 1.34f);
  waits(main->prologue, 0.38f);
  waits(main->epilogue, 0.38f);
  for (const auto& kp : bwd.kernels) {
    if (kp.kind != KernelKind::bwd_main) waits(kp.prologue, 0.0f);
  }
  // FA3's own code was not measured: its loops keep aiter's issue-only density and wait on nothing.
  const auto fa3 = test::build(p, "fa3", Direction::fwd);
  waits(fa3.kernels.front().body, 0.0f);
  waits(fa3.kernels.front().prologue, 0.0f);
  CHECK(fixed(fa3.kernels.front()) == 1101.0);  // aiter's prologue and epilogue, 548 + 553
  // A what-if on any kernel reaches its loops' compute operations; a bad value is named.
  const KernelSchedule w = parse_kernel_spec("aiter-v3,fwd.loop.issue_wait_per_instruction=3");
  CHECK(w.fwd.loop.source.rfind("overridden (--kernel)", 0) == 0);
  waits(workloads::build_pass(d128(1024), w, Direction::fwd, test::gpu("mi300x")).kernels.front().body, 3.0f);
  CHECK(spec_error("fa2,bwd.loop.issue_wait_per_instruction=-2") ==
        "--kernel fa2,bwd.loop.issue_wait_per_instruction=-2: error: key 'bwd.loop.issue_wait_per_instruction': "
        "expected a non-negative number, got \"-2\"");
}

TEST_CASE("ref-cuda's loops: the shared-memory wavefronts per warp and iteration the H200 measured") {
  // H200-REF (validation/measurements/h200_detail_20261204/ncu_raw.csv,
  // l1tex__data_pipe_lsu_wavefronts_mem_shared.sum; B = 1, 16 heads, N = 4096, 1,024 workgroups of 4
  // warps): forward 1,282,251,312 (d = 128) and 996,698,161 (d = 64) over 64 iterations, main backward
  // 1,781,344,388 and 959,339,794 over 128, per warp and iteration 4,891.4, 3,802.1, 3,397.6, 1,829.8.
  // The preset splits them into a part per tile byte and one per score; at both head dimensions the
  // loop's operations add up to the measured count (each op's share rounded to a whole wavefront).
  const struct {
    std::uint32_t d;
    double fwd, bwd;
  } measured[] = {{128, 1'282'251'312.0 / (4096 * 64), 1'781'344'388.0 / (4096 * 128)},
                  {64, 996'698'161.0 / (4096 * 64), 959'339'794.0 / (4096 * 128)}};
  for (const auto& m : measured) {
    CAPTURE(m.d);
    Problem p = d128(4096);
    p.causal = false;
    p.head_dim_qk = p.head_dim_v = m.d;
    const auto fwd = test::build(p, "ref-cuda", Direction::fwd);
    CHECK(std::abs(total(fwd.kernels.front().body).lds_wavefronts - m.fwd) <= 2.0);
    const auto bwd = test::build(p, "ref-cuda", Direction::bwd);
    const KernelProgram* main = main_kernel(bwd);
    REQUIRE(main != nullptr);
    CHECK(std::abs(total(main->body).lds_wavefronts - m.bwd) <= 3.0);
  }
  // The kernels whose LDS accesses are wide and free of conflicts keep their bytes' time.
  Problem p = d128(4096);
  CHECK(total(test::build(p, "aiter-v3", Direction::fwd).kernels.front().body).lds_wavefronts == 0);
  CHECK(total(test::build(p, "ref-hip", Direction::fwd).kernels.front().body).lds_wavefronts == 0);
}

TEST_CASE("ref-cuda's loops issue the instructions per warp and iteration the H200 measured at both head dimensions") {
  // H200-REF (ncu_raw.csv, smsp__inst_executed; B = 1, 16 heads, N = 4096, 1,024 workgroups of 4
  // warps): forward 1,813,905,408 (d = 128) and 1,163,825,152 (d = 64) over 64 iterations, main
  // backward 2,218,967,040 and 1,396,056,064 over 128. Every instruction of the loops' compute
  // operations waits 1.92 cycles (stall_wait at d = 128).
  const struct {
    std::uint32_t d;
    double fwd, bwd;
  } measured[] = {{128, 1'813'905'408.0 / (4096 * 64), 2'218'967'040.0 / (4096 * 128)},
                  {64, 1'163'825'152.0 / (4096 * 64), 1'396'056'064.0 / (4096 * 128)}};
  const auto issued = [](const CompiledBody& b) {
    double n = 0;
    for (const auto& op : b.ops) {
      n += static_cast<double>(op.cost.issued());
      const bool computes = op.pipe == Pipe::matrix || op.pipe == Pipe::vector;
      CHECK(op.cost.issue_wait == doctest::Approx(computes ? 1.92f : 0.0f));
    }
    return n;
  };
  for (const auto& m : measured) {
    CAPTURE(m.d);
    Problem p = d128(4096);
    p.causal = false;
    p.head_dim_qk = p.head_dim_v = m.d;
    CHECK(std::abs(issued(test::build(p, "ref-cuda", Direction::fwd).kernels.front().body) - m.fwd) <= 2.0);
    const auto bwd = test::build(p, "ref-cuda", Direction::bwd);
    const KernelProgram* main = main_kernel(bwd);
    REQUIRE(main != nullptr);
    CHECK(std::abs(issued(main->body) - m.bwd) <= 2.0);
  }
  // The part that grows with d sits on the matrix products: Q K^T's issue-only instructions at
  // d = 128 are (6,418.6 - 4,002.7) / 64 x 128 / 2 = 2,416 (half the per-d part).
  Problem p = d128(4096);
  p.causal = false;
  const auto fwd = test::build(p, "ref-cuda", Direction::fwd);
  CHECK(std::abs(static_cast<double>(test::op_named(fwd.kernels.front().body, "qk").cost.issue_only) - 2416.0) <= 1.0);
}

TEST_CASE("aiter-v3-a16 uses 16-bit dQ atomics and no convert kernel") {
  const auto pp = test::build(d128(1536), "aiter-v3-a16", Direction::bwd);
  REQUIRE(pp.kernels.size() == 3);
  CHECK(test::op_named(pp.kernels[2].body, "atomic_dq").tensor == TensorId::dq);
  CHECK(total(pp.kernels[2].body).valu == 182);
}

TEST_CASE("the dQ memset and the dK/dV group sum can be left to the caller outside the pass") {
  // aiter's C++ API (aiter::mha_bwd, which op_tests/cpp/mha/benchmark_mha_bwd.cpp times) launches
  // odo, dqdkdv and dq_convert only: dq_acc is zeroed when allocated and dK/dV stay per query head.
  Problem p = d128(1024);
  p.heads_q = 8;
  p.heads_kv = 2;
  const auto kinds = [](const std::vector<KernelProgram>& ks) {
    std::vector<KernelKind> out;
    for (const auto& k : ks) out.push_back(k.kind);
    return out;
  };
  const auto pass = test::build(p, "aiter-v3", Direction::bwd);
  CHECK(kinds(pass.kernels) == std::vector<KernelKind>{KernelKind::preprocess, KernelKind::zero_dq_acc, KernelKind::bwd_main,
                                                      KernelKind::convert_dq, KernelKind::reduce_dkdv});
  CHECK(pass.caller_before.empty());
  CHECK(pass.caller_after.empty());
  const auto api = test::build(p, "aiter-v3,bwd.zero_dq_acc=false,bwd.sum_dkdv=false", Direction::bwd);
  CHECK(kinds(api.kernels) == std::vector<KernelKind>{KernelKind::preprocess, KernelKind::bwd_main, KernelKind::convert_dq});
  CHECK(kinds(api.caller_before) == std::vector<KernelKind>{KernelKind::zero_dq_acc});
  CHECK(kinds(api.caller_after) == std::vector<KernelKind>{KernelKind::reduce_dkdv});
  // The main kernel still writes dK/dV per query head.
  CHECK(test::op_named(api.kernels[1].epilogue, "store_dk").tensor == TensorId::dk_expanded);
}

TEST_CASE("two-pass and split backward kernels and GQA by expansion adds the reduction") {
  Problem p = d128(512);
  p.heads_q = 8;
  p.heads_kv = 2;
  const auto tri = test::build(p, "triton-amd", Direction::bwd);
  std::vector<KernelKind> kinds;
  for (const auto& k : tri.kernels) kinds.push_back(k.kind);
  CHECK(kinds == std::vector<KernelKind>{KernelKind::preprocess, KernelKind::bwd_main, KernelKind::bwd_dq});
  CHECK(tri.kernels[1].heads == 2);  // kv_loop: one workgroup per KV head
  const auto ck_split = test::build(p, "ck,bwd.dq=split", Direction::bwd);
  kinds.clear();
  for (const auto& k : ck_split.kernels) kinds.push_back(k.kind);
  CHECK(kinds == std::vector<KernelKind>{KernelKind::preprocess, KernelKind::zero_dq_acc, KernelKind::bwd_main,
                                         KernelKind::convert_dq, KernelKind::reduce_dkdv});
  CHECK(ck_split.dq_slices == 4);  // 512 keys / 128 per block
}

TEST_CASE("--kernel overrides fields and reports bad specs by name") {
  const KernelSchedule k = parse_kernel_spec("aiter-v3,fwd.block_n=64,bwd.dq=split,bwd.gqa=kv_loop");
  CHECK(k.fwd.block_n == 64);
  CHECK(k.bwd.dq == DqMode::split);
  CHECK(k.bwd.gqa == GqaMode::kv_loop);
  CHECK(k.name == "aiter-v3,fwd.block_n=64,bwd.dq=split,bwd.gqa=kv_loop");
  CHECK(spec_error("flash9") == "--kernel flash9: error: unknown kernel preset 'flash9'; presets: aiter-v3, "
                                "aiter-v3-a16, ck, triton-amd, aotriton, fa2, fa3, ref-hip, ref-cuda");
  CHECK(spec_error("ck,bwd.dq=fast") ==
        "--kernel ck,bwd.dq=fast: error: key 'bwd.dq': expected one of atomic, two_pass, split, got \"fast\"");
  CHECK(spec_error("ck,fwd.block_m=0") ==
        "--kernel ck,fwd.block_m=0: error: key 'fwd.block_m': expected an integer in [1, 4096], got \"0\"");
  CHECK(spec_error("ck,fwd.block_m=102") ==
        "--kernel ck,fwd.block_m=102: error: key 'fwd.block_m': 102 query rows do not split evenly over 4 waves");
  CHECK(spec_error("ck,fwd.tile=4").find("key 'fwd.tile': unknown schedule field; fields: fwd.block_m") !=
        std::string::npos);
  CHECK(spec_error("ck,bwd.dq=two_pass,bwd.dq_acc_fp32=false").find("key 'bwd.dq_acc_fp32'") != std::string::npos);
  CHECK(spec_error("ref-cuda,bwd.atomic_requests_per_sector=0") ==
        "--kernel ref-cuda,bwd.atomic_requests_per_sector=0: error: key 'bwd.atomic_requests_per_sector': expected an "
        "integer in [1, 8], got \"0\"");
  // The validation kernels' atomicAdd per accumulator element: half a sector per instruction on
  // NVIDIA (mma.sync's C layout), a row's 64 contiguous bytes on AMD (the 16x16 MFMA's).
  CHECK(parse_kernel_spec("ref-cuda").bwd.atomic_requests_per_sector == 2);
  CHECK(parse_kernel_spec("ref-hip").bwd.atomic_requests_per_sector == 1);
  CHECK(parse_kernel_spec("aiter-v3").bwd.atomic_requests_per_sector == 1);
  // A persistent kernel overlaps its tiles through producer waves; a kernel without them is refused.
  CHECK(spec_error("ck,fwd.persistent=true") ==
        "--kernel ck,fwd.persistent=true: error: key 'fwd.persistent': a persistent kernel needs producer waves "
        "(fwd.load_waves > 0) to load its next tile");
  CHECK(spec_error("fa3,bwd.load_waves=0,bwd.persistent=true").find("key 'bwd.persistent'") != std::string::npos);
  CHECK(parse_kernel_spec("fa3,bwd.persistent=true").bwd.persistent);
}

TEST_CASE("fa3's forward is a persistent kernel and its backward is not (FA-SCHED B4)") {
  // flash_fwd_launch_template.h: sm90 forward kernels use a persistent tile scheduler unless split;
  // the backward's schedulers (SingleTileScheduler, SingleTileBwdLPTScheduler) launch a CTA per tile.
  const KernelSchedule k = *preset("fa3");
  CHECK(k.fwd.persistent);
  CHECK_FALSE(k.bwd.persistent);
  for (const auto& name : preset_names()) {
    CAPTURE(name);
    if (name != "fa3") CHECK_FALSE(preset(name)->fwd.persistent);
  }
  Problem p = d128(512);
  CHECK(test::build(p, "fa3", Direction::fwd).kernels.at(0).persistent);
  for (const auto& kp : test::build(p, "fa3", Direction::bwd).kernels) CHECK_FALSE(kp.persistent);
}

TEST_CASE("every preset names its sources") {
  for (const auto& name : preset_names()) {
    CAPTURE(name);
    const KernelSchedule k = *preset(name);
    CHECK_FALSE(k.source.empty());
    for (const auto* d : {&k.fwd.loop, &k.bwd.loop, &k.bwd.dq_loop}) CHECK_FALSE(d->source.empty());
    for (const auto* m : {&k.fwd.prologue, &k.fwd.epilogue, &k.bwd.prologue, &k.bwd.epilogue, &k.bwd.preprocess,
                          &k.bwd.convert}) {
      CHECK_FALSE(m->source.empty());
    }
  }
}

TEST_CASE("a schedule that does not fit the GPU is refused") {
  CHECK_THROWS_WITH_AS(test::build(d128(256), "ck,fwd.lds_bytes=100000", Direction::fwd),
                       "--kernel ck,fwd.lds_bytes=100000: error: key 'fwd.lds_bytes': 100000 B of LDS exceed the AMD "
                       "Instinct MI300X limit of 64 KiB per workgroup",
                       arch::ConfigError);
  CHECK_THROWS_WITH_AS(test::build(d128(256), "ck,fwd.waves=32,fwd.block_m=128", Direction::fwd),
                       "--kernel ck,fwd.waves=32,fwd.block_m=128: error: key 'fwd.waves': 32 waves of 64 exceed the "
                       "AMD Instinct MI300X workgroup limit of 1024 threads",
                       arch::ConfigError);
}

TEST_CASE("XCD remapping is a bijection that gives each XCD a contiguous chunk") {
  for (std::uint64_t w : {1, 7, 8, 9, 100, 304}) {
    std::vector<int> seen(w, 0);
    for (std::uint64_t id = 0; id < w; ++id) seen[remap_for_xcds(id, w, 8)]++;
    for (int s : seen) CHECK(s == 1);
  }
  // 16 workgroups over 8 XCDs: XCD 0 (ids 0 and 8) runs logical 0 and 1; XCD 1 (ids 1, 9) runs 2 and 3.
  CHECK(remap_for_xcds(0, 16, 8) == 0);
  CHECK(remap_for_xcds(8, 16, 8) == 1);
  CHECK(remap_for_xcds(1, 16, 8) == 2);
  CHECK(remap_for_xcds(9, 16, 8) == 3);
  CHECK(remap_for_xcds(5, 16, 1) == 5);
  // The remapped forward still computes every block once.
  Problem p = d128(1024);
  p.heads_q = 3;
  p.heads_kv = 3;
  const auto pp = test::build(p, "ck,fwd.xcd_remap=8", Direction::fwd);
  std::vector<int> blocks(pp.kernels[0].workgroups(), 0);
  for (std::uint64_t id = 0; id < blocks.size(); ++id) {
    const Pass ps = pp.kernels[0].pass(id, 0);
    blocks[ps.head * pp.kernels[0].blocks + ps.outer]++;
  }
  for (int b : blocks) CHECK(b == 1);
}

TEST_CASE("a finished workgroup cursor stays finished") {
  Problem p = d128(1280);
  p.causal = true;
  const auto pp = test::build(p, "aiter-v3", Direction::bwd);
  WorkgroupCursor cur(pp, pp.kernels[2], 0);
  TileOp op;
  std::uint64_t n = 0;
  while (cur.next(op)) ++n;
  CHECK(n > 0);
  CHECK_FALSE(cur.next(op));
  CHECK_FALSE(cur.next(op));
}

TEST_CASE("a filtered workgroup cursor yields the listed operations of the unfiltered one in order") {
  Problem p = d128(1280);
  p.causal = true;
  const auto pp = test::build(p, "aiter-v3", Direction::bwd);
  const auto& kp = pp.kernels[2];  // the main backward kernel: loop iterations, causal masking
  // Keep the memory operations only; the epilogue keeps none (it must be skipped whole).
  workloads::OpFilter filter;
  for (std::uint8_t b = 0; b < 2; ++b) {
    const auto& body = b == 0 ? kp.prologue : kp.body;
    for (std::uint16_t i = 0; i < body.ops.size(); ++i) {
      if (body.ops[i].pipe == workloads::Pipe::memory) filter.ops[b].push_back(i);
    }
  }
  REQUIRE_FALSE(filter.ops[1].empty());
  for (std::uint64_t wg : {std::uint64_t{0}, kp.workgroups() - 1}) {
    WorkgroupCursor all(pp, kp, wg), some(pp, kp, wg, &filter);
    TileOp a, f;
    std::uint64_t kept = 0;
    while (all.next(a)) {
      if (a.body == 2 || a.op->pipe != workloads::Pipe::memory) continue;
      REQUIRE(some.next(f));
      CHECK(f.op == a.op);
      CHECK(f.index == a.index);
      CHECK(f.body == a.body);
      CHECK(f.iteration == a.iteration);
      CHECK(f.pass == a.pass);
      CHECK(f.masked == a.masked);
      ++kept;
    }
    CHECK(kept > 0);
    CHECK_FALSE(some.next(f));
  }
}

TEST_CASE("instruction densities are overridable and marked as such") {
  const KernelSchedule k = parse_kernel_spec("aiter-v3,fwd.loop.valu_per_score_lane=5.5,bwd.loop.barriers=3");
  CHECK(k.fwd.loop.valu_per_score_lane == 5.5);
  CHECK(k.fwd.loop.source.rfind("overridden (--kernel); was: AITER-CO", 0) == 0);
  CHECK(k.bwd.loop.barriers == 3);
  const auto pp = workloads::build_pass(d128(1024), k, Direction::fwd, test::gpu("mi300x"));
  CHECK(test::op_named(pp.kernels[0].body, "softmax").cost.valu == 88);  // 5.5 x 16 score lanes
  CHECK(spec_error("ck,fwd.loop.valu_per_score_lane=-1") ==
        "--kernel ck,fwd.loop.valu_per_score_lane=-1: error: key 'fwd.loop.valu_per_score_lane': expected a "
        "non-negative number, got \"-1\"");
  // The LDS wavefront densities: a what-if on a kernel that has none reaches its operations (K's
  // 32 x 128 x 2 B tile at 0.5 per byte: 4096 on Q K^T; 16 score lanes x 10 on the softmax).
  const KernelSchedule w =
      parse_kernel_spec("aiter-v3,fwd.loop.lds_wavefronts_per_tile_byte=0.5,fwd.loop.lds_wavefronts_per_score_lane=10");
  CHECK(w.fwd.loop.source.rfind("overridden (--kernel)", 0) == 0);
  const auto wp = workloads::build_pass(d128(1024), w, Direction::fwd, test::gpu("mi300x"));
  CHECK(test::op_named(wp.kernels[0].body, "qk").cost.lds_wavefronts == 4096);
  CHECK(test::op_named(wp.kernels[0].body, "softmax").cost.lds_wavefronts == 160);
  // Issue-only instructions per tile byte go to the matrix products the same way (aiter's own
  // issue-only instructions sit on its softmax: none on Q K^T before).
  const KernelSchedule t = parse_kernel_spec("aiter-v3,fwd.loop.issue_only_per_tile_byte=0.25");
  const auto tp = workloads::build_pass(d128(1024), t, Direction::fwd, test::gpu("mi300x"));
  CHECK(test::op_named(tp.kernels[0].body, "qk").cost.issue_only == 2048);
  CHECK(test::op_named(tp.kernels[0].body, "pv").cost.issue_only == 2048);
  CHECK(spec_error("fa2,bwd.loop.lds_wavefronts_per_score_lane=x") ==
        "--kernel fa2,bwd.loop.lds_wavefronts_per_score_lane=x: error: key 'bwd.loop.lds_wavefronts_per_score_lane': "
        "expected a non-negative number, got \"x\"");
}

TEST_CASE("a batching workgroup cursor covers the iterations of the unbatched one in steps") {
  // Causal backward, 1280 keys: passes of different lengths, masked diagonal tiles. With a batch
  // of 4 the first and last iteration of each pass are steps of their own and the iterations
  // between go 4 per step; every step carries the mask count of the iterations it covers.
  Problem p = d128(1280);
  p.causal = true;
  const auto pp = test::build(p, "aiter-v3", Direction::bwd);
  const auto& kp = pp.kernels[2];
  const std::uint16_t first_op = 0;  // count each loop step once, at its first operation
  for (std::uint64_t wg : {std::uint64_t{0}, kp.workgroups() / 2, kp.workgroups() - 1}) {
    CAPTURE(wg);
    // The unbatched cursor: per pass, the loop's iterations and which of them are masked.
    std::vector<std::vector<bool>> masked_of_pass;
    WorkgroupCursor one(pp, kp, wg);
    TileOp a;
    while (one.next(a)) {
      if (a.body != 1 || a.index != first_op) continue;
      if (a.pass >= masked_of_pass.size()) masked_of_pass.resize(a.pass + 1);
      CHECK(a.first == a.iteration);
      CHECK(a.count == 1);
      masked_of_pass[a.pass].push_back(a.masked);
    }
    REQUIRE_FALSE(masked_of_pass.empty());
    WorkgroupCursor four(pp, kp, wg, nullptr, 4);
    std::vector<std::uint64_t> next_first(masked_of_pass.size(), 0);
    std::uint64_t steps = 0;
    while (four.next(a)) {
      if (a.body != 1 || a.index != first_op) continue;
      const auto& masked = masked_of_pass[a.pass];
      const std::uint64_t n = masked.size();
      CHECK(a.first == next_first[a.pass]);  // contiguous, in order
      const std::uint32_t expected = a.first == 0 || a.first == n - 1 ? 1 : static_cast<std::uint32_t>(std::min<std::uint64_t>(4, n - 1 - a.first));
      CHECK(a.count == expected);
      std::uint32_t m = 0;
      for (std::uint64_t i = a.first; i < a.first + a.count; ++i) m += masked[i] ? 1 : 0;
      CHECK(a.masked_count == m);
      CHECK(a.masked == (m > 0));
      next_first[a.pass] = a.first + a.count;
      ++steps;
    }
    for (std::size_t ps = 0; ps < masked_of_pass.size(); ++ps) CHECK(next_first[ps] == masked_of_pass[ps].size());
    CHECK(steps > 0);
  }
}

TEST_CASE("longest_first: sections of heads in turn with the heads fastest and the longest blocks first") {
  // fa3 forward, causal, N = 256: two query blocks per head, the last one (two key blocks of 128)
  // longer than the first (one). K and V of a head: 256 x (128 + 128) x 2 B = 128 KiB, so 256 KiB
  // of L2 per section holds 2 heads; 3 heads make a section of 2 and a last one of 1.
  Problem p = d128(256);
  p.heads_q = p.heads_kv = 3;
  p.causal = true;
  const auto pp = test::build(p, "fa3,fwd.l2_section_bytes=262144", Direction::fwd);
  const KernelProgram& kp = pp.kernels.at(0);
  REQUIRE(kp.grid == GridOrder::longest_first);
  CHECK(kp.section_heads == 2);
  REQUIRE(kp.workgroups() == 6);
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> expected{{1, 0}, {1, 1}, {0, 0}, {0, 1}, {1, 2}, {0, 2}};
  for (std::uint64_t id = 0; id < 6; ++id) {
    CAPTURE(id);
    CHECK(kp.grid_coord(id).block == expected[id].first);
    CHECK(kp.grid_coord(id).head == expected[id].second);
  }
  // 0 bytes: one section of every head (3, not a power of two).
  CHECK(test::build(p, "fa3,fwd.l2_section_bytes=0", Direction::fwd).kernels.at(0).section_heads == 3);
  // A dense grid has tiles of equal length: FA3 orders it blocks first (its static scheduler).
  p.causal = false;
  const auto dense = test::build(p, "fa3,fwd.l2_section_bytes=262144", Direction::fwd);
  CHECK(dense.kernels.at(0).grid == GridOrder::blocks_first);
}

TEST_CASE("aotriton launches a head's tiles one after another and triton-amd the heads of one tile") {
  // AOTriton's grids (ROCm/aotriton v2src/flash/attn_fwd.cc, attn_bwd.cc): (tiles, heads, batch),
  // the tile fastest; aiter's Triton backend: (heads, tiles, batch). N = 512: 4 query tiles of
  // 128 (forward), 8 key blocks of 64 (AOTriton's dK/dV kernel), 8 query blocks of 64 (its dQ
  // kernel); 4 query heads on 2 KV heads.
  Problem p = d128(512);
  p.heads_q = 4;
  p.heads_kv = 2;
  const KernelProgram aot_fwd = test::build(p, "aotriton", Direction::fwd).kernels.at(0);
  CHECK(aot_fwd.grid_coord(1).block == 1);
  CHECK(aot_fwd.grid_coord(1).head == 0);
  CHECK(aot_fwd.grid_coord(4).block == 0);
  CHECK(aot_fwd.grid_coord(4).head == 1);
  const KernelProgram tri_fwd = test::build(p, "triton-amd", Direction::fwd).kernels.at(0);
  CHECK(tri_fwd.grid_coord(1).block == 0);
  CHECK(tri_fwd.grid_coord(1).head == 1);
  const auto aot_bwd = test::build(p, "aotriton", Direction::bwd);
  const KernelProgram& dkdv = aot_bwd.kernels.at(1);
  const KernelProgram& dq = aot_bwd.kernels.at(2);
  REQUIRE(dkdv.kind == KernelKind::bwd_main);
  REQUIRE(dq.kind == KernelKind::bwd_dq);
  CHECK(dkdv.heads == 2);  // one workgroup per KV head and key block (grid y = K's heads)
  CHECK(dkdv.grid_coord(7).block == 7);
  CHECK(dkdv.grid_coord(7).head == 0);
  CHECK(dkdv.grid_coord(8).head == 1);
  CHECK(dq.grid_coord(9).block == 1);
  CHECK(dq.grid_coord(9).head == 1);
}

TEST_CASE("fa3's sections: the heads whose loop tensors fit its L2 share (tile_scheduler.hpp)") {
  // Forward: 32 MiB for K and V; at N = 8192 a head's are 8192 x 256 x 2 B = 4 MiB: 8 heads.
  Problem p = d128(8192);
  p.heads_q = p.heads_kv = 16;
  p.causal = true;
  CHECK(test::build(p, "fa3", Direction::fwd).kernels.at(0).section_heads == 8);
  // Grouped queries: FA3 (not packing GQA) widens the section by the query heads per KV head.
  p.heads_kv = 4;
  CHECK(test::build(p, "fa3", Direction::fwd).kernels.at(0).section_heads == 16);
  // Backward: 40 MiB for Q, dO and the fp32 dQ accumulator, 4096 x (256 x 2 + 128 x 4) B = 4 MiB a
  // head at N = 4096: 10 fit, 8 (a power of two) per section. Under the causal mask the first key
  // block sees every query block, so it goes first.
  p = d128(4096);
  p.heads_q = p.heads_kv = 16;
  p.causal = true;
  const auto bwd = test::build(p, "fa3", Direction::bwd);
  const KernelProgram* main = main_kernel(bwd);
  REQUIRE(main != nullptr);
  CHECK(main->section_heads == 8);
  CHECK(main->grid_coord(0).block == 0);
  CHECK(main->grid_coord(1).block == 0);
  CHECK(main->grid_coord(1).head == 1);
  CHECK(main->grid_coord(8).block == 1);
  // Pairing orders a masked grid already: the two are refused together.
  CHECK(spec_error("aiter-v3,fwd.grid=longest_first").find("key 'fwd.grid': longest_first orders single tiles") !=
        std::string::npos);
}

TEST_CASE("the cursor marks masked exactly the iterations iteration_masked classifies") {
  // The cursor counts a pass's masked iterations from its range of full inner blocks
  // (full_inner_blocks); iteration_masked classifies each tile against the mask. Kernels whose
  // inner blocks are keys (forwards, aiter's and FA3's) and queries (the backwards' main kernels),
  // GQA passes that walk several query heads, causal masks of both alignments, windows, unequal
  // lengths and overhanging tiles.
  struct Variant {
    const char* kernel;
    Direction direction;
    std::uint64_t nq, nk;
    bool causal;
    CausalAlign align;
    std::optional<Window> window;
  };
  const Variant variants[] = {
      {"aiter-v3", Direction::fwd, 1000, 1000, true, CausalAlign::bottom_right, std::nullopt},
      {"aiter-v3", Direction::bwd, 1280, 1280, true, CausalAlign::bottom_right, std::nullopt},
      {"ck", Direction::fwd, 700, 1500, true, CausalAlign::top_left, std::nullopt},
      {"ck", Direction::bwd, 1500, 700, true, CausalAlign::bottom_right, std::nullopt},
      {"triton-amd", Direction::fwd, 1024, 1024, false, CausalAlign::bottom_right, Window{200, 100}},
      {"triton-amd", Direction::bwd, 1100, 1100, true, CausalAlign::bottom_right, Window{300, 0}},
      {"fa3", Direction::fwd, 900, 900, true, CausalAlign::bottom_right, std::nullopt},
      {"fa2", Direction::bwd, 1024, 1024, false, CausalAlign::bottom_right, std::nullopt},
  };
  for (const Variant& v : variants) {
    Problem p = d128(v.nq);
    p.seqlen_k = v.nk;
    p.heads_q = 4;
    p.heads_kv = 2;
    p.causal = v.causal;
    p.align = v.align;
    p.window = v.window;
    CAPTURE(std::string(v.kernel));
    CAPTURE(p.describe());
    const auto pp = test::build(p, std::string(v.kernel) + ",shapes=any", v.direction);
    std::uint64_t masked = 0, full = 0;
    for (const KernelProgram& kp : pp.kernels) {
      for (std::uint64_t wg = 0; wg < kp.workgroups(); ++wg) {
        WorkgroupCursor cursor(pp, kp, wg);
        TileOp op;
        while (cursor.next(op)) {
          if (op.body != 1) continue;
          const bool expected = iteration_masked(kp, cursor.current_pass(), op.iteration);
          REQUIRE(op.masked == expected);
          ++(expected ? masked : full);
        }
      }
    }
    CHECK(full > 0);
    if (v.causal || v.window || v.nq % 64 != 0) CHECK(masked > 0);
  }
}
