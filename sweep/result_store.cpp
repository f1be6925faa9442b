#include "sweep/result_store.h"

#include <atomic>
#include <fstream>
#include <map>

#include <unistd.h>

#include "arch/config_error.h"
#include "arch/toml_parse.h"

namespace attnsim::sweep {

namespace fs = std::filesystem;
using arch::ConfigError;
using arch::ValueOrigin;

namespace {

// Flattens a JSON value into dotted keys.
void flatten(const ordered_json& v, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (v.is_object()) {
    for (const auto& [k, e] : v.items()) flatten(e, prefix.empty() ? k : prefix + "." + k, out);
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) flatten(v[i], prefix + "[" + std::to_string(i) + "]", out);
  } else if (v.is_string()) {
    out.emplace_back(prefix, v.get<std::string>());
  } else if (v.is_null()) {
    out.emplace_back(prefix, "");
  } else {
    out.emplace_back(prefix, v.dump());
  }
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

void write_file_atomically(const fs::path& path, const std::string& text) {
  static std::atomic<unsigned long> counter{0};
  const fs::path tmp = path.parent_path() / (std::string(".") + path.filename().string() + ".tmp." + std::to_string(::getpid()) +
                                             "." + std::to_string(counter++));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw ConfigError(ValueOrigin{tmp.string(), 0, 0, {}}, "", "cannot write the file");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw ConfigError(ValueOrigin{path.string(), 0, 0, {}}, "", "cannot write the file");
  }
}

ResultStore::ResultStore(fs::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec)) {
    throw ConfigError(ValueOrigin{dir_.string(), 0, 0, {}}, "-o", "exists and is not a directory");
  }
  fs::create_directories(dir_ / "points", ec);
  if (ec) throw ConfigError(ValueOrigin{dir_.string(), 0, 0, {}}, "-o", "cannot create the directory: " + ec.message());
}

std::optional<PointRecord> ResultStore::load(const std::string& id) const {
  const fs::path path = dir_ / "points" / (id + ".json");
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  PointRecord r = ordered_json::parse(arch::read_text_file(path.string()), nullptr, false);
  if (r.is_discarded() || !r.is_object() || r.value("id", "") != id || !r.contains("status")) return std::nullopt;
  return r;
}

void ResultStore::save(const PointRecord& record) const {
  write_file_atomically(dir_ / "points" / (record.at("id").get<std::string>() + ".json"), record.dump() + "\n");
}

void require_sweep_dir(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw ConfigError(ValueOrigin{dir.string(), 0, 0, {}}, "DIR", "not a directory");
  if (!fs::exists(dir / "sweep.json")) {
    throw ConfigError(ValueOrigin{(dir / "sweep.json").string(), 0, 0, {}}, "DIR",
                      "missing; is this a directory written by attnsim sweep?");
  }
}

ordered_json manifest_of(const SweepSpec& spec, const std::vector<SweepPoint>& points) {
  ordered_json m{{"attnsim", ATTNSIM_VERSION}, {"spec_file", spec.file}, {"spec_text", spec.text}};
  ordered_json axes = ordered_json::array();
  for (const auto& a : spec.axes) axes.push_back(a.keys);
  m["axes"] = std::move(axes);
  ordered_json list = ordered_json::array();
  for (const auto& p : points) list.push_back({{"id", p.id}, {"params", p.params}});
  m["points"] = std::move(list);
  return m;
}

void ResultStore::write_manifest(const ordered_json& manifest) const {
  write_file_atomically(dir_ / "sweep.json", manifest.dump(1) + "\n");
}

ordered_json ResultStore::read_manifest() const {
  require_sweep_dir(dir_);
  const fs::path path = dir_ / "sweep.json";
  ordered_json m = ordered_json::parse(arch::read_text_file(path.string()), nullptr, false);
  if (m.is_discarded() || !m.is_object() || !m.contains("points") || !m["points"].is_array()) {
    throw ConfigError(ValueOrigin{path.string(), 0, 0, {}}, "", "not a valid sweep manifest");
  }
  return m;
}

std::size_t ResultStore::write_results(const ordered_json& manifest) const {
  std::vector<std::pair<std::size_t, PointRecord>> rows;
  std::string jsonl;
  const auto& points = manifest.at("points");
  for (std::size_t i = 0; i < points.size(); ++i) {
    auto r = load(points[i].at("id").get<std::string>());
    if (!r) continue;
    ordered_json line{{"point", i}, {"id", (*r)["id"]}, {"status", (*r)["status"]}, {"params", points[i]["params"]}};
    if (r->contains("error")) line["error"] = (*r)["error"];
    if (r->contains("report")) line["report"] = (*r)["report"];
    jsonl += line.dump() + "\n";
    (*r)["params"] = points[i]["params"];
    rows.emplace_back(i, std::move(*r));
  }
  write_file_atomically(dir_ / "results.jsonl", jsonl);
  write_file_atomically(dir_ / "results.csv", results_csv(rows));
  return rows.size();
}

std::string results_csv(const std::vector<std::pair<std::size_t, PointRecord>>& rows) {
  std::vector<std::string> columns{"point", "id", "status", "error"};
  std::map<std::string, std::size_t> column_of{{"point", 0}, {"id", 1}, {"status", 2}, {"error", 3}};
  std::vector<std::map<std::size_t, std::string>> cells;
  for (const auto& [index, r] : rows) {
    std::vector<std::pair<std::string, std::string>> flat{{"point", std::to_string(index)},
                                                          {"id", r.value("id", "")},
                                                          {"status", r.value("status", "")},
                                                          {"error", r.value("error", "")}};
    const ordered_json params = r.value("params", ordered_json::object());
    for (const auto& [k, v] : params.items()) flat.emplace_back(std::string("param.") + k, value_text(v));
    if (r.contains("report")) flatten(r["report"], "", flat);
    std::map<std::size_t, std::string> row;
    for (auto& [k, v] : flat) {
      auto it = column_of.find(k);
      if (it == column_of.end()) {
        it = column_of.emplace(k, columns.size()).first;
        columns.push_back(k);
      }
      row[it->second] = std::move(v);
    }
    cells.push_back(std::move(row));
  }
  std::string out;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (c) out += ',';
    out += csv_field(columns[c]);
  }
  out += "\n";
  for (const auto& row : cells) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (c) out += ",";
      const auto it = row.find(c);
      if (it != row.end()) out += csv_field(it->second);
    }
    out += "\n";
  }
  return out;
}

}  // namespace attnsim::sweep
