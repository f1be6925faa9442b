#include "arch/toml_parse.h"

#include <fstream>
#include <sstream>

#include "arch/config_error.h"

namespace attnsim::arch {

toml::table parse_toml(std::string_view text, const std::string& file) {
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw ConfigError(ValueOrigin{file, b.line, b.column, {}}, "", "invalid TOML: " + std::string(e.description()));
  }
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(ValueOrigin{path, 0, 0, {}}, "", "cannot open the file");
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace attnsim::arch
