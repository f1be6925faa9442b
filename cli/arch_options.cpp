#include "cli/arch_options.h"

#include "arch/arch_locator.h"

namespace attnsim::cli {

void ArchOptions::add_to(CLI::App& app) {
  app.add_option("--arch", arch,
                 "GPU: a shipped name (mi300x, mi325x, mi355x, h100, h200) or the path of a .toml file")
      ->capture_default_str();
  app.add_option("--set", sets,
                 "override a parameter for a what-if run, e.g. --set hbm.peak_bandwidth=8TB/s (repeatable; "
                 "`attnsim arch params` lists the keys)")
      ->allow_extra_args(false)
      ->take_all();
}

arch::LoadedArch ArchOptions::load() const { return arch::load_arch_file(arch::resolve_arch(arch), sets); }

}  // namespace attnsim::cli
