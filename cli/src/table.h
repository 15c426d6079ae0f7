// The one table printer of the CLI (aligned text or CSV) and the number
// formatting it uses. Plain functions; thread-safe.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ridgeline::cli {

// A table of already-formatted cells. Columns whose header starts with '>'
// are right-aligned in text mode (the '>' is not printed).
struct Table {
  Table() = default;
  explicit Table(std::vector<std::string> h) : headers(std::move(h)) {}
  std::vector<std::string> headers;  // empty: no header line (key/value lists)
  std::vector<std::vector<std::string>> rows;
};

enum class TableStyle { kText, kCsv };

// Text: columns separated by two spaces, each line indented by `indent`.
// CSV: RFC 4180 quoting, no indent.
void PrintTable(const Table& table, TableStyle style, std::ostream& out,
                int indent = 2);

// Human numbers: SI prefixes with 3 significant digits ("1.23 T", "512 k").
std::string Si(double value, const std::string& unit = "");
// Seconds as "812 us", "12.3 ms", "1.05 s".
std::string Seconds(double seconds);
// Bytes (sizes) with binary prefixes: "15.0 GiB", "512 KiB", "96 B".
std::string Bytes(double bytes);
// "42.0%".
std::string Percent(double fraction);
// Three significant digits, no prefix.
std::string Fixed3(double value);

}  // namespace ridgeline::cli
