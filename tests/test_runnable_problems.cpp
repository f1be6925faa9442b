// Problems a GPU can run: precompiled kernels only at the shapes their code objects cover, each with
// its own tile (the aiter v3 tables of ROCm/aiter, hsa/gfx942/fmha_v3_fwd/fmha_fwd.csv and
// fmha_v3_bwd/fmha_bwd_dqdkdv.csv), and tensors only as large as the GPU's memory.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "arch/arch_locator.h"
#include "arch/config_error.h"
#include "arch/spec_loader.h"
#include "cli_runner.h"
#include "workloads/schedule_for.h"
#include "workloads/schedule.h"
#include "workloads/tensors.h"

using namespace attnsim;
using namespace attnsim::workloads;

namespace {
Problem shape(std::uint32_t dqk, std::uint32_t dv, Dtype dtype = Dtype::bf16) {
  Problem p;
  p.head_dim_qk = dqk;
  p.head_dim_v = dv;
  p.dtype = dtype;
  return p;
}
const arch::GpuSpec& mi300x() {
  static const arch::GpuSpec gpu = arch::load_arch_file(arch::resolve_arch("mi300x")).spec;
  return gpu;
}
std::string error_of(const std::string& spec, const Problem& p, Direction d) {
  try {
    schedule_for(parse_kernel_spec(spec), p, d, mi300x(), "--kernel " + spec);
  } catch (const arch::ConfigError& e) {
    return e.what();
  }
  return "";
}
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("aiter v3 runs each head dimension with its code object's tile") {
  const KernelSchedule k = parse_kernel_spec("aiter-v3");
  // fmha_fwd.csv rows (ts_qo, ts_kv): bf16 128x128 (256, 32), bf16 192x128 (128, 32), fp8 128 (256, 64).
  const KernelSchedule f128 = schedule_for(k, shape(128, 128), Direction::fwd, mi300x(), "t");
  CHECK(f128.fwd.block_m == 256);
  CHECK(f128.fwd.block_n == 32);
  const KernelSchedule f192 = schedule_for(k, shape(192, 128), Direction::fwd, mi300x(), "t");
  CHECK(f192.fwd.block_m == 128);
  CHECK(f192.fwd.block_n == 32);
  const KernelSchedule f8 = schedule_for(k, shape(128, 128, Dtype::fp8), Direction::fwd, mi300x(), "t");
  CHECK(f8.fwd.block_n == 64);
  // fmha_bwd_dqdkdv.csv rows (ts_qo, ts): hd64 (32, 192), hd128 (16, 192), hd192 (16, 64).
  const KernelSchedule b64 = schedule_for(k, shape(64, 64), Direction::bwd, mi300x(), "t");
  CHECK(b64.bwd.block_m == 32);
  CHECK(b64.bwd.block_n == 192);
  const KernelSchedule b128 = schedule_for(k, shape(128, 128, Dtype::fp16), Direction::bwd, mi300x(), "t");
  CHECK(b128.bwd.block_m == 16);
  CHECK(b128.bwd.block_n == 192);
  const KernelSchedule b192 = schedule_for(k, shape(192, 192), Direction::bwd, mi300x(), "t");
  CHECK(b192.bwd.block_m == 16);
  CHECK(b192.bwd.block_n == 64);
  // The other direction's blocks are untouched.
  CHECK(b192.fwd.block_m == k.fwd.block_m);
}

TEST_CASE("a shape no code object covers is an error that says what exists") {
  const std::string d256 = error_of("aiter-v3", shape(256, 256), Direction::fwd);
  CHECK(contains(d256, "--kernel aiter-v3: error: key 'head_dim_qk': no fwd code object of aiter-v3 for head dimension 256"));
  CHECK(contains(d256, "d=128 (bf16; causal bottom-right), d=192:128 (bf16; causal bottom-right), d=128 (fp8; causal bottom-right)"));
  CHECK(contains(d256, "fmha_fwd.csv"));
  CHECK(contains(d256, "--kernel aiter-v3,shapes=any"));
  // The forward has no d=64 or d=192:192 code object; the backward has.
  CHECK(contains(error_of("aiter-v3", shape(64, 64), Direction::fwd), "head dimension 64;"));
  CHECK(error_of("aiter-v3", shape(64, 64), Direction::bwd).empty());
  CHECK(contains(error_of("aiter-v3", shape(192, 192), Direction::fwd), "head dimension 192;"));
  // No fp16 forward code object on gfx942; the backward has fp16 ones.
  CHECK(contains(error_of("aiter-v3", shape(128, 128, Dtype::fp16), Direction::fwd),
                 "key 'dtype': no fwd code object of aiter-v3 for fp16 at d=128"));
  CHECK(error_of("aiter-v3", shape(128, 128, Dtype::fp16), Direction::bwd).empty());
  // a16 (16-bit dQ atomics): no d=192 code object.
  CHECK(contains(error_of("aiter-v3-a16", shape(192, 192), Direction::bwd), "cover d=64 (bf16, fp16; causal top-left), d=128 (bf16, fp16; smaller d padded; causal top-left)"));
}

TEST_CASE("shapes=any and explicit block sizes take precedence over the code objects") {
  const KernelSchedule any = schedule_for(parse_kernel_spec("aiter-v3,shapes=any"), shape(256, 256), Direction::fwd, mi300x(), "t");
  CHECK(any.fwd.block_m == 256);  // the d=128 code object's tile, kept
  const KernelSchedule set = schedule_for(parse_kernel_spec("aiter-v3,bwd.block_m=16"), shape(64, 64), Direction::bwd, mi300x(), "t");
  CHECK(set.bwd.block_m == 16);   // the user's, not hd64's 32
  CHECK(set.bwd.block_n == 192);
  CHECK(contains(error_of("aiter-v3,shapes=maybe", shape(128, 128), Direction::fwd),
                 "key 'shapes': expected code_objects or any, got 'maybe'"));
  // Templated kernels (CK) compile for any head dimension.
  CHECK(error_of("ck", shape(256, 256), Direction::fwd).empty());
}

TEST_CASE("attnsim run refuses a kernel that does not exist with exit code 2") {
  const test::CliRun r = test::run_attnsim("run --approximate --head-dim 256 --seqlen 256 --heads 2:2");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "key 'head_dim_qk': no fwd code object of aiter-v3 for head dimension 256"));
  const test::CliRun any = test::run_attnsim("run --approximate --kernel aiter-v3,shapes=any --head-dim 256 --seqlen 256 --heads 2:2 --json", false);
  CHECK(any.exit_code == 0);
  const test::CliRun traffic = test::run_attnsim("traffic --head-dim 64 --seqlen 256 --heads 2:2");
  CHECK(traffic.exit_code == 2);
  CHECK(contains(traffic.out, "for head dimension 64"));
}

TEST_CASE("a problem whose tensors exceed the GPU's memory is refused by name") {
  Problem p;
  p.heads_q = p.heads_kv = 8;
  p.seqlen_q = p.seqlen_k = 1024;  // Q alone: 8 x 1024 x 128 x 2 B = 2 MiB
  const std::uint64_t end = TensorSet(p, TensorNeeds{false, 0, false}).end_address();
  const KernelSchedule k = parse_kernel_spec("aiter-v3");
  const auto with_capacity = [&](std::uint64_t bytes) {
    return arch::load_arch_file(arch::resolve_arch("mi300x"), {"hbm.capacity=" + std::to_string(bytes) + "B"}).spec;
  };
  CHECK_NOTHROW(build_pass(p, k, Direction::fwd, with_capacity(end)));  // exactly full
  try {
    build_pass(p, k, Direction::fwd, with_capacity(end - 1));
    FAIL("a forward pass one byte over the capacity was built");
  } catch (const arch::ConfigError& e) {
    CHECK(contains(e.what(), "key 'hbm.capacity': the fwd pass's tensors need"));
  }
  // From the command line: exit 2, never an internal error.
  const test::CliRun huge = test::run_attnsim("run --approximate --seqlen 99999999999");
  CHECK(huge.exit_code == 2);
  CHECK(contains(huge.out, "more than the 192.0 GB the AMD Instinct MI300X holds"));
}

TEST_CASE("matrix products run with the instructions of the problem's dtype") {
  const KernelSchedule k = parse_kernel_spec("aiter-v3");
  CHECK(schedule_for(k, shape(128, 128), Direction::fwd, mi300x(), "t").fwd.mfma == "v_mfma_f32_32x32x8_bf16");
  // fp8: the 32x32 fp8 instruction (k = 16), twice the FLOPs per instruction (MIC).
  const KernelSchedule f8 = schedule_for(k, shape(128, 128, Dtype::fp8), Direction::fwd, mi300x(), "t");
  CHECK(f8.fwd.mfma == "v_mfma_f32_32x32x16_fp8_fp8");
  const PassPrograms fp8 = build_pass(shape(128, 128, Dtype::fp8), f8, Direction::fwd, mi300x());
  CHECK(fp8.kernels[0].mfma == "v_mfma_f32_32x32x16_fp8_fp8");
  CHECK(schedule_for(k, shape(128, 128, Dtype::fp16), Direction::bwd, mi300x(), "t").bwd.mfma == "v_mfma_f32_16x16x16_f16");
  // An instruction named in --kernel stays.
  const KernelSchedule named = parse_kernel_spec("aiter-v3,fwd.mfma=v_mfma_f32_16x16x16_bf16");
  CHECK(schedule_for(named, shape(128, 128, Dtype::fp8), Direction::fwd, mi300x(), "t").fwd.mfma ==
        "v_mfma_f32_16x16x16_bf16");
  // H100: FA3's warpgroup MMA has an e4m3 form; FA2's mma.sync m16n8 has none in the config. fp16
  // runs at the bf16 rate (both 4096 FLOP/clk per SM), so it keeps the bf16 instruction; fp8 does not.
  const arch::GpuSpec h100 = arch::load_arch_file(arch::resolve_arch("h100")).spec;
  CHECK(schedule_for(parse_kernel_spec("fa3"), shape(128, 128, Dtype::fp8), Direction::fwd, h100, "t").fwd.mfma ==
        "wgmma.m64n256k32.f32.e4m3");
  CHECK(schedule_for(parse_kernel_spec("fa2"), shape(128, 128, Dtype::fp16), Direction::fwd, h100, "t").fwd.mfma ==
        "mma.sync.m16n8k16.f32.bf16");
  try {
    schedule_for(parse_kernel_spec("fa2"), shape(128, 128, Dtype::fp8), Direction::fwd, h100, "--kernel fa2");
    FAIL("an fp8 FA2 forward ran on bf16 instructions");
  } catch (const arch::ConfigError& e) {
    CHECK(contains(e.what(), "--kernel fa2: error: key 'fwd.mfma': the NVIDIA H100 SXM5 config has no fp8 matrix instruction"));
  }
}

TEST_CASE("attnsim check interprets the tile the problem's code object uses") {
  const auto iterations = [](const std::string& kernel) {
    const test::CliRun r = test::run_attnsim("check --kernel " + kernel +
                                                 " --direction bwd --heads 2:2 --seqlen 256 --head-dim 64 --json",
                                             false);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["iterations"].get<std::uint64_t>();
  };
  // d=64: the hd64 code object's 32 query rows per iteration, as if set by hand, not the preset's 16.
  CHECK(iterations("aiter-v3") == iterations("aiter-v3,bwd.block_m=32"));
  CHECK(iterations("aiter-v3") != iterations("aiter-v3,bwd.block_m=16"));
  // A shape no code object covers is still checked, at the preset's tile.
  CHECK(test::run_attnsim("check --kernel aiter-v3 --heads 2:2 --seqlen 64 --head-dim 32").exit_code == 0);
}

TEST_CASE("code objects pad smaller head dimensions and implement only their own masks") {
  const KernelSchedule k = parse_kernel_spec("aiter-v3");
  // mha_bwd.cu get_padded_hdim: d <= 128 runs the d=128 code object padded (a pddv variant), d <= 64
  // the d=64 one, which has no padded variant; the forward does not pad.
  const KernelSchedule b96 = schedule_for(k, shape(96, 96), Direction::bwd, mi300x(), "t");
  CHECK(b96.bwd.block_m == 16);
  CHECK(b96.bwd.block_n == 192);
  CHECK(schedule_for(k, shape(160, 160), Direction::bwd, mi300x(), "t").bwd.block_n == 64);  // d=192's
  CHECK(contains(error_of("aiter-v3", shape(32, 32), Direction::bwd), "head dimension 32;"));
  CHECK(contains(error_of("aiter-v3", shape(100, 100), Direction::bwd), "head dimension 100;"));  // not a multiple of 8
  CHECK(contains(error_of("aiter-v3", shape(96, 96), Direction::fwd), "head dimension 96;"));
  // Masks: the forward has no window; the backward's window is d=128 a32 only.
  Problem window = shape(128, 128);
  window.causal = true;
  window.window = Window{256, 0};
  CHECK(contains(error_of("aiter-v3", window, Direction::fwd), "key 'window': no fwd code object of aiter-v3 for a sliding window"));
  CHECK(error_of("aiter-v3", window, Direction::bwd).empty());
  window.head_dim_qk = window.head_dim_v = 64;
  CHECK(contains(error_of("aiter-v3", window, Direction::bwd), "key 'window'"));
  // a16 has top-left causal code objects only: fine where the diagonals agree (seqlen_q = seqlen_k).
  Problem causal = shape(128, 128);
  causal.causal = true;
  causal.seqlen_q = causal.seqlen_k = 1024;
  CHECK(error_of("aiter-v3-a16", causal, Direction::bwd).empty());
  causal.seqlen_k = 2048;
  CHECK(contains(error_of("aiter-v3-a16", causal, Direction::bwd),
                 "key 'causal': no bwd code object of aiter-v3-a16 for a causal mask along the bottom-right diagonal"));
  CHECK(error_of("aiter-v3", causal, Direction::bwd).empty());
  causal.align = CausalAlign::top_left;  // the forward: bottom-right only
  CHECK(contains(error_of("aiter-v3", causal, Direction::fwd), "along the top-left diagonal"));
}

TEST_CASE("the d=192:128 forward launches as its code object does") {
  // mha_fwd.cu: 256 threads, grid (heads, q tiles, batch), head and tail tiles not merged.
  const KernelSchedule k = parse_kernel_spec("aiter-v3");
  const KernelSchedule f = schedule_for(k, shape(192, 128), Direction::fwd, mi300x(), "t");
  CHECK(f.fwd.waves == 4);
  CHECK(f.fwd.grid == GridOrder::heads_first);
  CHECK_FALSE(f.fwd.pair_tiles);
  const KernelSchedule f128 = schedule_for(k, shape(128, 128), Direction::fwd, mi300x(), "t");
  CHECK(f128.fwd.waves == 8);
  CHECK(f128.fwd.grid == GridOrder::blocks_first);
  CHECK(f128.fwd.pair_tiles);
}

TEST_CASE("a kernel's schedule on another GPU runs that GPU's fastest instruction of the same shape") {
  // The MI355X config lists gfx950's double-rate 32x32x16 and 16x16x32 bf16 forms (BLOG-MFMA,
  // LLVM-MCA950) but not the 32x32x8 of aiter's gfx942 forward; its legacy 16x16x16 runs at half rate.
  const arch::GpuSpec mi355x = arch::load_arch_file(arch::resolve_arch("mi355x")).spec;
  const KernelSchedule k = parse_kernel_spec("aiter-v3");
  CHECK(schedule_for(k, shape(128, 128), Direction::fwd, mi355x, "t").fwd.mfma == "v_mfma_f32_32x32x16_bf16");
  CHECK(schedule_for(k, shape(128, 128), Direction::bwd, mi355x, "t").bwd.mfma == "v_mfma_f32_16x16x32_bf16");
  CHECK(schedule_for(k, shape(128, 128, Dtype::fp8), Direction::fwd, mi355x, "t").fwd.mfma == "v_mfma_f32_32x32x64_f8f6f4");
  // On its own GPU the schedule's instruction stays.
  CHECK(schedule_for(k, shape(128, 128), Direction::bwd, mi300x(), "t").bwd.mfma == "v_mfma_f32_16x16x16_bf16");
  CHECK(test::run_attnsim("run --approximate --arch mi355x --seqlen 512 --heads 4:4").exit_code == 0);
}
