// `ridgeline simulate`: one replica's online serving simulation (the
// Simulate RPC) from flags, at one or more loads; table, CSV or JSON.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ridgeline::cli {

// `args` excludes the program name and the subcommand (common flags such as
// --server may be among them). Exit code: 0 ok (or --help), 1 the request
// failed, 2 usage error.
int SimulateCli(const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err);

}  // namespace ridgeline::cli
