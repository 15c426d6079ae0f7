// `ridgeline hardware [list | show ID]` and `ridgeline models [list | show
// ID]`: the catalogs of the loaded plugins and of the built-in models.
#pragma once

#include <string_view>
#include <vector>

#include "common.h"
#include "flags.h"

namespace ridgeline::cli {

// The flags of both commands; `filter_help` documents --family (empty: none).
std::vector<FlagSpec> CatalogFlags(std::string_view filter_help);
Outcome HardwareCommand(Context& ctx);
Outcome ModelsCommand(Context& ctx);

}  // namespace ridgeline::cli
