// `ridgeline explore --sensitivity INDEX` output (explore_sensitivity.h).
#include "explore_sensitivity.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "common.h"
#include "ridgeline/explore/space.h"
#include "table.h"

namespace ridgeline::cli {
namespace {

std::string Num(double v, bool csv) {
  if (!std::isfinite(v)) return csv ? "" : "-";
  return csv ? explore::FormatNumber(v) : absl::StrFormat("%.4g", v);
}

std::string Pct(double v, bool csv) {
  if (!std::isfinite(v)) return csv ? "" : "-";
  return csv ? explore::FormatNumber(v) : absl::StrFormat("%+.2f%%", 100 * v);
}

}  // namespace

absl::Status RunExploreSensitivity(Client& client,
                                   const v1::ExploreSensitivityRequest& request,
                                   const std::string& format,
                                   std::ostream& out) {
  absl::StatusOr<v1::ExploreSensitivityResponse> r =
      client.ExploreSensitivity(request);
  if (!r.ok()) return r.status();
  if (format == "json") {
    out << Json(*r) << "\n";
    return absl::OkStatus();
  }
  const bool csv = format == "csv";
  Table t({"axis", csv ? "value" : ">value", csv ? "step" : ">step", "metric",
           csv ? "at_point" : ">at_point", csv ? "elasticity" : ">elasticity",
           csv ? "change_plus_10pct" : ">change_plus_10pct", "limited_by"});
  for (const v1::AxisSensitivity& a : r->axes()) {
    for (int m = 0; m < r->metric_names_size(); ++m) {
      t.rows.push_back({a.axis(), a.value(), Pct(a.step_fraction(), csv),
                        r->metric_names(m), Num(r->metrics(m), csv),
                        Num(a.elasticity(m), csv),
                        Pct(a.change_plus_10pct(m), csv), r->limited_by(m)});
    }
  }
  if (!csv) {
    out << "point " << r->index() << ":";
    for (int k = 0; k < r->axis_names_size(); ++k) {
      out << " " << r->axis_names(k) << "=" << r->axis_values(k);
    }
    out << "\n";
  }
  PrintTable(t, csv ? TableStyle::kCsv : TableStyle::kText, out, 0);
  if (!csv) out << "\n" << r->summary();
  return absl::OkStatus();
}

}  // namespace ridgeline::cli
