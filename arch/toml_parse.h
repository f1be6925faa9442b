// Parsing TOML text with errors that name the file, line and column, for every TOML input
// (arch configs, problem files, sweep specs).
#pragma once

#include <string>
#include <string_view>

#include <toml++/toml.h>

namespace attnsim::arch {

// Contract: returns the document, or throws ConfigError "file:line:column: invalid TOML: ...".
toml::table parse_toml(std::string_view text, const std::string& file);

// Reads a whole file. Contract: throws ConfigError "file: cannot open the file" when it cannot.
std::string read_text_file(const std::string& path);

}  // namespace attnsim::arch
