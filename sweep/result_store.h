// A sweep's results directory (docs/sweeps.md): one file per finished point, written atomically,
// the manifest of the sweep, and the results tables assembled from them in point order.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sweep/sweep_spec.h"

namespace attnsim::sweep {

// A finished point: {"id", "status": "ok"|"error", "params", "spec", "report" | "error"}.
using PointRecord = ordered_json;

// Layout: DIR/sweep.json (manifest: spec text and the points in order), DIR/points/<id>.json (one
// record per finished point), DIR/results.csv and DIR/results.jsonl (assembled tables).
// Contract: every file is written to a temporary name and renamed, so a killed sweep leaves each
// file either complete or absent. Methods are safe to call from several threads for different ids.
class ResultStore {
 public:
  // Contract: creates DIR and DIR/points when missing; throws arch::ConfigError naming DIR when it
  // cannot, or when DIR exists and is not a directory.
  explicit ResultStore(std::filesystem::path dir);

  const std::filesystem::path& dir() const { return dir_; }
  // The record of a finished point, or nothing when it has none (a file that cannot be parsed, as
  // a kill during an older, non-atomic write could leave, counts as none).
  std::optional<PointRecord> load(const std::string& id) const;
  void save(const PointRecord& record) const;

  void write_manifest(const ordered_json& manifest) const;
  // The manifest. Contract: throws arch::ConfigError naming the file when it is missing or invalid.
  ordered_json read_manifest() const;

  // Writes results.jsonl and results.csv for the manifest's points that have records, in point
  // order. Returns how many rows were written.
  std::size_t write_results(const ordered_json& manifest) const;

 private:
  std::filesystem::path dir_;
};

// Checks, without creating anything, that `dir` is a results directory (it has a manifest).
// Contract: throws arch::ConfigError naming the directory or its missing manifest.
void require_sweep_dir(const std::filesystem::path& dir);

// The manifest of a sweep: attnsim version, spec file and text, and each point's id and params.
ordered_json manifest_of(const SweepSpec& spec, const std::vector<SweepPoint>& points);

// Writes `text` to `path` through a temporary file in the same directory and a rename.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

// The CSV header and rows of result records: point, id, status, error, param.<axis key>..., then
// every figure of the run report flattened to dotted keys (kernels[0].time_us, traffic.hbm_read_bytes).
// Columns are the union over rows, in order of first appearance.
std::string results_csv(const std::vector<std::pair<std::size_t, PointRecord>>& rows);

}  // namespace attnsim::sweep
