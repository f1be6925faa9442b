// attnsim: a cycle-approximate simulator of flash-attention kernels on GPUs.
#include <iostream>

#include <CLI/CLI.hpp>

#include "arch/config_error.h"
#include "cli/arch_command.h"
#include "cli/check_command.h"
#include "cli/micro_command.h"
#include "cli/run_command.h"
#include "cli/sweep_command.h"
#include "cli/traffic_command.h"
#include "cli/validate_command.h"

int main(int argc, char** argv) {
  CLI::App app{
      "attnsim: a cycle-approximate, discrete-event simulator of flash-attention kernels on GPUs\n"
      "(AMD Instinct MI300X first; other GPUs by TOML config)."};
  app.set_version_flag("--version", std::string(ATTNSIM_VERSION));
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  attnsim run                                               simulate aiter-v3 fwd+bwd on MI300X (B=1 Hq=64 Hkv=8 N=8192 causal)\n"
      "  attnsim validate validation/measurements/mi300x_aiter_v3.csv   predicted vs measured\n"
      "  attnsim arch show --arch mi300x                           MI300X spec, peaks and clocks under load\n"
      "  attnsim arch show --arch mi300x --set hbm.peak_bandwidth=8TB/s --json\n"
      "  attnsim arch params                                       every config key and its form\n"
      "  attnsim check --kernel aiter-v3 --direction bwd --causal  schedule vs naive attention on the CPU\n"
      "  attnsim micro --pattern mfma+trans --waves 2              simulated MFMA/exp co-execution on one CU\n"
      "  attnsim micro --pattern stream-read --level hbm           simulated HBM streaming bandwidth\n"
      "  attnsim traffic --kernel ck --direction bwd               FETCH_SIZE, WRITE_SIZE, L2 hits, HBM bytes\n"
      "  attnsim sweep configs/sweeps/mi300x_clock.toml -o clock   a what-if sweep on every core (docs/sweeps.md)\n"
      "\n"
      "Exit codes: 0 success, 2 invalid input (config, override, flag or file), 3 check failed or validate over\n"
      "its bound, 1 internal error.");

  int exit_code = 0;
  attnsim::cli::add_arch_command(app, exit_code);
  attnsim::cli::add_check_command(app, exit_code);
  attnsim::cli::add_micro_command(app);
  attnsim::cli::add_traffic_command(app);
  attnsim::cli::add_run_command(app);
  attnsim::cli::add_validate_command(app, exit_code);
  attnsim::cli::add_sweep_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and usage
    return attnsim::arch::kExitBadInput;
  } catch (const attnsim::arch::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return attnsim::arch::kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "attnsim: internal error: " << e.what() << "\n";
    return 1;
  }
  return exit_code;
}
