#include "openapi.h"

#include <set>

#include "google/protobuf/descriptor.h"
#include "nlohmann/json.hpp"

namespace ridgeline::service {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using nlohmann::json;

constexpr char kService[] = "ridgeline.v1.RidgelineService";

std::string Ref(const Descriptor* d) {
  return "#/components/schemas/" + d->full_name();
}

// One value of a field (not the repeated/map wrapper), as proto3 JSON
// prints it. `todo` collects the messages it references.
json ValueSchema(const FieldDescriptor* f,
                 std::vector<const Descriptor*>* todo) {
  static constexpr char k64[] =
      "a decimal string (a JSON number is accepted too)";
  switch (f->type()) {
    case FieldDescriptor::TYPE_DOUBLE:
      return {{"type", "number"}, {"format", "double"}};
    case FieldDescriptor::TYPE_FLOAT:
      return {{"type", "number"}, {"format", "float"}};
    // proto3 JSON prints 64-bit integers as decimal strings (and parses
    // strings or numbers).
    case FieldDescriptor::TYPE_INT64:
    case FieldDescriptor::TYPE_SINT64:
    case FieldDescriptor::TYPE_SFIXED64:
      return {{"type", "string"}, {"format", "int64"}, {"description", k64}};
    case FieldDescriptor::TYPE_UINT64:
    case FieldDescriptor::TYPE_FIXED64:
      return {{"type", "string"}, {"format", "uint64"}, {"description", k64}};
    case FieldDescriptor::TYPE_INT32:
    case FieldDescriptor::TYPE_SINT32:
    case FieldDescriptor::TYPE_SFIXED32:
      return {{"type", "integer"}, {"format", "int32"}};
    case FieldDescriptor::TYPE_UINT32:
    case FieldDescriptor::TYPE_FIXED32:
      return {{"type", "integer"}, {"format", "int64"}, {"minimum", 0}};
    case FieldDescriptor::TYPE_BOOL:
      return {{"type", "boolean"}};
    case FieldDescriptor::TYPE_STRING:
      return {{"type", "string"}};
    case FieldDescriptor::TYPE_BYTES:
      return {{"type", "string"}, {"format", "byte"}};
    case FieldDescriptor::TYPE_ENUM: {
      const EnumDescriptor* e = f->enum_type();
      json names = json::array();
      for (int i = 0; i < e->value_count(); ++i) {
        names.push_back(e->value(i)->name());
      }
      return {{"type", "string"}, {"enum", names}};
    }
    case FieldDescriptor::TYPE_MESSAGE:
    case FieldDescriptor::TYPE_GROUP:
      todo->push_back(f->message_type());
      return {{"$ref", Ref(f->message_type())}};
  }
  return json::object();
}

json FieldSchema(const FieldDescriptor* f,
                 std::vector<const Descriptor*>* todo) {
  if (f->is_map()) {
    // map<K, V> is a JSON object keyed by K's text.
    const FieldDescriptor* value = f->message_type()->map_value();
    return {{"type", "object"},
            {"additionalProperties", ValueSchema(value, todo)}};
  }
  if (f->is_repeated()) {
    return {{"type", "array"}, {"items", ValueSchema(f, todo)}};
  }
  return ValueSchema(f, todo);
}

json MessageSchema(const Descriptor* d, std::vector<const Descriptor*>* todo) {
  json properties = json::object();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    properties[f->json_name()] = FieldSchema(f, todo);
  }
  json schema = {{"type", "object"},
                 {"properties", properties},
                 // The router parses with ignore_unknown_fields = false.
                 {"additionalProperties", false}};
  // A oneof: at most one member set (proto3 optional's synthetic oneofs
  // are not listed).
  std::vector<std::string> groups;
  for (int i = 0; i < d->oneof_decl_count(); ++i) {
    const google::protobuf::OneofDescriptor* o = d->oneof_decl(i);
    if (o->is_synthetic()) continue;
    std::string members;
    for (int j = 0; j < o->field_count(); ++j) {
      members += (j ? ", " : "") + o->field(j)->json_name();
    }
    groups.push_back("`" + o->name() + "`: at most one of " + members);
  }
  if (!groups.empty()) {
    std::string text = "oneof ";
    for (size_t i = 0; i < groups.size(); ++i) {
      text += (i ? "; " : "") + groups[i];
    }
    schema["description"] = text;
  }
  return schema;
}

json ErrorSchema() {
  return {{"type", "object"},
          {"required", {"code", "message", "field"}},
          {"properties",
           {{"code",
             {{"type", "string"},
              {"description", "the gRPC status code's name"}}},
            {"message", {{"type", "string"}}},
            {"field",
             {{"type", "string"},
              {"description", "the request field at fault, \"\" if none"}}}}}};
}

}  // namespace

std::string OpenApiJson(const std::vector<std::string>& methods) {
  const google::protobuf::ServiceDescriptor* sd =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          kService);
  json paths = json::object();
  std::vector<const Descriptor*> todo;
  if (sd != nullptr) {
    for (const std::string& name : methods) {
      const google::protobuf::MethodDescriptor* m = sd->FindMethodByName(name);
      if (m == nullptr || m->client_streaming()) continue;
      todo.push_back(m->input_type());
      todo.push_back(m->output_type());
      const json body = {{"schema", {{"$ref", Ref(m->output_type())}}}};
      json ok = {{"description",
                  m->server_streaming()
                      ? "one JSON object per line (NDJSON), then "
                        "{\"error\": Error} if the stream fails midway"
                      : "the response"}};
      ok["content"][m->server_streaming() ? "application/x-ndjson"
                                          : "application/json"] = body;
      paths["/v1/" + name]["post"] = {
          {"operationId", name},
          {"summary", std::string(kService) + "/" + name},
          {"parameters",
           {{{"name", "grpc-timeout"},
             {"in", "header"},
             {"required", false},
             {"description",
              "deadline, gRPC's format (1..8 digits and H, M, S, m, u or n)"},
             {"schema", {{"type", "string"}}}}}},
          {"requestBody",
           {{"required", false},
            {"description", "proto3 JSON; an empty body is the empty message"},
            {"content",
             {{"application/json",
               {{"schema", {{"$ref", Ref(m->input_type())}}}}}}}}},
          {"responses",
           {{"200", ok},
            {"default",
             {{"description",
               "an error: the gRPC code mapped to the HTTP status"},
              {"content",
               {{"application/json",
                 {{"schema",
                   {{"$ref", "#/components/schemas/Error"}}}}}}}}}}}};
    }
  }
  // Every message reachable from a request or response, once.
  json schemas = json::object();
  std::set<std::string> done;
  while (!todo.empty()) {
    const Descriptor* d = todo.back();
    todo.pop_back();
    if (!done.insert(d->full_name()).second) continue;
    schemas[d->full_name()] = MessageSchema(d, &todo);
  }
  schemas["Error"] = ErrorSchema();
  const json doc = {
      {"openapi", "3.0.3"},
      {"info",
       {{"title", "Ridgeline HTTP/JSON API"},
        {"version", "v1"},
        {"description",
         "Every RPC of ridgeline.v1.RidgelineService the HTTP frontend "
         "serves, generated from the proto descriptors. Field names are "
         "proto3 JSON's lowerCamelCase (the proto names are accepted too)."},
        {"license",
         {{"name", "Apache-2.0"},
          {"url", "https://www.apache.org/licenses/LICENSE-2.0"}}}}},
      {"paths", paths},
      {"components",
       {{"schemas", schemas},
        {"securitySchemes",
         {{"bearerAuth", {{"type", "http"}, {"scheme", "bearer"}}}}}}},
      // The bearer token is needed only when the server is given one.
      {"security", json::array({json::object(),
                                {{"bearerAuth", json::array()}}})}};
  return doc.dump(1);
}

}  // namespace ridgeline::service
