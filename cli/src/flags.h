// A small command-line flag parser: `--name value`, `--name=value`, boolean
// switches and positional arguments. Errors name the flag and what was
// expected. Not thread-safe; one FlagParser per command line.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ridgeline::cli {

struct FlagSpec {
  std::string name;        // without the leading "--"
  std::string value_name;  // "" = boolean switch
  std::string help;
};

// The parsed command line of one subcommand.
class ParsedFlags {
 public:
  bool Has(std::string_view name) const;
  // The last value given; nullopt when absent.
  std::optional<std::string> Get(std::string_view name) const;
  // Every value given, in order (a repeatable flag such as --seq).
  std::vector<std::string> GetAll(std::string_view name) const;
  const std::vector<std::string>& positional() const { return positional_; }

  // Typed accessors; errors name the flag, the allowed range and the value.
  absl::StatusOr<std::optional<int64_t>> GetInt(std::string_view name,
                                                int64_t min, int64_t max) const;
  // A finite decimal number; the range is checked where the value is used
  // (the service names the field and its range).
  absl::StatusOr<std::optional<double>> GetDouble(std::string_view name) const;
  // Comma-separated list ("1,8,32"); empty vector when absent.
  absl::StatusOr<std::vector<int64_t>> GetIntList(std::string_view name,
                                                  int64_t min,
                                                  int64_t max) const;
  std::vector<std::string> GetList(std::string_view name) const;

 private:
  friend absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>&,
                                                const std::vector<FlagSpec>&);
  std::map<std::string, std::string, std::less<>> values_;
  std::map<std::string, std::vector<std::string>, std::less<>> all_;
  std::vector<std::string> positional_;
};

// INVALID_ARGUMENT for an unknown flag, a missing value or a value given to
// a switch. "--" ends flag parsing.
absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                       const std::vector<FlagSpec>& specs);

// "  --batch N        sequences decoded together" lines for --help.
std::string FlagHelp(const std::vector<FlagSpec>& specs);

// Splits "a,b,,c" into {"a","b","c"} (empty items dropped, spaces trimmed).
std::vector<std::string> SplitList(std::string_view text);

}  // namespace ridgeline::cli
