// The HTML page of a sweep's results: TFLOP/s and time against each swept axis, traffic per level,
// the best point of each axis value, failures, and every point; inline SVG, no script, no network.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sweep/sweep_spec.h"

namespace attnsim::sweep {

// The page for a manifest and the rows of its results.jsonl.
std::string sweep_report_html(const ordered_json& manifest, const std::vector<ordered_json>& rows);

// Reads DIR's manifest and results.jsonl and writes the page to `out`.
// Contract: throws arch::ConfigError naming the file (and line) when DIR holds no sweep, a line of
// results.jsonl is not JSON, or `out` cannot be written.
void write_sweep_report(const std::filesystem::path& dir, const std::filesystem::path& out);

}  // namespace attnsim::sweep
