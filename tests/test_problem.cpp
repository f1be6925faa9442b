// Problems: validation errors name the field; TOML problems load strictly.
#include <doctest/doctest.h>

#include "arch/config_error.h"
#include "workloads/problem.h"

using namespace attnsim;
using namespace attnsim::workloads;

namespace {
std::string problem_error(const Problem& p) {
  try {
    validate(p, "flags");
  } catch (const arch::ConfigError& e) {
    return e.what();
  }
  return "";
}
Problem base() {
  Problem p;
  p.heads_q = 64;
  p.heads_kv = 8;
  p.seqlen_q = p.seqlen_k = 8192;
  return p;
}
}  // namespace

TEST_CASE("valid problems pass and describe themselves") {
  Problem p = base();
  p.causal = true;
  CHECK(problem_error(p) == "");
  CHECK(p.describe() == "B=1 Hq=64 Hkv=8 N=8192 d=128 bf16 causal");
  CHECK(p.group() == 8);
  p.seqlen_k = 4096;
  p.head_dim_v = 64;
  p.window = Window{128, 0};
  CHECK(p.describe() == "B=1 Hq=64 Hkv=8 N=8192:4096 d=128:64 bf16 causal window=128:0");
}

TEST_CASE("problem errors name the field") {
  Problem p = base();
  p.heads_kv = 7;
  CHECK(problem_error(p) == "flags: error: key 'heads_q': 64 is not a multiple of heads_kv = 7");
  p = base();
  p.seqlen_k = 0;
  CHECK(problem_error(p) == "flags: error: key 'seqlen_k': must be at least 1");
  p = base();
  p.batch = 0;
  CHECK(problem_error(p) == "flags: error: key 'batch': must be at least 1");
  p = base();
  p.causal = true;
  p.window = Window{256, 16};
  CHECK(problem_error(p) == "flags: error: key 'window': a right window of 16 conflicts with causal masking (causal "
                            "allows no keys right of the diagonal); use window 256:0 or drop --causal");
  p = base();
  p.batch = 1u << 31;
  p.seqlen_q = p.seqlen_k = 1ull << 40;
  CHECK(problem_error(p).find("key 'seqlen_q': batch x heads x seqlen x head_dim") != std::string::npos);
}

TEST_CASE("a problem TOML file loads strictly") {
  const std::string good =
      "batch = 2\nheads_q = 8\nheads_kv = 2\nseqlen_q = 512\nseqlen_k = 1024\nhead_dim_qk = 128\nhead_dim_v = 128\n"
      "dtype = \"fp16\"\ncausal = \"top_left\"\nwindow = [64, 0]\nlayout = \"bhsd\"\n";
  const Problem p = load_problem_text(good, "p.toml");
  CHECK(p.batch == 2);
  CHECK(p.group() == 4);
  CHECK(p.dtype == Dtype::fp16);
  CHECK(p.causal);
  CHECK(p.align == CausalAlign::top_left);
  REQUIRE(p.window.has_value());
  CHECK(p.window->left == 64);
  CHECK(p.layout == Layout::bhsd);
  // causal = true is FlashAttention's bottom-right diagonal, as --causal is.
  std::string plain = good;
  const std::string masked = "causal = \"top_left\"\nwindow = [64, 0]";
  plain.replace(plain.find(masked), masked.size(), "causal = true");
  const Problem t = load_problem_text(plain, "p.toml");
  CHECK(t.causal);
  CHECK(t.align == CausalAlign::bottom_right);
  try {
    load_problem_text(good + "heads = 3\n", "p.toml");
    FAIL("expected an error");
  } catch (const arch::ConfigError& e) {
    CHECK(std::string(e.what()).rfind("p.toml:12:9: error: key 'heads': unknown key", 0) == 0);
  }
  try {
    load_problem_text("batch = 0\n", "p.toml");
    FAIL("expected an error");
  } catch (const arch::ConfigError& e) {
    CHECK(std::string(e.what()) == "p.toml:1:9: error: key 'batch': expected an integer in [1, 4294967295]");
  }
}
