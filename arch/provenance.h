// Provenance of config values: the `# src: KEY (detail)` comment every shipped value carries,
// and the registry of source keys (docs/sources.md, compiled into the binary).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnsim::arch {

// A parsed `# src:` comment: one or more source keys and an optional parenthesised detail.
struct SourceTag {
  std::vector<std::string> keys;
  std::string detail;  // text inside the parentheses, may be empty
  std::string text;    // everything after "src:", trimmed
};

// The `# src:` comment on one line of TOML text, if any. Ignores '#' inside quoted strings.
std::optional<SourceTag> source_tag_of_line(std::string_view line);

// Known source keys with their citation, read from the markdown table rows "| `KEY` | citation |".
class SourceRegistry {
 public:
  static SourceRegistry from_markdown(std::string_view markdown);
  bool contains(const std::string& key) const { return citations_.count(key) != 0; }
  const std::string* citation(const std::string& key) const;
  // Keys that only count with a reason in parentheses: derived, estimate, calibrated.
  static bool needs_detail(const std::string& key);
  std::size_t size() const { return citations_.size(); }

 private:
  std::map<std::string, std::string> citations_;
};

// The registry compiled from docs/sources.md.
const SourceRegistry& builtin_sources();

// A line of a config whose provenance is missing or does not resolve.
struct ProvenanceProblem {
  std::uint32_t line = 0;  // 1-based
  std::string message;
};

// Checks that every line holding a value carries a `# src:` comment whose keys all resolve.
// Contract: pure; returns problems in line order, empty when the text is fully sourced.
std::vector<ProvenanceProblem> check_provenance(std::string_view toml_text, const SourceRegistry& registry);

}  // namespace attnsim::arch
