#include "sweep/html_report.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "arch/config_error.h"
#include "sweep/result_store.h"
#include "sweep/svg_chart.h"

namespace attnsim::sweep {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kMaxSeries = 8;

double figure(const ordered_json& row, const std::string& pointer) {
  if (row.value("status", "") != "ok" || !row.contains("report")) return kNaN;
  const auto p = ordered_json::json_pointer("/report" + pointer);
  return row.contains(p) && row[p].is_number() ? row[p].get<double>() : kNaN;
}

// An axis of the report: the keys of one [[axis]] table (zipped keys move together) and the
// distinct texts of their values, in order of first appearance.
struct ReportAxis {
  std::vector<std::string> keys;
  std::vector<std::string> values;
  std::string name() const {
    std::string s;
    for (const auto& k : keys) s += (s.empty() ? "" : " + ") + k;
    return s;
  }
};

// The text of a row's values on `axis` ("4096" or "4096, true" for zipped keys).
std::string axis_text(const ordered_json& row, const ReportAxis& axis) {
  std::string s;
  for (const auto& k : axis.keys) {
    const auto& params = row["params"];
    s += (s.empty() ? "" : ", ") + (params.contains(k) ? value_text(params[k]) : std::string());
  }
  return s;
}

std::vector<ReportAxis> axes_of(const ordered_json& manifest) {
  std::vector<ReportAxis> axes;
  for (const auto& keys : manifest.value("axes", ordered_json::array())) axes.push_back({keys.get<std::vector<std::string>>(), {}});
  for (auto& a : axes) {
    for (const auto& p : manifest["points"]) {
      const std::string t = axis_text(p, a);
      if (std::find(a.values.begin(), a.values.end(), t) == a.values.end()) a.values.push_back(t);
    }
  }
  return axes;
}

std::string others_text(const ordered_json& row, const ReportAxis& axis) {
  std::string s;
  for (const auto& [k, v] : row["params"].items()) {
    if (std::find(axis.keys.begin(), axis.keys.end(), k) == axis.keys.end()) s += (s.empty() ? "" : ", ") + k + "=" + value_text(v);
  }
  return s.empty() ? "all points" : s;
}

// One series per combination of the other axes' values or, when there are more than kMaxSeries,
// their best, mean and worst.
std::vector<Series> series_over(const std::vector<ordered_json>& rows, const ReportAxis& axis, const std::string& pointer,
                                bool lower_is_better) {
  const auto& values = axis.values;
  std::vector<std::string> names;
  std::map<std::string, std::vector<double>> by_name;
  for (const auto& r : rows) {
    const std::string name = others_text(r, axis);
    auto [it, fresh] = by_name.emplace(name, std::vector<double>(values.size(), kNaN));
    if (fresh) names.push_back(name);
    const auto c = std::find(values.begin(), values.end(), axis_text(r, axis)) - values.begin();
    if (c < static_cast<long>(values.size())) it->second[static_cast<std::size_t>(c)] = figure(r, pointer);
  }
  std::vector<Series> out;
  if (names.size() <= kMaxSeries) {
    for (const auto& n : names) out.push_back({n, by_name[n]});
    return out;
  }
  Series best{"best over other axes", {}}, mean{"mean over other axes", {}}, worst{"worst over other axes", {}};
  for (std::size_t c = 0; c < values.size(); ++c) {
    double lo = kNaN, hi = kNaN, sum = 0;
    std::size_t n = 0;
    for (const auto& [name, ys] : by_name) {
      if (!std::isfinite(ys[c])) continue;
      lo = std::isfinite(lo) ? std::min(lo, ys[c]) : ys[c];
      hi = std::isfinite(hi) ? std::max(hi, ys[c]) : ys[c];
      sum += ys[c];
      ++n;
    }
    best.y.push_back(lower_is_better ? lo : hi);
    worst.y.push_back(lower_is_better ? hi : lo);
    mean.y.push_back(n ? sum / static_cast<double>(n) : kNaN);
  }
  return {best, mean, worst};
}

struct Level {
  const char* name;
  const char* pointer;
};
constexpr Level kLevels[] = {{"L2 requests", "/traffic/l2_request_bytes"},
                             {"L2->fabric read (FETCH_SIZE)", "/traffic/l2_fabric_read_bytes"},
                             {"L2->fabric write (WRITE_SIZE)", "/traffic/l2_fabric_write_bytes"},
                             {"MALL hits", "/traffic/mall_hit_bytes"},
                             {"HBM read", "/traffic/hbm_read_bytes"},
                             {"HBM write", "/traffic/hbm_write_bytes"}};

// Mean bytes of each level at each value of the axis, in the unit that suits the largest.
std::vector<Series> traffic_over(const std::vector<ordered_json>& rows, const ReportAxis& axis, std::string& unit) {
  std::vector<Series> out;
  double max = 0;
  for (const auto& level : kLevels) {
    Series s{level.name, std::vector<double>(axis.values.size(), kNaN)};
    for (std::size_t c = 0; c < axis.values.size(); ++c) {
      double sum = 0;
      std::size_t n = 0;
      for (const auto& r : rows) {
        const double v = figure(r, level.pointer);
        if (axis_text(r, axis) == axis.values[c] && std::isfinite(v)) {
          sum += v;
          ++n;
        }
      }
      if (n) s.y[c] = sum / static_cast<double>(n);
      if (n) max = std::max(max, s.y[c]);
    }
    out.push_back(std::move(s));
  }
  const double scale = max >= 1e9 ? 1e9 : max >= 1e6 ? 1e6 : 1e3;
  unit = scale == 1e9 ? "GB" : scale == 1e6 ? "MB" : "kB";
  for (auto& s : out)
    for (double& v : s.y) v /= scale;
  return out;
}

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "";
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}

std::string params_text(const ordered_json& row) {
  std::string s;
  for (const auto& [k, v] : row["params"].items()) s += (s.empty() ? "" : ", ") + k + "=" + value_text(v);
  return s.empty() ? "(base)" : s;
}

const ordered_json* best_row(const std::vector<ordered_json>& rows, const ReportAxis* axis, const std::string& value) {
  const ordered_json* best = nullptr;
  for (const auto& r : rows) {
    if (axis && axis_text(r, *axis) != value) continue;
    const double t = figure(r, "/tflops");
    if (std::isfinite(t) && (!best || t > figure(*best, "/tflops"))) best = &r;
  }
  return best;
}

void points_table(std::ostringstream& os, const std::vector<ordered_json>& rows) {
  os << "<table class=\"points\"><tr><th>point</th><th>parameters</th><th>status</th><th>time us</th><th>TFLOP/s</th>"
        "<th>HBM read GB</th><th>HBM write GB</th><th>L2 hit rate</th><th>error</th></tr>";
  for (const auto& r : rows) {
    os << "<tr><td>" << r.value("point", 0) << "</td><td>" << html_escape(params_text(r)) << "</td><td>"
       << html_escape(r.value("status", "")) << "</td><td>" << fixed(figure(r, "/time_us"), 1) << "</td><td>"
       << fixed(figure(r, "/tflops"), 1) << "</td><td>" << fixed(figure(r, "/traffic/hbm_read_bytes") / 1e9, 3)
       << "</td><td>" << fixed(figure(r, "/traffic/hbm_write_bytes") / 1e9, 3) << "</td><td>"
       << fixed(figure(r, "/traffic/l2_hit_rate") * 100, 1) << (std::isfinite(figure(r, "/traffic/l2_hit_rate")) ? " %" : "")
       << "</td><td>" << html_escape(r.value("error", "")) << "</td></tr>";
  }
  os << "</table>";
}

}  // namespace

std::string sweep_report_html(const ordered_json& manifest, const std::vector<ordered_json>& rows) {
  std::ostringstream os;
  const std::string spec_file = manifest.value("spec_file", "");
  const std::size_t ok = static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.value("status", "") == "ok"; }));
  os << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>attnsim sweep: " << html_escape(spec_file)
     << "</title><style>body{font-family:sans-serif;margin:24px;max-width:1200px}table{border-collapse:collapse;"
        "font-size:12px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}"
        "section{margin-bottom:28px}pre{background:#f6f6f6;padding:8px;font-size:12px}</style></head><body>";
  os << "<h1>attnsim sweep</h1><p>spec <code>" << html_escape(spec_file) << "</code>, attnsim "
     << html_escape(manifest.value("attnsim", "")) << ": " << manifest["points"].size() << " points, " << rows.size()
     << " recorded, " << ok << " ok, " << rows.size() - ok << " failed.</p>";
  if (const ordered_json* best = best_row(rows, nullptr, "")) {
    os << "<p id=\"best\">Best point: <b>" << html_escape(params_text(*best)) << "</b>: " << fixed(figure(*best, "/tflops"), 1)
       << " TFLOP/s, " << fixed(figure(*best, "/time_us"), 1) << " us.</p>";
  }
  for (const ReportAxis& axis : axes_of(manifest)) {
    if (axis.values.size() < 2) continue;
    const std::string name = axis.name();
    os << "<section class=\"axis\"><h2>" << html_escape(name) << "</h2>";
    os << line_chart({"TFLOP/s against " + name, name, "TFLOP/s (FA convention)", axis.values},
                     series_over(rows, axis, "/tflops", false));
    os << line_chart({"Time against " + name, name, "time (us)", axis.values}, series_over(rows, axis, "/time_us", true));
    std::string unit;
    const std::vector<Series> traffic = traffic_over(rows, axis, unit);
    os << bar_chart({"Traffic per level against " + name + " (mean over the other axes)", name, unit, axis.values}, traffic);
    os << "<table class=\"best\"><tr><th>" << html_escape(name) << "</th><th>best point</th><th>TFLOP/s</th><th>time us</th></tr>";
    for (const auto& v : axis.values) {
      const ordered_json* b = best_row(rows, &axis, v);
      os << "<tr><td>" << html_escape(v) << "</td><td>" << (b ? html_escape(params_text(*b)) : "no successful point")
         << "</td><td>" << (b ? fixed(figure(*b, "/tflops"), 1) : "") << "</td><td>" << (b ? fixed(figure(*b, "/time_us"), 1) : "")
         << "</td></tr>";
    }
    os << "</table></section>";
  }
  os << "<section><h2>Every point</h2>";
  points_table(os, rows);
  os << "</section><section><h2>Spec</h2><pre>" << html_escape(manifest.value("spec_text", "")) << "</pre></section></body></html>\n";
  return os.str();
}

void write_sweep_report(const std::filesystem::path& dir, const std::filesystem::path& out) {
  require_sweep_dir(dir);
  const ResultStore store(dir);
  const ordered_json manifest = store.read_manifest();
  const std::filesystem::path results = dir / "results.jsonl";
  std::ifstream in(results);
  if (!in) throw arch::ConfigError(arch::ValueOrigin{results.string(), 0, 0, {}}, "", "cannot open the results");
  std::vector<ordered_json> rows;
  std::string line;
  for (std::uint32_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    ordered_json r = ordered_json::parse(line, nullptr, false);
    if (r.is_discarded() || !r.is_object() || !r.contains("params")) {
      throw arch::ConfigError(arch::ValueOrigin{results.string(), n, 1, {}}, "", "not a result record");
    }
    rows.push_back(std::move(r));
  }
  write_file_atomically(out, sweep_report_html(manifest, rows));
}

}  // namespace attnsim::sweep
