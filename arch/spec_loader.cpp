#include "arch/spec_loader.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <tuple>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "arch/param_table.h"
#include "arch/provenance.h"
#include "arch/toml_parse.h"
#include "arch/spec_checks.h"

namespace attnsim::arch {
namespace {

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : path) {
    if (c == '.') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

bool is_declared_prefix(const std::string& table_path) {
  const std::string prefix = table_path + ".";
  return std::any_of(param_table().begin(), param_table().end(),
                     [&](const ParamDecl& d) { return d.path.rfind(prefix, 0) == 0; });
}

// Builds the whole load: the parsed document, its lines, and where each key came from.
class Loader {
 public:
  Loader(std::string_view text, std::string file, const std::vector<std::string>& override_args)
      : file_(std::move(file)) {
    std::istringstream in{std::string(text)};
    for (std::string line; std::getline(in, line);) lines_.push_back(line);
    doc_ = parse_toml(text, file_);
    for (const auto& arg : override_args) apply_override(parse_override(arg));
  }

  LoadedArch run() {
    reject_unknown_keys();
    LoadedArch out;
    out.file = file_;
    out.overrides = overrides_;
    for (const ParamDecl& d : param_table()) {
      if (!d.optional_section.empty() && !doc_.contains(d.optional_section)) continue;
      if (!d.optional_section.empty()) out.spec.mall.present = true;
      const toml::node* n = doc_.at_path(d.path).node();
      if (!n && d.optional_key) continue;  // absent: not set
      if (!n) throw missing(d);
      const ValueOrigin at = origin_of(d.path, *n);
      if (auto issue = d.assign(out.spec, *n)) {
        ValueOrigin where = at;
        if (issue->at && at.override_text.empty()) where = position(*issue->at);
        throw ConfigError(where, d.path, issue->message);
      }
      out.origins[d.path] = ParamOrigin{at, source_of(d.path, *n)};
    }
    check_consistency(out.spec, [&](std::string_view path) {
      const auto it = out.origins.find(std::string(path));
      return it == out.origins.end() ? ValueOrigin{file_, 0, 0, {}} : it->second.where;
    });
    return out;
  }

 private:
  ValueOrigin position(const toml::node& n) const {
    return ValueOrigin{file_, n.source().begin.line, n.source().begin.column, {}};
  }

  ValueOrigin origin_of(const std::string& path, const toml::node& n) const {
    const auto it = override_by_path_.find(path);
    if (it != override_by_path_.end()) return ValueOrigin{"--set", 0, 0, it->second};
    return position(n);
  }

  // The `# src:` text on the value's line; for a multi-line array, its elements' sources.
  std::string source_of(const std::string& path, const toml::node& n) const {
    if (override_by_path_.count(path)) return "--set";
    auto tag_at = [&](std::uint32_t line) -> std::string {
      if (line == 0 || line > lines_.size()) return {};
      const auto tag = source_tag_of_line(lines_[line - 1]);
      return tag ? tag->text : std::string();
    };
    std::string src = tag_at(n.source().begin.line);
    if (src.empty() && n.is_array()) {
      std::vector<std::string> seen;
      for (const auto& e : *n.as_array()) {
        const std::string s = tag_at(e.source().begin.line);
        if (!s.empty() && std::find(seen.begin(), seen.end(), s) == seen.end()) seen.push_back(s);
      }
      for (const auto& s : seen) src += (src.empty() ? "" : "; ") + s;
    }
    return src;
  }

  ConfigError missing(const ParamDecl& d) const {
    const auto parts = split_path(d.path);
    std::string section;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) section += (section.empty() ? "" : ".") + parts[i];
    ValueOrigin where{file_, 0, 0, {}};
    std::string in;
    if (!section.empty()) {
      if (const auto made = section_made_by_override_.find(section); made != section_made_by_override_.end()) {
        where = ValueOrigin{"--set", 0, 0, made->second};
        in = " in [" + section + "]";
      } else if (const toml::node* t = doc_.at_path(section).node()) {
        where = position(*t);
        in = " in [" + section + "]";
      } else {
        in = " (section [" + section + "] is missing)";
      }
    }
    return ConfigError(where, d.path, "missing" + in + "; expected " + d.expected + ": " + d.description);
  }

  void reject_unknown_keys() const {
    struct Unknown {
      ValueOrigin where;
      std::string path;
      bool is_table;
    };
    std::vector<Unknown> unknown;
    std::function<void(const toml::table&, const std::string&)> walk = [&](const toml::table& t,
                                                                           const std::string& prefix) {
      for (const auto& [k, v] : t) {
        const std::string path = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
        if (find_param(path)) continue;
        if (v.is_table() && is_declared_prefix(path)) {
          walk(*v.as_table(), path);
          continue;
        }
        const auto it = override_by_path_.find(path);
        unknown.push_back({it != override_by_path_.end() ? ValueOrigin{"--set", 0, 0, it->second} : position(v), path,
                           v.is_table()});
      }
    };
    walk(doc_, "");
    if (unknown.empty()) return;
    // Report the first in file order, so the message is stable.
    const auto first = std::min_element(unknown.begin(), unknown.end(), [](const Unknown& a, const Unknown& b) {
      return std::tie(a.where.line, a.where.column) < std::tie(b.where.line, b.where.column);
    });
    std::string msg = first->is_table ? "unknown section" : "unknown key";
    const std::string near = nearest_param(first->path);
    if (!near.empty()) msg += "; did you mean '" + near + "'?";
    msg += " (`attnsim arch params` lists every key)";
    throw ConfigError(first->where, first->path, msg);
  }

  void apply_override(const Override& o) {
    const ValueOrigin where{"--set", 0, 0, o.text};
    if (!find_param(o.path)) {
      const std::string near = nearest_param(o.path);
      throw ConfigError(where, o.path,
                        "unknown key" + (near.empty() ? std::string() : "; did you mean '" + near + "'?") +
                            " (`attnsim arch params` lists every key)");
    }
    // A value that is valid TOML keeps its type (4, true, "x", [..]); anything else is a string.
    toml::table value_doc;
    bool parsed = false;
    try {
      value_doc = toml::parse("v = " + o.value);
      parsed = true;
    } catch (const toml::parse_error&) {
    }
    const auto parts = split_path(o.path);
    toml::table* t = &doc_;
    std::string walked;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      walked += (walked.empty() ? "" : ".") + parts[i];
      toml::node* next = t->get(parts[i]);
      if (!next) {
        t->insert(parts[i], toml::table{});
        next = t->get(parts[i]);
        section_made_by_override_[walked] = o.text;
      }
      if (!next->is_table()) throw ConfigError(where, o.path, "'" + walked + "' is a value in the config, not a section");
      t = next->as_table();
    }
    if (parsed) {
      t->insert_or_assign(parts.back(), *value_doc.get("v"));
    } else {
      t->insert_or_assign(parts.back(), o.value);
    }
    override_by_path_[o.path] = o.text;
    overrides_.push_back(o);
  }

  std::string file_;
  std::vector<std::string> lines_;
  toml::table doc_;
  std::map<std::string, std::string> override_by_path_;
  std::map<std::string, std::string> section_made_by_override_;  // section path -> --set text
  std::vector<Override> overrides_;
};

}  // namespace

Override parse_override(std::string_view text) {
  const auto eq = text.find('=');
  const ValueOrigin where{"--set", 0, 0, std::string(text)};
  if (eq == std::string_view::npos) throw ConfigError(where, "", "expected key.path=value");
  std::string key(text.substr(0, eq));
  while (!key.empty() && key.back() == ' ') key.pop_back();
  while (!key.empty() && key.front() == ' ') key.erase(key.begin());
  if (key.empty()) throw ConfigError(where, "", "expected key.path=value (the key is empty)");
  std::string value(text.substr(eq + 1));
  while (!value.empty() && value.front() == ' ') value.erase(value.begin());
  while (!value.empty() && value.back() == ' ') value.pop_back();
  if (value.empty()) throw ConfigError(where, key, "no value after '='");
  return Override{key, value, std::string(text)};
}

LoadedArch load_arch_text(std::string_view toml_text, const std::string& display_name,
                          const std::vector<std::string>& overrides) {
  return Loader(toml_text, display_name, overrides).run();
}

LoadedArch load_arch_file(const std::string& path, const std::vector<std::string>& overrides) {
  return load_arch_text(read_text_file(path), path, overrides);
}

}  // namespace attnsim::arch
