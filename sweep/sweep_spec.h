// A sweep specification (docs/sweeps.md): a base point and axes, expanded into the points to
// simulate. Knows nothing of how points are run or stored.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/simulate_point.h"

namespace attnsim::sweep {

using ordered_json = nlohmann::ordered_json;

// One [[axis]] table: keys whose value lists advance together (a zip); the axes of a spec combine
// as a cartesian product, the first axis outermost.
struct Axis {
  std::vector<std::string> keys;                 // "problem.seqlen", "arch.cu.lds_size", "kernel.fwd.block_n", ...
  std::vector<std::vector<ordered_json>> values;  // values[k][i]: key k's i-th value
  std::size_t size() const { return values.empty() ? 0 : values.front().size(); }
};

// One point of the sweep: where it sits, its axis values, the full spec it stands for, and the
// key that identifies it in a results directory.
struct SweepPoint {
  std::size_t index = 0;     // position in the expansion, 0-based
  ordered_json params;       // axis key -> value, in axis order
  report::PointSpec spec;
  ordered_json canonical;    // canonical_spec(spec)
  std::string id;            // its hash, as point_id(spec)
};

// A parsed specification.
struct SweepSpec {
  std::string file;       // path as given, for messages
  std::string text;       // the file's text, kept with the results
  report::PointSpec base;
  ordered_json base_problem;  // [base.problem] as read (shorthands expanded); axis values replace its fields
  std::vector<Axis> axes;
  std::size_t point_count() const;
};

// Reads a spec. Contract: throws arch::ConfigError naming file:line:column and the key on invalid
// TOML, unknown tables or keys, an axis key outside arch.*, problem.*, kernel.*, direction, an empty
// value list, zipped lists of different lengths, a value that is not a string, number or boolean,
// or an invalid base problem. Values that are invalid for the model (an override the config
// rejects, a tile that does not fit) are not checked here: they fail their points.
SweepSpec load_sweep_text(const std::string& text, const std::string& file);
SweepSpec load_sweep_file(const std::string& path);

// Every point, in expansion order. Contract: a point whose spec cannot be built (an invalid problem
// value on an axis) is still returned, with `error_of` (when given) set at its index; its spec is
// the base with the valid values applied.
std::vector<SweepPoint> expand(const SweepSpec& spec, std::vector<std::string>* error_of = nullptr);

// The canonical text of a point's full spec (attnsim version, arch name and, for a config file,
// the hash of its contents, overrides, every problem field, kernel, direction) and its 16-hex-digit
// FNV-1a hash. Equal specs have equal ids, on any machine.
ordered_json canonical_spec(const report::PointSpec& spec);
std::string point_id(const report::PointSpec& spec);

// The text a parameter value shows in tables and CSV ("64KiB", "4096", "true").
std::string value_text(const ordered_json& v);

}  // namespace attnsim::sweep
