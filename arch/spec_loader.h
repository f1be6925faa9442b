// Loads a GPU description from TOML, applies --set overrides, and validates it strictly.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "arch/config_error.h"
#include "arch/gpu_spec.h"

namespace attnsim::arch {

// A `--set key.path=value` what-if override.
struct Override {
  std::string path;   // dotted key path
  std::string value;  // TOML value text; bare text that is not TOML (8TB/s) counts as a string
  std::string text;   // the whole argument, for messages
};

// Splits "key.path=value". Throws ConfigError when there is no '=' or no key.
Override parse_override(std::string_view text);

// Where one parameter's value came from and the source its comment cites.
struct ParamOrigin {
  ValueOrigin where;
  std::string source;  // text after "# src:", "--set" for overrides, empty when uncommented
};

// A validated spec plus what a user needs to trust it: the file and each value's origin.
struct LoadedArch {
  GpuSpec spec;
  std::string file;                              // path as given, or a display name
  std::map<std::string, ParamOrigin> origins;    // by parameter path
  std::vector<Override> overrides;
};

// Loads and validates a config file, then the overrides in order.
// Contract: returns a fully validated spec or throws ConfigError whose message names
// file:line:column (or the --set argument), the key, and what was expected. Never a partial spec,
// never a silent default.
LoadedArch load_arch_file(const std::string& path, const std::vector<std::string>& overrides = {});

// Same, from text already in memory; `display_name` stands for the file in messages.
LoadedArch load_arch_text(std::string_view toml_text, const std::string& display_name,
                          const std::vector<std::string>& overrides = {});

}  // namespace attnsim::arch
