// `ridgeline explore` (design-space exploration through the Explore RPC or
// the in-process Backend) and `ridgeline merge` (shard outputs -> exactly
// the single-process output).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ridgeline::cli {

// `command` is "explore" or "merge"; `leading` are the common flags given
// before the command (--server, --format, ...); `args` the rest.
int ExploreCli(const std::string& command,
               const std::vector<std::string>& leading,
               const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err);

}  // namespace ridgeline::cli
