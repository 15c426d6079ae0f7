#include "table.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ridgeline::cli {

namespace {

std::string CsvCell(std::string_view cell) {
  // RFC 4180: a cell with a comma, quote, CR or LF is quoted.
  if (cell.find_first_of(",\"\r\n") == std::string_view::npos) {
    return std::string(cell);
  }
  std::string quoted = "\"";
  for (char c : cell) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string_view HeaderText(std::string_view h) {
  return !h.empty() && h[0] == '>' ? h.substr(1) : h;
}

}  // namespace

void PrintTable(const Table& table, TableStyle style, std::ostream& out,
                int indent) {
  if (style == TableStyle::kCsv) {
    auto line = [&](const std::vector<std::string>& cells, bool header) {
      for (size_t i = 0; i < cells.size(); ++i) {
        out << (i ? "," : "")
            << CsvCell(header ? HeaderText(cells[i]) : cells[i]);
      }
      out << "\n";
    };
    if (!table.headers.empty()) line(table.headers, true);
    for (const auto& row : table.rows) line(row, false);
    return;
  }
  size_t columns = table.headers.size();
  for (const auto& row : table.rows) columns = std::max(columns, row.size());
  std::vector<size_t> width(columns, 0);
  std::vector<bool> right(columns, false);
  for (size_t i = 0; i < table.headers.size(); ++i) {
    width[i] = HeaderText(table.headers[i]).size();
    right[i] = table.headers[i].starts_with('>');
  }
  for (const auto& row : table.rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string text(indent, ' ');
    for (size_t i = 0; i < cells.size(); ++i) {
      std::string_view cell = header ? HeaderText(cells[i]) : cells[i];
      std::string pad(width[i] - cell.size(), ' ');
      bool last = i + 1 == cells.size();
      if (i) text += "  ";
      if (right[i]) {
        text += pad;
        text += cell;
      } else {
        text += cell;
        if (!last) text += pad;
      }
    }
    out << text << "\n";
  };
  if (!table.headers.empty()) line(table.headers, true);
  for (const auto& row : table.rows) line(row, false);
}

std::string Fixed3(double value) {
  if (value == 0) return "0";
  double mag = std::fabs(value);
  int decimals = mag >= 100 ? 0 : mag >= 10 ? 1 : mag >= 1 ? 2 : 3;
  if (mag < 0.001) return absl::StrFormat("%.2e", value);
  return absl::StrFormat("%.*f", decimals, value);
}

std::string Si(double value, const std::string& unit) {
  static constexpr struct {
    double scale;
    const char* prefix;
  } kPrefixes[] = {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"},
                   {1e6, "M"},  {1e3, "k"},  {1, ""}};
  double mag = std::fabs(value);
  for (const auto& p : kPrefixes) {
    if (mag >= p.scale) {
      std::string suffix = absl::StrCat(p.prefix, unit);
      return absl::StrCat(Fixed3(value / p.scale), suffix.empty() ? "" : " ",
                          suffix);
    }
  }
  return absl::StrCat(Fixed3(value), unit.empty() ? "" : " ", unit);
}

std::string Seconds(double seconds) {
  double mag = std::fabs(seconds);
  if (mag == 0) return "0 s";
  if (mag < 1e-6) return absl::StrCat(Fixed3(seconds * 1e9), " ns");
  if (mag < 1e-3) return absl::StrCat(Fixed3(seconds * 1e6), " us");
  if (mag < 1) return absl::StrCat(Fixed3(seconds * 1e3), " ms");
  return absl::StrCat(Fixed3(seconds), " s");
}

// Binary prefixes, as device memory is sized (an "80 GB" H100 holds 80 GiB):
// docs/web.md "Units". Rates (B/s) stay decimal, through Si().
std::string Bytes(double bytes) {
  static constexpr struct {
    double scale;
    const char* unit;
  } kUnits[] = {{0x1p50, "PiB"},
                {0x1p40, "TiB"},
                {0x1p30, "GiB"},
                {0x1p20, "MiB"},
                {0x1p10, "KiB"}};
  const double mag = std::fabs(bytes);
  for (const auto& u : kUnits) {
    if (mag >= u.scale) {
      return absl::StrCat(Fixed3(bytes / u.scale), " ", u.unit);
    }
  }
  return absl::StrCat(Fixed3(bytes), " B");
}

std::string Percent(double fraction) {
  return absl::StrFormat("%.1f%%", fraction * 100);
}

}  // namespace ridgeline::cli
