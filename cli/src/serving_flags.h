// Flag values the serving commands (`plan`, `simulate`) share: token length
// distributions and format sets.
#pragma once

#include <optional>
#include <string>

#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::cli {

// "N" (fixed), "MIN..MAX" (uniform) or "V:W,V:W" (histogram); nullopt on a
// syntax error (ranges are checked by the service, which names the field).
std::optional<v1::TokenLengths> ParseLengths(const std::string& text);

// "WEIGHTS[/ACTIVATIONS[/KV]]": one name sets all three, two set weights and
// activations (the KV cache follows the activations). nullopt for more
// than three parts.
std::optional<v1::Formats> ParseFormatSet(const std::string& text);

}  // namespace ridgeline::cli
