#include "cli/arch_command.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "arch/arch_locator.h"
#include "arch/config_error.h"
#include "arch/derived_figures.h"
#include "arch/param_table.h"
#include "arch/provenance.h"
#include "cli/arch_options.h"
#include "cli/arch_report.h"
#include "report/text_table.h"

namespace attnsim::cli {

using report::fixed;
using report::TextTable;
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

void add_show(CLI::App& arch_app) {
  struct State {
    ArchOptions arch;
    bool json = false;
    bool params = false;
  };
  auto st = std::make_shared<State>();
  CLI::App* show = arch_app.add_subcommand("show", "Print a GPU's spec and derived figures (peaks, bandwidths, clocks)");
  st->arch.add_to(*show);
  show->add_flag("--json", st->json, "print JSON (keys in docs/cli.md)");
  show->add_flag("--params", st->params, "list every parameter with its value and source");
  show->footer(
      "Examples:\n"
      "  attnsim arch show --arch mi300x\n"
      "  attnsim arch show --arch mi300x --set hbm.peak_bandwidth=8TB/s --set cu.lds_size=160KiB --json\n"
      "  attnsim arch show --arch ./my_gpu.toml --params");
  show->callback([st] {
    const arch::LoadedArch loaded = st->arch.load();
    const arch::DerivedFigures derived = arch::derive(loaded.spec);
    if (st->json) {
      std::cout << arch_json(loaded, derived).dump(2) << "\n";
    } else {
      std::cout << arch_text(loaded, derived, st->params);
    }
  });
}

void add_params(CLI::App& arch_app) {
  auto json_out = std::make_shared<bool>(false);
  CLI::App* params = arch_app.add_subcommand("params", "List every key a GPU config must hold, with its form and meaning");
  params->add_flag("--json", *json_out, "print JSON");
  params->footer("Example:\n  attnsim arch params");
  params->callback([json_out] {
    if (*json_out) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& d : arch::param_table()) {
        j.push_back({{"key", d.path},
                     {"expected", d.expected},
                     {"description", d.description},
                     {"optional_section", d.optional_section},
                     {"optional", d.optional_key}});
      }
      std::cout << j.dump(2) << "\n";
      return;
    }
    TextTable t;
    for (const auto& d : arch::param_table()) {
      t.add({d.path, d.description + (d.optional_section.empty() ? "" : " [section optional]") +
                         (d.optional_key ? " [optional]" : "")});
      t.add({"", "  " + d.expected});
    }
    std::cout << t.render(0);
  });
}

void add_list(CLI::App& arch_app) {
  CLI::App* list = arch_app.add_subcommand("list", "List the shipped GPU configs");
  list->footer("Example:\n  attnsim arch list");
  list->callback([] {
    TextTable t;
    for (const auto& name : arch::available_arch_names()) {
      const auto loaded = arch::load_arch_file(arch::resolve_arch(name));
      t.add({name, loaded.spec.name, loaded.file});
    }
    std::cout << t.render(0);
  });
}

void add_lint(CLI::App& arch_app, int& exit_code) {
  auto opts = std::make_shared<ArchOptions>();
  CLI::App* lint = arch_app.add_subcommand(
      "lint", "Check a config: it loads, and every value cites a source listed in docs/sources.md");
  lint->add_option("--arch", opts->arch, "a shipped name or the path of a .toml file")->capture_default_str();
  lint->footer("Examples:\n  attnsim arch lint --arch mi300x\n  attnsim arch lint --arch ./my_gpu.toml");
  lint->callback([opts, &exit_code] {
    const std::string path = arch::resolve_arch(opts->arch);
    arch::load_arch_file(path);  // throws on any schema error
    const auto problems = arch::check_provenance(read_file(path), arch::builtin_sources());
    for (const auto& p : problems) std::cout << path << ":" << p.line << ": " << p.message << "\n";
    if (problems.empty()) {
      std::cout << path << ": ok, every value cites a known source\n";
    } else {
      std::cout << problems.size() << " value(s) without a resolvable source\n";
      exit_code = arch::kExitBadInput;
    }
  });
}

}  // namespace

void add_arch_command(CLI::App& app, int& exit_code) {
  CLI::App* arch_app = app.add_subcommand("arch", "GPU architectures: show specs and derived figures, list, lint");
  arch_app->require_subcommand(1);
  arch_app->footer("Example:\n  attnsim arch show --arch mi300x");
  add_show(*arch_app);
  add_params(*arch_app);
  add_list(*arch_app);
  add_lint(*arch_app, exit_code);
}

}  // namespace attnsim::cli
