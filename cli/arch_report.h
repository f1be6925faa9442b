// Renders a loaded GPU spec and its derived figures for people (text) and programs (JSON).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "arch/derived_figures.h"
#include "arch/spec_loader.h"

namespace attnsim::cli {

// The `attnsim arch show` JSON document; keys are documented in docs/cli.md and kept stable.
nlohmann::json arch_json(const arch::LoadedArch& loaded, const arch::DerivedFigures& derived);

// The readable summary; with `with_params`, every parameter with its value and source follows.
std::string arch_text(const arch::LoadedArch& loaded, const arch::DerivedFigures& derived, bool with_params);

}  // namespace attnsim::cli
