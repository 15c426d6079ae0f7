#include "flags.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ridgeline::cli {

bool ParsedFlags::Has(std::string_view name) const {
  return values_.find(name) != values_.end();
}

std::vector<std::string> ParsedFlags::GetAll(std::string_view name) const {
  auto it = all_.find(name);
  return it == all_.end() ? std::vector<std::string>() : it->second;
}

std::optional<std::string> ParsedFlags::Get(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

namespace {

absl::StatusOr<int64_t> ParseInt(const std::string& flag,
                                 const std::string& text, int64_t min,
                                 int64_t max) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(text, &v) || v < min || v > max) {
    if (min == -std::numeric_limits<int64_t>::max() &&
        max == std::numeric_limits<int64_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": expected an integer, got '", text, "'"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": expected an integer in [", min, ", ", max,
                     "], got '", text, "'"));
  }
  return v;
}

}  // namespace

absl::StatusOr<std::optional<int64_t>> ParsedFlags::GetInt(
    std::string_view name, int64_t min, int64_t max) const {
  std::optional<std::string> text = Get(name);
  if (!text) return std::optional<int64_t>();
  absl::StatusOr<int64_t> v = ParseInt(std::string(name), *text, min, max);
  if (!v.ok()) return v.status();
  return std::optional<int64_t>(*v);
}

absl::StatusOr<std::optional<double>> ParsedFlags::GetDouble(
    std::string_view name) const {
  std::optional<std::string> text = Get(name);
  if (!text) return std::optional<double>();
  double v = 0;
  if (!absl::SimpleAtod(*text, &v) || !std::isfinite(v)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", std::string(name), " must be a finite number, got \"", *text, "\""));
  }
  return std::optional<double>(v);
}

absl::StatusOr<std::vector<int64_t>> ParsedFlags::GetIntList(
    std::string_view name, int64_t min, int64_t max) const {
  std::vector<int64_t> out;
  for (const std::string& item : GetList(name)) {
    absl::StatusOr<int64_t> v = ParseInt(std::string(name), item, min, max);
    if (!v.ok()) return v.status();
    out.push_back(*v);
  }
  return out;
}

std::vector<std::string> ParsedFlags::GetList(std::string_view name) const {
  std::optional<std::string> text = Get(name);
  if (!text) return {};
  return SplitList(*text);
}

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> out;
  while (true) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && absl::ascii_isspace(item.front()))
      item.remove_prefix(1);
    while (!item.empty() && absl::ascii_isspace(item.back()))
      item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                       const std::vector<FlagSpec>& specs) {
  ParsedFlags parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") {
      parsed.positional_.insert(parsed.positional_.end(), args.begin() + i + 1,
                                args.end());
      break;
    }
    if (!arg.starts_with("--")) {
      parsed.positional_.emplace_back(arg);
      continue;
    }
    arg.remove_prefix(2);
    std::string name(arg);
    std::optional<std::string> inline_value;
    if (size_t eq = arg.find('='); eq != std::string_view::npos) {
      name = std::string(arg.substr(0, eq));
      inline_value = std::string(arg.substr(eq + 1));
    }
    auto spec = std::find_if(specs.begin(), specs.end(),
                             [&](const FlagSpec& s) { return s.name == name; });
    if (spec == specs.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name, " (see --help)"));
    }
    if (spec->value_name.empty()) {
      if (inline_value) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " is a switch and takes no value, got '",
                         *inline_value, "'"));
      }
      parsed.values_[name] = "true";
      continue;
    }
    if (inline_value) {
      parsed.values_[name] = *inline_value;
      parsed.all_[name].push_back(*inline_value);
    } else if (i + 1 < args.size()) {
      parsed.values_[name] = args[++i];
      parsed.all_[name].push_back(parsed.values_[name]);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " needs a value (", spec->value_name, ")"));
    }
  }
  return parsed;
}

std::string FlagHelp(const std::vector<FlagSpec>& specs) {
  size_t width = 0;
  std::vector<std::string> lefts;
  for (const FlagSpec& s : specs) {
    lefts.push_back(absl::StrCat("--", s.name, s.value_name.empty() ? "" : " ",
                                 s.value_name));
    width = std::max(width, lefts.back().size());
  }
  std::string out;
  for (size_t i = 0; i < specs.size(); ++i) {
    absl::StrAppend(&out, "  ", lefts[i],
                    std::string(width + 2 - lefts[i].size(), ' '),
                    specs[i].help, "\n");
  }
  return out;
}

}  // namespace ridgeline::cli
