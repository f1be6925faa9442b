// Cross-field consistency rules of a GPU spec (values valid alone but impossible together).
#pragma once

#include <functional>
#include <string_view>

#include "arch/config_error.h"
#include "arch/gpu_spec.h"

namespace attnsim::arch {

// Throws ConfigError naming the offending key (located by `where`) on the first broken rule.
void check_consistency(const GpuSpec& spec, const std::function<ValueOrigin(std::string_view path)>& where);

}  // namespace attnsim::arch
