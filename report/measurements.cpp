#include "report/measurements.h"

#include <fstream>
#include <map>
#include <sstream>

#include "arch/config_error.h"
#include "report/csv_split.h"

namespace attnsim::report {

namespace {

using arch::ConfigError;
using arch::ValueOrigin;


const std::map<std::string, std::string>& metric_keys() {
  static const std::map<std::string, std::string> m{
      {"tflops", "/tflops"},
      {"time_us", "/time_us"},
      {"l2_fabric_read_bytes", "/traffic/l2_fabric_read_bytes"},
      {"l2_fabric_write_bytes", "/traffic/l2_fabric_write_bytes"},
      {"l2_fabric_read_plus_write_bytes", ""},
      {"hbm_read_bytes", "/traffic/hbm_read_bytes"},
      {"hbm_write_bytes", "/traffic/hbm_write_bytes"},
      {"l1_read_hit_rate", "/traffic/l1_read_hit_rate"},
      {"l2_hit_rate", "/traffic/l2_hit_rate"},
      {"l2_read_request_bytes", "/traffic/l2_read_request_bytes"},
      {"l2_atomic_request_bytes", "/traffic/l2_atomic_request_bytes"},
      {"l2_far_partition_bytes", "/traffic/l2_far_partition_bytes"},
      {"matrix_flops", "/matrix_flops_issued"},
      {"matrix_utilisation", ""}};
  return m;
}

}  // namespace

std::string MeasuredCase::label() const {
  return point.direction + " " + point.problem.describe();
}

std::vector<std::string> known_metrics() {
  std::vector<std::string> v;
  for (const auto& [k, _] : metric_keys()) v.push_back(k);
  return v;
}

double predicted(const nlohmann::json& report, const std::string& metric) {
  if (metric == "matrix_utilisation") {
    // The profiler's figure is one kernel's (the pass's matrix kernel): the kernel whose matrix
    // pipes were busy longest.
    double busiest = -1, utilisation = 0;
    for (const auto& k : report.at("kernels")) {
      const double u = k.at("utilisation").at("matrix").get<double>();
      const double busy = u * k.at("time_us").get<double>();
      if (busy > busiest) {
        busiest = busy;
        utilisation = u;
      }
    }
    return utilisation;
  }
  if (metric == "l2_fabric_read_plus_write_bytes") {
    return report["traffic"]["l2_fabric_read_bytes"].get<double>() + report["traffic"]["l2_fabric_write_bytes"].get<double>();
  }
  return report.at(nlohmann::json::json_pointer(metric_keys().at(metric))).get<double>();
}

std::vector<MeasuredCase> read_measurements(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(ValueOrigin{path, 0, 0, {}}, "file", "cannot open the measurements file");
  std::string text;
  std::getline(in, text);
  const std::vector<std::string> header = split_csv(text);
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  const std::vector<std::string> required{"arch", "preset", "direction", "batch", "heads_q", "heads_kv", "seqlen_q",
                                          "seqlen_k", "head_dim", "dtype", "causal", "metric", "measured"};
  for (const auto& name : required) {
    if (!column.count(name)) {
      throw ConfigError(ValueOrigin{path, 1, 0, {}}, name, "missing column (a measurements CSV needs: arch, preset, "
                                                           "direction, batch, heads_q, heads_kv, seqlen_q, seqlen_k, "
                                                           "head_dim, dtype, causal, metric, measured)");
    }
  }
  std::vector<MeasuredCase> cases;
  std::size_t line = 1;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty() || text == "\r") continue;
    const std::vector<std::string> f = split_csv(text);
    const auto get = [&](const std::string& name) -> std::string {
      const std::size_t i = column.at(name);
      return i < f.size() ? f[i] : std::string();
    };
    const auto where = [&](const std::string& name) {
      return ValueOrigin{path, static_cast<std::uint32_t>(line),
                         static_cast<std::uint32_t>(column.count(name) ? column.at(name) + 1 : 0), {}};
    };
    const auto number = [&](const std::string& name) {
      const std::string v = get(name);
      try {
        std::size_t used = 0;
        const double d = std::stod(v, &used);
        if (used != v.size()) throw std::invalid_argument(v);
        return d;
      } catch (const std::exception&) {
        throw ConfigError(where(name), name, "expected a number, got \"" + v + "\"");
      }
    };
    const auto count = [&](const std::string& name) {
      const double d = number(name);
      if (d < 1 || d != static_cast<double>(static_cast<std::uint64_t>(d))) {
        throw ConfigError(where(name), name, "expected a positive integer, got \"" + get(name) + "\"");
      }
      return static_cast<std::uint64_t>(d);
    };
    MeasuredCase c;
    c.file = path;
    c.line = line;
    c.point.arch = get("arch");
    c.point.kernel = get("preset");
    c.point.direction = get("direction");
    parse_directions(c.point.direction, path + ":" + std::to_string(line) + " direction");
    workloads::Problem& p = c.point.problem;
    p.batch = static_cast<std::uint32_t>(count("batch"));
    p.heads_q = static_cast<std::uint32_t>(count("heads_q"));
    p.heads_kv = static_cast<std::uint32_t>(count("heads_kv"));
    p.seqlen_q = count("seqlen_q");
    p.seqlen_k = count("seqlen_k");
    p.head_dim_qk = p.head_dim_v = static_cast<std::uint32_t>(count("head_dim"));
    const std::string dtype = get("dtype");
    const auto parsed_dtype = arch::parse_dtype(dtype);
    if (!parsed_dtype) throw ConfigError(where("dtype"), "dtype", "expected bf16, fp16 or fp8, got \"" + dtype + "\"");
    p.dtype = *parsed_dtype;
    const std::string causal = get("causal");
    if (causal != "0" && causal != "1") {
      throw ConfigError(where("causal"), "causal", "expected 0 or 1, got \"" + causal + "\"");
    }
    p.causal = causal == "1";
    const std::string layout = column.count("layout") ? get("layout") : std::string();
    if (!layout.empty()) {
      const auto parsed_layout = workloads::parse_layout(layout);
      if (!parsed_layout) throw ConfigError(where("layout"), "layout", "expected bshd or bhsd, got \"" + layout + "\"");
      p.layout = *parsed_layout;
    }
    workloads::validate(p, path + ":" + std::to_string(line));
    c.metric = get("metric");
    if (!metric_keys().count(c.metric)) {
      std::string names;
      for (const auto& m : known_metrics()) names += (names.empty() ? "" : ", ") + m;
      throw ConfigError(where("metric"), "metric", "unknown metric \"" + c.metric + "\" (known: " + names + ")");
    }
    c.measured = number("measured");
    if (column.count("gpu")) c.gpu = get("gpu");
    if (column.count("kernel")) c.kernel_name = get("kernel");
    if (column.count("unit")) c.unit = get("unit");
    if (column.count("source")) c.source = get("source");
    // Counters read by Nsight Compute: unless its cache control was off, every kernel it profiled
    // started with flushed and invalidated caches (NCU-CACHE), so the case is simulated that way.
    if (column.count("conditions")) {
      const std::string conditions = get("conditions");
      c.point.empty_caches_per_kernel =
          conditions.find("ncu") != std::string::npos && conditions.find("cache-control none") == std::string::npos;
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace attnsim::report
