#include "cli/problem_options.h"

#include <limits>

#include "arch/config_error.h"

namespace attnsim::cli {

using arch::ConfigError;
using arch::ValueOrigin;

namespace {

std::uint64_t parse_count(const std::string& flag, const std::string& text, const std::string& field) {
  const ValueOrigin where{flag + " " + text, 0, 0, {}};
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) {
    throw ConfigError(where, field, "expected a positive integer, got \"" + text + "\"");
  }
  return std::stoull(text);
}

// "A[:B]" -> (A, B), with B defaulting to A.
std::pair<std::uint64_t, std::uint64_t> parse_pair(const std::string& flag, const std::string& text,
                                                   const std::string& first, const std::string& second) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    const auto v = parse_count(flag, text, first);
    return {v, v};
  }
  return {parse_count(flag, text.substr(0, colon), first), parse_count(flag, text.substr(colon + 1), second)};
}

std::uint32_t narrow(std::uint64_t v, const std::string& flag, const std::string& field) {
  if (v > std::numeric_limits<std::uint32_t>::max()) {
    throw ConfigError(ValueOrigin{flag, 0, 0, {}}, field, std::to_string(v) + " is too large");
  }
  return static_cast<std::uint32_t>(v);
}

}  // namespace

void ProblemOptions::add_to(CLI::App& app, const workloads::Problem& d) {
  batch = std::to_string(d.batch);
  heads = std::to_string(d.heads_q) + ":" + std::to_string(d.heads_kv);
  seqlen = std::to_string(d.seqlen_q) + (d.seqlen_k != d.seqlen_q ? ":" + std::to_string(d.seqlen_k) : "");
  head_dim = std::to_string(d.head_dim_qk) + (d.head_dim_v != d.head_dim_qk ? ":" + std::to_string(d.head_dim_v) : "");
  causal = d.causal;
  app.add_option("--batch", batch, "batch size B")->capture_default_str();
  app.add_option("--heads", heads, "query heads, and KV heads after a colon for GQA/MQA (64:8)")->capture_default_str();
  app.add_option("--seqlen", seqlen, "sequence length, or query:key lengths (8192 or 1024:4096)")->capture_default_str();
  app.add_option("--head-dim", head_dim, "head dimension, or qk:v dimensions (128 or 192:128)")->capture_default_str();
  app.add_option("--dtype", dtype, "bf16, fp16 or fp8")->capture_default_str();
  app.add_flag("--causal,!--no-causal", causal, "causal mask");
  app.add_option("--causal-align", causal_align,
                 "diagonal of the causal mask when seqlens differ: bottom-right (FlashAttention) or top-left")
      ->capture_default_str();
  app.add_option("--window", window, "sliding window LEFT:RIGHT around the diagonal (with --causal, RIGHT must be 0)");
  app.add_option("--layout", layout, "bshd or bhsd")->capture_default_str();
  app.add_option("--problem", file, "read the problem from a TOML file instead of the flags");
}

workloads::Direction parse_direction(const std::string& text) {
  if (text == "fwd") return workloads::Direction::fwd;
  if (text == "bwd") return workloads::Direction::bwd;
  throw ConfigError(ValueOrigin{"--direction " + text, 0, 0, {}}, "direction", "expected fwd or bwd");
}

workloads::Problem ProblemOptions::problem() const {
  if (!file.empty()) return workloads::load_problem_file(file);
  workloads::Problem p;
  p.batch = narrow(parse_count("--batch", batch, "batch"), "--batch", "batch");
  const auto [hq, hkv] = parse_pair("--heads", heads, "heads_q", "heads_kv");
  p.heads_q = narrow(hq, "--heads", "heads_q");
  p.heads_kv = narrow(hkv, "--heads", "heads_kv");
  std::tie(p.seqlen_q, p.seqlen_k) = parse_pair("--seqlen", seqlen, "seqlen_q", "seqlen_k");
  const auto [dqk, dv] = parse_pair("--head-dim", head_dim, "head_dim_qk", "head_dim_v");
  p.head_dim_qk = narrow(dqk, "--head-dim", "head_dim_qk");
  p.head_dim_v = narrow(dv, "--head-dim", "head_dim_v");
  const auto parsed_dtype = arch::parse_dtype(dtype);
  if (!parsed_dtype) throw ConfigError(ValueOrigin{"--dtype " + dtype, 0, 0, {}}, "dtype", "expected bf16, fp16 or fp8");
  p.dtype = *parsed_dtype;
  p.causal = causal;
  if (causal_align == "bottom-right") {
    p.align = workloads::CausalAlign::bottom_right;
  } else if (causal_align == "top-left") {
    p.align = workloads::CausalAlign::top_left;
  } else {
    throw ConfigError(ValueOrigin{"--causal-align " + causal_align, 0, 0, {}}, "causal", "expected bottom-right or top-left");
  }
  if (!window.empty()) {
    const auto colon = window.find(':');
    if (colon == std::string::npos) {
      throw ConfigError(ValueOrigin{"--window " + window, 0, 0, {}}, "window", "expected LEFT:RIGHT, e.g. 256:0");
    }
    const auto [l, r] = parse_pair("--window", window, "window.left", "window.right");
    p.window = workloads::Window{l, r};
  }
  const auto parsed_layout = workloads::parse_layout(layout);
  if (!parsed_layout) throw ConfigError(ValueOrigin{"--layout " + layout, 0, 0, {}}, "layout", "expected bshd or bhsd");
  p.layout = *parsed_layout;
  workloads::validate(p, "problem flags");
  return p;
}

}  // namespace attnsim::cli
