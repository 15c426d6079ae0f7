// Errors carry the request field they are about as data, not only as text:
// an absl::Status payload under kFieldPathTypeUrl holding the field path
// ("workload.batch", "hardware.description.tiers[1].capacity_bytes").
// Frontends map it to a CLI flag, an HTTP field or a UI control without
// parsing messages; the gRPC server sends it as trailing metadata
// "ridgeline-field-path".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace ridgeline::engine {

inline constexpr std::string_view kFieldPathTypeUrl =
    "type.googleapis.com/ridgeline.v1.FieldPath";

// `status` with its field path set to `path` (replacing any). OK stays OK.
absl::Status WithFieldPath(absl::Status status, std::string_view path);

// The field path of `status`, or nullopt when it names none.
std::optional<std::string> FieldPathOf(const absl::Status& status);

// A nested error (engine, registry) seen from the request: the message
// becomes "<prefix>: <message>", and the field path prefix + "." + the
// nested path (just `prefix` when the nested error names none; the nested
// path unchanged when it already starts with `prefix`).
absl::Status PrefixFieldPath(std::string_view prefix,
                             const absl::Status& status);

}  // namespace ridgeline::engine
