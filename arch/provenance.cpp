#include "arch/provenance.h"

#include <sstream>

namespace attnsim::arch {

extern const char kSourcesMarkdown[];  // generated from docs/sources.md at build time

namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

// Splits a TOML line into its code and its comment (the text after an unquoted '#').
std::pair<std::string_view, std::optional<std::string_view>> split_comment(std::string_view line) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == '\\' && quote == '"') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      return {line.substr(0, i), line.substr(i + 1)};
    }
  }
  return {line, std::nullopt};
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::string cur;
  std::istringstream in{std::string(text)};
  while (std::getline(in, cur)) lines.push_back(cur);
  return lines;
}

}  // namespace

std::optional<SourceTag> source_tag_of_line(std::string_view line) {
  const auto [code, comment] = split_comment(line);
  if (!comment) return std::nullopt;
  std::string c = trim(*comment);
  if (c.rfind("src:", 0) != 0) return std::nullopt;
  SourceTag tag;
  tag.text = trim(std::string_view(c).substr(4));
  std::string keys_part = tag.text;
  const auto open = tag.text.find('(');
  if (open != std::string::npos) {
    const auto close = tag.text.rfind(')');
    keys_part = tag.text.substr(0, open);
    tag.detail = trim(std::string_view(tag.text).substr(open + 1, close == std::string::npos || close < open
                                                                      ? std::string::npos
                                                                      : close - open - 1));
  }
  std::string key;
  std::istringstream ks(keys_part);
  while (std::getline(ks, key, ',')) {
    key = trim(key);
    if (!key.empty()) tag.keys.push_back(key);
  }
  return tag;
}

SourceRegistry SourceRegistry::from_markdown(std::string_view markdown) {
  SourceRegistry reg;
  for (const std::string& raw : split_lines(markdown)) {
    const std::string line = trim(raw);
    if (line.rfind("| `", 0) != 0) continue;
    const auto key_end = line.find('`', 3);
    if (key_end == std::string::npos) continue;
    const std::string key = line.substr(3, key_end - 3);
    const auto cell = line.find('|', key_end);
    std::string citation = cell == std::string::npos ? std::string() : trim(std::string_view(line).substr(cell + 1));
    if (!citation.empty() && citation.back() == '|') citation = trim(std::string_view(citation).substr(0, citation.size() - 1));
    reg.citations_[key] = citation;
  }
  return reg;
}

const std::string* SourceRegistry::citation(const std::string& key) const {
  const auto it = citations_.find(key);
  return it == citations_.end() ? nullptr : &it->second;
}

bool SourceRegistry::needs_detail(const std::string& key) {
  return key == "derived" || key == "estimate" || key == "calibrated";
}

const SourceRegistry& builtin_sources() {
  static const SourceRegistry reg = SourceRegistry::from_markdown(kSourcesMarkdown);
  return reg;
}

std::vector<ProvenanceProblem> check_provenance(std::string_view toml_text, const SourceRegistry& registry) {
  std::vector<ProvenanceProblem> problems;
  const auto lines = split_lines(toml_text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto line_no = static_cast<std::uint32_t>(i + 1);
    const std::string code = trim(split_comment(lines[i]).first);
    if (code.empty() || code.front() == '[' || code == "]" || code == "],") continue;
    // "key = [" opens a multi-line array whose elements carry their own sources.
    if (code.back() == '[' && code.find('=') != std::string::npos) continue;
    const auto tag = source_tag_of_line(lines[i]);
    if (!tag) {
      problems.push_back({line_no, "value without a '# src: KEY' comment: " + code});
      continue;
    }
    if (tag->keys.empty()) {
      problems.push_back({line_no, "'# src:' names no source key"});
      continue;
    }
    for (const auto& key : tag->keys) {
      if (!registry.contains(key)) {
        problems.push_back({line_no, "unknown source key '" + key + "' (not listed in docs/sources.md)"});
      } else if (SourceRegistry::needs_detail(key) && tag->detail.empty()) {
        problems.push_back({line_no, "source '" + key + "' needs its reason in parentheses, e.g. '# src: " + key +
                                         " (how it was obtained)'"});
      }
    }
  }
  return problems;
}

}  // namespace attnsim::arch
