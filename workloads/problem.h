// An attention problem: shapes, dtype, masking and memory layout. Knows nothing of kernels or time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "arch/gpu_spec.h"

namespace attnsim::workloads {

using arch::Dtype;

// Memory layout of Q, K, V, O and their gradients: [batch, seq, heads, dim] or [batch, heads, seq, dim].
enum class Layout { bshd, bhsd };
std::string_view to_string(Layout l);
// The layout named `text` ("bshd" or "bhsd"); nullopt for any other text.
std::optional<Layout> parse_layout(std::string_view text);

// Which diagonal a causal mask follows when seqlen_q != seqlen_k: top-left (query i sees keys
// j <= i) or bottom-right (query i sees keys j <= i + seqlen_k - seqlen_q, as FlashAttention-2).
enum class CausalAlign { top_left, bottom_right };
std::string_view to_string(CausalAlign a);

// A sliding window around the (aligned) diagonal: query i sees keys in [c - left, c + right],
// c = i (+ seqlen_k - seqlen_q for bottom-right alignment).
struct Window {
  std::uint64_t left = 0;
  std::uint64_t right = 0;
};

// One attention call.
struct Problem {
  std::uint32_t batch = 1;
  std::uint32_t heads_q = 1;
  std::uint32_t heads_kv = 1;  // heads_q for MHA, fewer for GQA, 1 for MQA
  std::uint64_t seqlen_q = 1;
  std::uint64_t seqlen_k = 1;
  std::uint32_t head_dim_qk = 128;
  std::uint32_t head_dim_v = 128;
  Dtype dtype = Dtype::bf16;
  bool causal = false;
  CausalAlign align = CausalAlign::bottom_right;
  std::optional<Window> window;
  Layout layout = Layout::bshd;

  std::uint32_t group() const { return heads_q / heads_kv; }  // query heads per KV head
  std::uint32_t elem_bytes() const { return dtype == Dtype::fp8 ? 1 : 2; }
  // One line, e.g. "B=1 Hq=64 Hkv=8 N=8192 d=128 bf16 causal".
  std::string describe() const;
};

// Checks every field and their combinations. Contract: throws arch::ConfigError naming the field
// (as `origin` says where it came from) on zero sizes, heads_q not a multiple of heads_kv, element
// counts that overflow 64-bit byte addressing, or a window in conflict with causal masking.
void validate(const Problem& p, const std::string& origin);

// Reads a problem from a TOML file (keys as the Problem fields; `causal` is false, "top_left" or
// "bottom_right"; `window = [left, right]`). Strict like the arch configs: unknown or missing keys
// are errors naming file:line:column.
Problem load_problem_file(const std::string& path);
Problem load_problem_text(const std::string& text, const std::string& display_name);

}  // namespace attnsim::workloads
