// The named kernel presets (real kernels' schedules with their sources).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "workloads/schedule.h"

namespace attnsim::workloads {

// The preset of that name, or nothing.
std::optional<KernelSchedule> preset(const std::string& name);

}  // namespace attnsim::workloads
