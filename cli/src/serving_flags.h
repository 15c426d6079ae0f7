// Flag values the serving commands (`plan`, `simulate`) share: token length
// distributions, format sets, and the flag a failed request's field path
// names.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::cli {

// "N" (fixed), "MIN..MAX" (uniform) or "V:W,V:W" (histogram); nullopt on a
// syntax error (ranges are checked by the service, which names the field).
std::optional<v1::TokenLengths> ParseLengths(const std::string& text);

// "WEIGHTS[/ACTIVATIONS[/KV]]": one name sets all three, two set weights and
// activations (the KV cache follows the activations). nullopt for more
// than three parts.
std::optional<v1::Formats> ParseFormatSet(const std::string& text);

// "CODE: message (flag --x)", the flag from the status's field path (a
// payload in-process and from the server's trailers alike): the first
// entry of `fields` the path starts with. The message text is the
// fallback for errors that carry no path.
using FieldFlag = std::pair<const char*, const char*>;
std::string WithFlag(const absl::Status& status,
                     std::span<const FieldFlag> fields);

}  // namespace ridgeline::cli
