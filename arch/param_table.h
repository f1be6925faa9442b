// The declaration of every config parameter, once: key path, expected form, range and meaning.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "arch/gpu_spec.h"

namespace toml {
inline namespace v3 {
class node;
}
}  // namespace toml

namespace attnsim::arch {

// Why a value was rejected; `at` points into the value when a part of it is at fault
// (an element of an array), else the loader reports the key's own position.
struct ParamIssue {
  std::string message;
  const toml::node* at = nullptr;
};

// One parameter of the arch schema. The table of these is the single source of truth for
// loading, overrides, `arch show --params` and docs; a key not declared here is an error.
struct ParamDecl {
  std::string path;              // dotted key path, e.g. "cu.lds_size"
  std::string expected;          // what a valid value looks like, for error messages
  std::string description;       // one line, for humans
  std::string optional_section;  // non-empty: the whole section may be absent (e.g. "mall")
  bool optional_key = false;     // the key may be absent; absent means "not set" (see its description)

  // Parses the node into the spec. Returns an issue on a wrong type, a bad unit or an
  // out-of-range value. Contract: writes only this parameter's field.
  std::function<std::optional<ParamIssue>(GpuSpec&, const toml::node&)> assign;
  // The field's value, as text with its unit and as JSON (canonical units: bytes, Hz, B/s, ps, W).
  std::function<std::string(const GpuSpec&)> render;
  std::function<nlohmann::json(const GpuSpec&)> to_json;
};

// Every parameter, in the order of the shipped config files.
const std::vector<ParamDecl>& param_table();

// The declaration for a dotted path, or nullptr.
const ParamDecl* find_param(std::string_view path);

// The declared path nearest to an unknown one (for "did you mean"), or empty.
std::string nearest_param(std::string_view path);

}  // namespace attnsim::arch
