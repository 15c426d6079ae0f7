// `ridgeline explore ... --sensitivity INDEX`: the sensitivity of one design
// point (the ExploreSensitivity RPC) printed as a table, CSV or JSON.
#pragma once

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "client.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::cli {

// Output (format "table", "csv" or "json"):
//   csv   header axis,value,step,metric,at_point,elasticity,
//         change_plus_10pct,limited_by: one row per axis x metric (metrics
//         are the objectives as given, or every metric without
//         --objective); elasticity and change empty where unknown.
//   table the same rows for people, then the summary lines.
//   json  the ExploreSensitivityResponse as canonical proto3 JSON.
// Errors are the call's (the caller maps the field path to a flag).
absl::Status RunExploreSensitivity(Client& client,
                                   const v1::ExploreSensitivityRequest& request,
                                   const std::string& format, std::ostream& out);

}  // namespace ridgeline::cli
