"""GET /openapi.json of a real ridgeline-server (issue 27 item 5): an
OpenAPI 3 document with a POST /v1/<Method> for every RPC of the proto the
HTTP frontend serves (read from the .proto file itself), every $ref
resolving, the document structurally valid OpenAPI 3.0, and the real
server's requests and responses valid against its schemas (so the schemas
are the JSON the server parses and prints). The web UI links it."""

import argparse
import json
import os
import re
import sys
import unittest
import urllib.error
import urllib.request

ARGS = None
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "clients", "python"))
from ridgeline_server import ServerProcess  # noqa: E402


def call(port, path, body=None, method=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        "http://127.0.0.1:%d%s" % (port, path), data=data,
        headers={"Content-Type": "application/json"},
        method=method or ("POST" if data is not None else "GET"))
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def proto_rpcs(proto_path):
    """(name, server_streaming) of every RPC whose requests are not
    streamed (those have no HTTP mapping), from the .proto text."""
    text = open(proto_path).read()
    rpcs = []
    for m in re.finditer(r"rpc\s+(\w+)\s*\(\s*(stream\s+)?[\w.]+\s*\)\s*"
                         r"returns\s*\(\s*(stream\s+)?[\w.]+\s*\)", text):
        if not m.group(2):
            rpcs.append((m.group(1), bool(m.group(3))))
    return rpcs


# OpenAPI 3.0 structure, the parts this document may use.
SCHEMA_KEYS = {"type", "format", "properties", "items", "additionalProperties",
               "enum", "$ref", "description", "required", "minimum"}
TYPES = {"object", "array", "string", "number", "integer", "boolean"}
OPERATION_KEYS = {"operationId", "summary", "parameters", "requestBody",
                  "responses"}


def check_schema(schema, where, errors):
    if not isinstance(schema, dict):
        return errors.append(f"{where}: a schema must be an object")
    for k in schema:
        if k not in SCHEMA_KEYS:
            errors.append(f"{where}: unknown schema keyword {k}")
    if "$ref" in schema and len(schema) != 1:
        errors.append(f"{where}: $ref with siblings")
    if "type" in schema and schema["type"] not in TYPES:
        errors.append(f"{where}: type {schema['type']!r}")
    if schema.get("type") == "array" and "items" not in schema:
        errors.append(f"{where}: array without items")
    for name, sub in schema.get("properties", {}).items():
        check_schema(sub, f"{where}.properties.{name}", errors)
    if "items" in schema:
        check_schema(schema["items"], f"{where}.items", errors)
    ap = schema.get("additionalProperties")
    if isinstance(ap, dict):
        check_schema(ap, f"{where}.additionalProperties", errors)
    elif ap is not None and not isinstance(ap, bool):
        errors.append(f"{where}: additionalProperties must be bool or schema")
    if "enum" in schema and not (isinstance(schema["enum"], list)
                                 and schema["enum"]):
        errors.append(f"{where}: enum must be a non-empty list")


def check_document(doc):
    """A structural OpenAPI 3.0 validator: required fields, operation and
    response shapes, schema keywords, and every $ref resolving."""
    errors = []
    if not re.fullmatch(r"3\.0\.\d+", str(doc.get("openapi"))):
        errors.append(f"openapi: {doc.get('openapi')!r} is not 3.0.x")
    info = doc.get("info", {})
    for k in ("title", "version"):
        if not isinstance(info.get(k), str) or not info.get(k):
            errors.append(f"info.{k}: required string")
    schemas = doc.get("components", {}).get("schemas", {})
    for name, s in schemas.items():
        if not re.fullmatch(r"[A-Za-z0-9._-]+", name):
            errors.append(f"components.schemas: bad name {name!r}")
        check_schema(s, f"components.schemas.{name}", errors)
    op_ids = set()
    for path, item in doc.get("paths", {}).items():
        if not path.startswith("/"):
            errors.append(f"paths: {path!r} must start with /")
        for method, op in item.items():
            where = f"paths.{path}.{method}"
            if method not in {"get", "put", "post", "delete", "options",
                              "head", "patch", "trace"}:
                errors.append(f"{where}: not an HTTP method")
                continue
            for k in op:
                if k not in OPERATION_KEYS:
                    errors.append(f"{where}: unknown key {k}")
            if op.get("operationId") in op_ids:
                errors.append(f"{where}: operationId not unique")
            op_ids.add(op.get("operationId"))
            for p in op.get("parameters", []):
                if p.get("in") not in {"query", "header", "path", "cookie"} \
                        or "name" not in p or "schema" not in p:
                    errors.append(f"{where}: bad parameter {p}")
            responses = op.get("responses")
            if not responses:
                errors.append(f"{where}: responses required")
                continue
            for code, r in responses.items():
                if not re.fullmatch(r"default|[1-5](\d\d|XX)", code):
                    errors.append(f"{where}.responses: bad code {code}")
                if "description" not in r:
                    errors.append(f"{where}.responses.{code}: description")
                for media in r.get("content", {}).values():
                    check_schema(media.get("schema"),
                                 f"{where}.responses.{code}", errors)
            for media in op.get("requestBody", {}).get("content", {}).values():
                check_schema(media.get("schema"), f"{where}.requestBody",
                             errors)
    for ref in refs(doc):
        if not ref.startswith("#/components/schemas/") or \
                ref[len("#/components/schemas/"):] not in schemas:
            errors.append(f"$ref {ref} does not resolve")
    return errors


def refs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref":
                yield v
            else:
                yield from refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from refs(v)


def validate(value, schema, schemas, where="$"):
    """Errors of `value` against `schema` (the keywords above)."""
    if "$ref" in schema:
        return validate(value, schemas[schema["$ref"].split("/")[-1]],
                        schemas, where)
    t = schema.get("type")
    ok = {"object": isinstance(value, dict),
          "array": isinstance(value, list),
          "string": isinstance(value, str),
          "number": isinstance(value, (int, float)) and
          not isinstance(value, bool),
          "integer": isinstance(value, int) and not isinstance(value, bool),
          "boolean": isinstance(value, bool), None: True}[t]
    if not ok:
        return [f"{where}: {value!r:.60} is not {t}"]
    errors = []
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} not in the enum")
    if t == "array":
        for i, v in enumerate(value):
            errors += validate(v, schema["items"], schemas, f"{where}[{i}]")
    if t == "object":
        props = schema.get("properties", {})
        for k, v in value.items():
            if k in props:
                errors += validate(v, props[k], schemas, f"{where}.{k}")
            elif isinstance(schema.get("additionalProperties"), dict):
                errors += validate(v, schema["additionalProperties"], schemas,
                                   f"{where}.{k}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{where}.{k}: not a property of the schema")
        for k in schema.get("required", []):
            if k not in value:
                errors.append(f"{where}.{k}: required")
    return errors


ANALYZE = {
    "model": {"catalogId": "llama-3-8b"},
    "hardware": {"platformId": "nvidia-h100-sxm-80gb"},
    # 64-bit integers as proto3 JSON prints them (decimal strings).
    "workload": {"batch": "8", "promptTokens": "1024",
                 "generatedTokens": "128"},
}
PLAN = {
    "model": {"catalogId": "llama-3-8b"},
    "traffic": {"rate": 2, "promptTokens": {"fixed": "512"},
                "generatedTokens": {"fixed": "128"}},
    "slo": {"ttftP90Seconds": 2, "tpotP90Seconds": 0.1},
    "candidates": {"hardware": [{"platformId": "nvidia-h100-sxm-80gb"}],
                   "tensorParallel": ["1"], "formats": [{"weights": "fp8"}]},
    "requests": "200",
    "emit": "vllm",
}


class OpenApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ServerProcess(ARGS.server_bin, ARGS.plugin_dir,
                                   ARGS.profile_dir,
                                   ["--http-listen=127.0.0.1:0"])
        cls.port = cls.server.http_port
        status, headers, body = call(cls.port, "/openapi.json")
        assert status == 200, (status, body[:200])
        assert headers["Content-Type"].startswith("application/json")
        cls.doc = json.loads(body)
        cls.schemas = cls.doc["components"]["schemas"]

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_document_is_valid_openapi_3(self):
        self.assertEqual(check_document(self.doc), [])
        # The validator catches what it checks for.
        bad = json.loads(json.dumps(self.doc))
        bad["paths"]["/v1/Analyze"]["post"]["requestBody"]["content"][
            "application/json"]["schema"] = {"$ref": "#/components/schemas/X"}
        bad["components"]["schemas"]["ridgeline.v1.Model"]["type"] = "map"
        self.assertEqual(len(check_document(bad)), 2, check_document(bad))

    def test_every_served_rpc_of_the_proto_has_its_path(self):
        rpcs = proto_rpcs(ARGS.proto)
        self.assertGreaterEqual(len(rpcs), 10)
        self.assertEqual(sorted(self.doc["paths"]),
                         sorted("/v1/" + name for name, _ in rpcs))
        for name, streaming in rpcs:
            op = self.doc["paths"]["/v1/" + name]["post"]
            self.assertEqual(op["operationId"], name)
            req = op["requestBody"]["content"]["application/json"]["schema"]
            # Every request message is named <Method>Request in the proto.
            self.assertEqual(req["$ref"],
                             "#/components/schemas/ridgeline.v1.%sRequest"
                             % name)
            media = "application/x-ndjson" if streaming else "application/json"
            self.assertIn(media, op["responses"]["200"]["content"], name)
            self.assertIn("default", op["responses"])
            # The router serves the path: not 404 / 501 "unknown method".
            status, _, body = call(self.port, "/v1/" + name, {})
            self.assertNotIn(status, (404, 501), (name, body[:200]))

    def test_schemas_follow_the_proto3_json_mapping(self):
        req = self.schemas["ridgeline.v1.AnalyzeRequest"]["properties"]
        self.assertIn("model", req)
        workload = self.schemas["ridgeline.v1.Workload"]["properties"]
        # lowerCamelCase json_name; int64 as a string.
        self.assertIn("promptTokens", workload)
        self.assertEqual(workload["promptTokens"]["type"], "string")
        self.assertEqual(workload["promptTokens"]["format"], "int64")
        view = req["view"]
        self.assertEqual(view["type"], "string")
        self.assertIn("ANALYSIS_VIEW_BASIC", view["enum"])
        # map<string, double> is an object of numbers.
        pricing = self.schemas["ridgeline.v1.PlanPricing"]["properties"]
        self.assertEqual(
            pricing["usdPerDeviceHourByHardware"]["additionalProperties"],
            {"type": "number", "format": "double"})
        self.assertIn("oneof", self.schemas["ridgeline.v1.ModelSpec"]
                      ["description"])

    def test_real_requests_and_responses_match_the_schemas(self):
        for method, body in (("Analyze", ANALYZE), ("ListHardware", {}),
                             ("ListModels", {}), ("Plan", PLAN)):
            op = self.doc["paths"]["/v1/" + method]["post"]
            req_schema = op["requestBody"]["content"]["application/json"][
                "schema"]
            self.assertEqual(validate(body, req_schema, self.schemas), [],
                             method)
            status, _, out = call(self.port, "/v1/" + method, body)
            self.assertEqual(status, 200, (method, out[:300]))
            resp_schema = op["responses"]["200"]["content"][
                "application/json"]["schema"]
            self.assertEqual(validate(json.loads(out), resp_schema,
                                      self.schemas), [], method)
        # A field the schema does not have is refused by the server too.
        self.assertNotEqual(validate({"modle": {}}, {
            "$ref": "#/components/schemas/ridgeline.v1.AnalyzeRequest"},
            self.schemas), [])
        status, _, _ = call(self.port, "/v1/Analyze", {"modle": {}})
        self.assertEqual(status, 400)
        # An error body matches the Error schema.
        status, _, out = call(self.port, "/v1/Analyze",
                              dict(ANALYZE, workload={"batch": 0}))
        self.assertEqual(status, 400)
        self.assertEqual(validate(json.loads(out), {
            "$ref": "#/components/schemas/Error"}, self.schemas), [])

    def test_plan_emit_over_http(self):
        status, _, out = call(self.port, "/v1/Plan", PLAN)
        self.assertEqual(status, 200, out[:300])
        r = json.loads(out)
        self.assertEqual(r["emittedRow"], 1)
        self.assertIn("vllm serve meta-llama/Meta-Llama-3-8B", r["emitted"])
        status, _, out = call(self.port, "/v1/Plan", dict(PLAN, emit="helm"))
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(out)["field"], "emit")

    def test_get_only_and_linked_from_the_ui(self):
        status, headers, _ = call(self.port, "/openapi.json", {})
        self.assertEqual(status, 405)
        self.assertIn("GET", headers["Allow"])
        status, _, page = call(self.port, "/")
        self.assertEqual(status, 200)
        self.assertIn(b'href="/openapi.json"', page)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    for flag in ("--server-bin", "--plugin-dir", "--profile-dir", "--proto"):
        p.add_argument(flag, required=True)
    ARGS, rest = p.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
