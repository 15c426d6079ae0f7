// What an HTTP request body may cost before the JSON parser sees it: the
// Content-Encoding undone within the same byte cap as the body on the wire
// (a 1 MB gzip bomb stops at the cap, not at 1 GiB), and the JSON's nesting
// checked in one linear pass with bounded memory, so a body of deeply
// nested or list-in-list arrays is refused by its path before protobuf's
// parser builds anything for it. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ridgeline::service {

// The deepest nesting of objects and arrays a request may have. The deepest
// real request (inline hardware: hardware.description.tiers[i].compute...)
// is under 10 levels.
inline constexpr int kMaxJsonDepth = 32;

// OK for the Content-Encodings DecodeContent undoes, else UNIMPLEMENTED
// naming the header (HTTP 415), checked before the body is read.
absl::Status CheckContentEncoding(absl::string_view content_encoding);

// The body with `content_encoding` ("", "identity", "gzip", "x-gzip",
// "deflate") undone. RESOURCE_EXHAUSTED when the decoded body would exceed
// `max_bytes` (counted as it inflates: memory stays under the cap),
// INVALID_ARGUMENT when it does not decode, UNIMPLEMENTED for any other
// encoding (HTTP 415).
absl::StatusOr<std::string> DecodeContent(std::string body,
                                          absl::string_view content_encoding,
                                          int64_t max_bytes);

// OK, or INVALID_ARGUMENT with the path of the offending value as its field
// path ("workload.batchSizes[0]"; JSON names as written) when the body nests
// objects and arrays deeper than `max_depth`, or puts an array directly in
// an array (no proto3 JSON of these messages has a list of lists). Does not
// validate the JSON otherwise: the protobuf parser does that next.
absl::Status CheckJsonNesting(absl::string_view json, int max_depth);

}  // namespace ridgeline::service
