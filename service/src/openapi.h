// GET /openapi.json: the OpenAPI 3.0 document of the HTTP/JSON frontend,
// generated from the linked proto descriptors (the generated pool), so it
// cannot drift from what the router parses: one `POST /v1/<Method>` per
// routed RPC, a schema per message in the canonical proto3 JSON mapping
// the router uses (lowerCamelCase json_name, 64-bit integers as strings,
// enums by name, maps as objects), NDJSON bodies for streaming RPCs, and
// the {code, message, field} error. Thread-safe (no state).
#pragma once

#include <string>
#include <vector>

namespace ridgeline::service {

// `methods`: RidgelineService RPC names (HttpMethods()); an unknown name is
// skipped.
std::string OpenApiJson(const std::vector<std::string>& methods);

}  // namespace ridgeline::service
