#include "workloads/problem.h"

#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "arch/config_error.h"
#include "arch/toml_parse.h"
#include "workloads/problem_toml.h"

namespace attnsim::workloads {

using arch::ConfigError;
using arch::ValueOrigin;

std::string_view to_string(Layout l) { return l == Layout::bshd ? "bshd" : "bhsd"; }
std::optional<Layout> parse_layout(std::string_view text) {
  if (text == "bshd") return Layout::bshd;
  if (text == "bhsd") return Layout::bhsd;
  return std::nullopt;
}
std::string_view to_string(CausalAlign a) { return a == CausalAlign::top_left ? "top_left" : "bottom_right"; }

std::string Problem::describe() const {
  std::ostringstream os;
  os << "B=" << batch << " Hq=" << heads_q << " Hkv=" << heads_kv << " N=" << seqlen_q;
  if (seqlen_k != seqlen_q) os << ":" << seqlen_k;
  os << " d=" << head_dim_qk;
  if (head_dim_v != head_dim_qk) os << ":" << head_dim_v;
  os << " " << arch::to_string(dtype);
  if (causal) os << " causal" << (align == CausalAlign::top_left ? "(top-left)" : "");
  if (window) os << " window=" << window->left << ":" << window->right;
  if (layout != Layout::bshd) os << " " << to_string(layout);
  return os.str();
}

void validate(const Problem& p, const std::string& origin) {
  const auto fail = [&](const std::string& field, const std::string& problem) {
    throw ConfigError(ValueOrigin{origin, 0, 0, {}}, field, problem);
  };
  if (p.batch == 0) fail("batch", "must be at least 1");
  if (p.heads_q == 0) fail("heads_q", "must be at least 1");
  if (p.heads_kv == 0) fail("heads_kv", "must be at least 1");
  if (p.seqlen_q == 0) fail("seqlen_q", "must be at least 1");
  if (p.seqlen_k == 0) fail("seqlen_k", "must be at least 1");
  if (p.head_dim_qk == 0) fail("head_dim_qk", "must be at least 1");
  if (p.head_dim_v == 0) fail("head_dim_v", "must be at least 1");
  if (p.heads_q % p.heads_kv != 0) {
    fail("heads_q", std::to_string(p.heads_q) + " is not a multiple of heads_kv = " + std::to_string(p.heads_kv));
  }
  // Largest tensor: [B, max(N), Hq, max(d)] elements of up to 4 bytes (fp32 accumulators).
  const long double elems = static_cast<long double>(p.batch) * p.heads_q *
                            static_cast<long double>(std::max(p.seqlen_q, p.seqlen_k)) *
                            std::max(p.head_dim_qk, p.head_dim_v);
  if (elems * 4 * 16 > static_cast<long double>(std::numeric_limits<std::uint64_t>::max())) {
    fail("seqlen_q", "batch x heads x seqlen x head_dim = " + std::to_string(static_cast<double>(elems)) +
                         " elements overflow 64-bit byte addressing");
  }
  if (p.window && p.causal && p.window->right != 0) {
    fail("window", "a right window of " + std::to_string(p.window->right) +
                       " conflicts with causal masking (causal allows no keys right of the diagonal); use window " +
                       std::to_string(p.window->left) + ":0 or drop --causal");
  }
}

namespace {

ValueOrigin at(const std::string& file, const toml::node& n) {
  return ValueOrigin{file, n.source().begin.line, n.source().begin.column, {}};
}

std::uint64_t positive(const toml::table& t, const std::string& file, const std::string& key, std::uint64_t max) {
  const toml::node* n = t.get(key);
  if (!n) throw ConfigError(ValueOrigin{file, 0, 0, {}}, key, "missing; expected a positive integer");
  if (!n->is_integer() || n->as_integer()->get() < 1 || static_cast<std::uint64_t>(n->as_integer()->get()) > max) {
    throw ConfigError(at(file, *n), key, "expected an integer in [1, " + std::to_string(max) + "]");
  }
  return static_cast<std::uint64_t>(n->as_integer()->get());
}

}  // namespace

Problem load_problem_text(const std::string& text, const std::string& file) {
  return load_problem_table(arch::parse_toml(text, file), file);
}

Problem load_problem_table(const toml::table& t, const std::string& file) {
  static const std::set<std::string> known{"batch",       "heads_q", "heads_kv", "seqlen_q", "seqlen_k",
                                           "head_dim_qk", "head_dim_v", "dtype", "causal", "window", "layout"};
  for (const auto& [k, v] : t) {
    if (!known.count(std::string(k.str()))) {
      throw ConfigError(at(file, v), std::string(k.str()),
                        "unknown key (problem keys: batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim_qk, "
                        "head_dim_v, dtype, causal, window, layout)");
    }
  }
  constexpr std::uint64_t k32 = std::numeric_limits<std::uint32_t>::max();
  Problem p;
  p.batch = static_cast<std::uint32_t>(positive(t, file, "batch", k32));
  p.heads_q = static_cast<std::uint32_t>(positive(t, file, "heads_q", k32));
  p.heads_kv = static_cast<std::uint32_t>(positive(t, file, "heads_kv", k32));
  p.seqlen_q = positive(t, file, "seqlen_q", std::numeric_limits<std::int64_t>::max());
  p.seqlen_k = positive(t, file, "seqlen_k", std::numeric_limits<std::int64_t>::max());
  p.head_dim_qk = static_cast<std::uint32_t>(positive(t, file, "head_dim_qk", 4096));
  p.head_dim_v = static_cast<std::uint32_t>(positive(t, file, "head_dim_v", 4096));
  const auto text_of = [&](const std::string& key, const std::set<std::string>& allowed) -> std::string {
    const toml::node* n = t.get(key);
    if (!n) throw ConfigError(ValueOrigin{file, 0, 0, {}}, key, "missing");
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + ("\"" + a + "\"");
    if (!n->is_string() || !allowed.count(std::string(n->as_string()->get()))) {
      throw ConfigError(at(file, *n), key, "expected one of " + list);
    }
    return std::string(n->as_string()->get());
  };
  const std::string dtype = text_of("dtype", {"bf16", "fp16", "fp8"});
  p.dtype = *arch::parse_dtype(dtype);  // text_of admitted only the three names
  p.layout = *parse_layout(text_of("layout", {"bshd", "bhsd"}));  // text_of admitted only the two names
  const toml::node* c = t.get("causal");
  if (!c) throw ConfigError(ValueOrigin{file, 0, 0, {}}, "causal", "missing; expected false, true (= \"bottom_right\"), \"top_left\" or \"bottom_right\"");
  if (c->is_boolean()) {
    p.causal = c->as_boolean()->get();  // true: FlashAttention's bottom-right diagonal, as --causal
  } else if (c->is_string() && (c->as_string()->get() == "top_left" || c->as_string()->get() == "bottom_right")) {
    p.causal = true;
    p.align = c->as_string()->get() == "top_left" ? CausalAlign::top_left : CausalAlign::bottom_right;
  } else {
    throw ConfigError(at(file, *c), "causal", "expected false, true (= \"bottom_right\"), \"top_left\" or \"bottom_right\"");
  }
  if (const toml::node* w = t.get("window")) {
    const toml::array* a = w->as_array();
    if (!a || a->size() != 2 || !(*a)[0].is_integer() || !(*a)[1].is_integer() || (*a)[0].as_integer()->get() < 0 ||
        (*a)[1].as_integer()->get() < 0) {
      throw ConfigError(at(file, *w), "window", "expected [left, right] with non-negative integers");
    }
    p.window = Window{static_cast<std::uint64_t>((*a)[0].as_integer()->get()),
                      static_cast<std::uint64_t>((*a)[1].as_integer()->get())};
  }
  validate(p, file);
  return p;
}

Problem load_problem_file(const std::string& path) { return load_problem_text(arch::read_text_file(path), path); }

}  // namespace attnsim::workloads
