"""The HTTP/JSON API of a real ridgeline-server on 127.0.0.1 port 0, called
with Python's urllib only (no gRPC module is imported): routes, proto3 JSON
with defaults printed, gRPC code -> HTTP status mapping, NDJSON streaming,
deadlines, body cap, probes, metrics and the static UI. Analyze over HTTP is
compared with the CLI's in-process --format json for the same request."""

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

ARGS = None
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "clients", "python"))
from ridgeline_server import ServerProcess  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--server-bin", required=True)
    p.add_argument("--cli-bin", required=True)
    p.add_argument("--plugin-dir", required=True)
    p.add_argument("--profile-dir", required=True)
    args, rest = p.parse_known_args()
    return args, rest


def start(extra=(), wait_serving=True):
    return ServerProcess(ARGS.server_bin, ARGS.plugin_dir, ARGS.profile_dir,
                         ["--http-listen=127.0.0.1:0"] + list(extra),
                         wait_serving=wait_serving)


def call(port, path, body=None, headers=None, method=None, raw=None):
    """Returns (status, headers, body bytes); HTTP errors are not raised."""
    data = raw if raw is not None else (
        None if body is None else json.dumps(body).encode())
    # urllib would say application/x-www-form-urlencoded, which cpp-httplib
    # caps at 8 KB.
    headers = dict({"Content-Type": "application/json"}, **(headers or {}))
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                                 data=data, headers=headers,
                                 method=method or ("POST" if data is not None
                                                   else "GET"))
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def wait_ready(port, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if call(port, "/readyz")[0] == 200:
            return
        time.sleep(0.05)
    raise RuntimeError("server never became ready")


ANALYZE = {
    "model": {"catalogId": "llama-3-8b"},
    "hardware": {"platformId": "nvidia-h100-sxm-80gb"},
    "workload": {"batch": 8, "promptTokens": 1024, "generatedTokens": 128},
}


class HttpApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = start(["--max-sweep-points=50000",
                            "--max-message-bytes=65536"])
        cls.port = cls.server.http_port
        wait_ready(cls.port)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def post(self, method, body, **kw):
        return call(self.port, "/v1/" + method, body, **kw)

    def assertError(self, resp, status, code, field=None, contains=()):
        st, headers, body = resp
        self.assertEqual(st, status, body)
        self.assertEqual(headers["Content-Type"], "application/json")
        err = json.loads(body)
        self.assertEqual(err["code"], code, err)
        if field is not None:
            self.assertEqual(err["field"], field, err)
        for c in contains:
            self.assertIn(c, err["message"])
        return err

    def test_healthz(self):
        st, _, body = call(self.port, "/healthz")
        self.assertEqual((st, body), (200, b"ok\n"))
        self.assertEqual(call(self.port, "/readyz")[0], 200)

    def test_analyze_matches_cli_in_process(self):
        st, headers, body = self.post("Analyze", ANALYZE)
        self.assertEqual(st, 200, body)
        self.assertEqual(headers["Content-Type"], "application/json")
        http = json.loads(body)
        cli = subprocess.run(
            [ARGS.cli_bin, "analyze", "--model", "llama-3-8b", "--hardware",
             "nvidia-h100-sxm-80gb", "--batch", "8", "--prompt", "1024",
             "--gen", "128", "--format", "json",
             "--plugin-dir", ARGS.plugin_dir, "--profile-dir", ARGS.profile_dir],
            check=True, capture_output=True, text=True).stdout
        self.assertEqual(http, json.loads(cli))
        # Fields at their default are printed: the weights live in tier 0
        # (HBM is tier 0 of the H100 plugin: it lists no SRAM tier) and a
        # TierTraffic "tier": 0 must be present, not omitted.
        op = http["result"]["decodeLastStep"]["ops"][0]
        self.assertIn("tier", op["traffic"][0])
        self.assertIn("executedInTier", op)
        self.assertIn("fits", http["result"]["memory"])
        self.assertIn("upperBound", http)

    def test_grpc_path_is_the_same_route(self):
        a = self.post("ListModels", {})
        b = call(self.port, "/ridgeline.v1.RidgelineService/ListModels", {})
        self.assertEqual(a[0], 200)
        self.assertEqual(a[2], b[2])
        ids = [m["id"] for m in json.loads(a[2])["models"]]
        self.assertIn("llama-3-8b", ids)

    def test_empty_body_is_the_empty_message(self):
        st, _, body = call(self.port, "/v1/ListHardware", raw=b"")
        self.assertEqual(st, 200, body)
        self.assertIn("nvidia-h100-sxm-80gb",
                      [h["id"] for h in json.loads(body)["hardware"]])

    def test_invalid_argument_is_400_naming_the_field(self):
        req = dict(ANALYZE, workload={"batch": 0})
        self.assertError(self.post("Analyze", req), 400, "INVALID_ARGUMENT",
                         field="workload.batch",
                         contains=("[1, 65536]", "got 0"))

    def test_not_found_is_404(self):
        req = dict(ANALYZE, hardware={"platformId": "nvidia-h100-sxm"})
        err = self.assertError(self.post("Analyze", req), 404, "NOT_FOUND",
                               field="hardware.platform_id")
        self.assertIn("nvidia-h100-sxm-80gb", err["message"])  # closest ids

    def test_resource_exhausted_is_429(self):
        # 4096 batch sizes x 20 prompt lengths = 81,920 points > 50,000.
        req = {"models": [{"catalogId": "llama-3-8b"}],
               "hardware": [{"platformId": "nvidia-h100-sxm-80gb"}],
               "batchSizes": list(range(1, 4097)),
               "promptTokens": list(range(100, 2100, 100))}
        self.assertError(self.post("Sweep", req), 429, "RESOURCE_EXHAUSTED")

    def test_bad_json_and_unknown_field_are_400(self):
        self.assertError(call(self.port, "/v1/Analyze", raw=b"{not json"),
                         400, "INVALID_ARGUMENT",
                         contains=("ridgeline.v1.AnalyzeRequest",))
        self.assertError(self.post("Analyze", dict(ANALYZE, batchh=3)), 400,
                         "INVALID_ARGUMENT", contains=("batchh",))

    def test_unknown_method_is_501(self):
        self.assertError(self.post("Analyse", {}), 501, "UNIMPLEMENTED",
                         contains=("Analyse",))
        # A client-streaming RPC has no HTTP mapping.
        self.assertError(self.post("StepTimeStream", {}), 501,
                         "UNIMPLEMENTED", contains=("use gRPC",))

    def test_deadline_is_504(self):
        self.assertError(self.post("Analyze", ANALYZE,
                                   headers={"grpc-timeout": "1n"}),
                         504, "DEADLINE_EXCEEDED")
        self.assertError(self.post("Analyze", ANALYZE,
                                   headers={"grpc-timeout": "soon"}),
                         400, "INVALID_ARGUMENT", field="grpc-timeout")
        st, _, _ = self.post("Analyze", ANALYZE,
                             headers={"grpc-timeout": "30S"})
        self.assertEqual(st, 200)

    def test_body_cap_is_413(self):
        # --max-message-bytes=65536: a 70,000-byte HF config is refused before
        # parsing.
        req = {"model": {"hfConfigJson": "x" * 70000},
               "hardware": {"platformId": "nvidia-h100-sxm-80gb"}}
        self.assertError(self.post("Analyze", req), 413, "RESOURCE_EXHAUSTED")

    def test_sweep_streams_ndjson_in_order(self):
        req = {"models": [{"catalogId": "llama-3-8b"}],
               "hardware": [{"platformId": "nvidia-h100-sxm-80gb"},
                            {"platformId": "amd-mi300x"}],
               "batchSizes": [1, 8, 64], "promptTokens": [512],
               "generatedTokens": [64]}
        r = urllib.request.Request(
            "http://127.0.0.1:%d/v1/Sweep" % self.port,
            data=json.dumps(req).encode(), method="POST",
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(r, timeout=60) as resp:
            self.assertEqual(resp.headers["Content-Type"],
                             "application/x-ndjson")
            self.assertEqual(resp.headers["Transfer-Encoding"], "chunked")
            lines = [json.loads(l) for l in resp if l.strip()]
        # Stable order: i = h * 3 + b (one model, one format, one prompt,
        # one gen length): hardware outer, batch inner.
        # 64-bit integers are JSON strings in the proto3 mapping.
        self.assertEqual([p["index"] for p in lines],
                         [str(i) for i in range(6)])
        self.assertEqual([p["summary"]["hardwareId"] for p in lines],
                         ["nvidia-h100-sxm-80gb"] * 3 + ["amd-mi300x"] * 3)
        self.assertEqual([int(p["summary"]["batch"]) for p in lines],
                         [1, 8, 64] * 2)
        for p in lines:
            self.assertEqual(p["totalPoints"], "6")  # uint64: a JSON string
            self.assertIn("fits", p["summary"])

    def test_sweep_deadline_ends_the_stream_with_an_error_line(self):
        # 1 x 1 x 4096 batches x 10 prompts = 40,960 points (under the
        # 50,000 cap): seconds of engine time, far beyond a 300 ms deadline.
        req = {"models": [{"catalogId": "llama-3-8b"}],
               "hardware": [{"platformId": "nvidia-h100-sxm-80gb"}],
               "batchSizes": list(range(1, 4097)),
               "promptTokens": list(range(100, 1100, 100))}
        st, headers, body = self.post("Sweep", req,
                                      headers={"grpc-timeout": "300m"})
        self.assertEqual(st, 200)
        lines = [json.loads(l) for l in body.splitlines() if l.strip()]
        self.assertGreater(len(lines), 1)
        self.assertLess(len(lines), 40960)
        self.assertEqual(lines[-1]["error"]["code"], "DEADLINE_EXCEEDED")
        self.assertEqual([p["index"] for p in lines[:-1]],
                         [str(i) for i in range(len(lines) - 1)])

    def sweep_points_sent(self):
        _, _, body = call(self.server.metrics_port, "/metrics")
        for line in body.decode().splitlines():
            if line.startswith("ridgeline_sweep_points_total"):
                return float(line.rsplit(" ", 1)[1])
        return None

    def metric(self, name):
        _, _, body = call(self.server.metrics_port, "/metrics")
        for line in body.decode().splitlines():
            if line.startswith(name + " "):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    def test_stream_computes_each_point_once(self):
        # 3 points stream; each is one engine analysis. The frontend learns
        # the HTTP status from the call itself (it once ran the stream a
        # first time up to its first point: 4 analyses for 3 points).
        name = 'ridgeline_analyses_total{kind="sweep"}'
        before = self.metric(name)
        st, _, body = self.post("Sweep", {
            "models": [{"catalogId": "llama-3-8b"}],
            "hardware": [{"platformId": "nvidia-h100-sxm-80gb"}],
            "batchSizes": [1, 2, 4]})
        self.assertEqual(st, 200, body)
        self.assertEqual(len(body.decode().splitlines()), 3)
        self.assertEqual(self.metric(name) - before, 3)
        # A request that fails validation still gets its status, not a 200.
        st, _, _ = self.post("Sweep", {
            "models": [{"catalogId": "llama-3-8b"}],
            "hardware": [{"platformId": "nvidia-h100-sxm-80gb"}],
            "batchSizes": [0]})
        self.assertEqual(st, 400)
        self.assertEqual(self.metric(name) - before, 3)

    def test_client_gone_stops_the_sweep(self):
        # 40,960 points (see the deadline test); read two lines and hang up.
        req = {"models": [{"catalogId": "llama-3-8b"}],
               "hardware": [{"platformId": "nvidia-h100-sxm-80gb"}],
               "batchSizes": list(range(1, 4097)),
               "promptTokens": list(range(100, 1100, 100))}
        before = self.sweep_points_sent()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.request("POST", "/v1/Sweep", json.dumps(req),
                     {"Content-Type": "application/json"})
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        resp.readline()
        resp.readline()
        conn.sock.shutdown(socket.SHUT_RDWR)
        conn.close()
        # The server notices within a few points (a failed write); the count
        # then stops growing, far short of the 40,960 points.
        deadline = time.monotonic() + 20
        last = None
        while time.monotonic() < deadline:
            time.sleep(0.3)
            now = self.sweep_points_sent()
            if now == last:
                break
            last = now
        self.assertEqual(now, last)
        self.assertLess(now - before, 40960)

    def test_metrics_count_http_requests(self):
        self.post("Analyze", ANALYZE)
        self.post("Analyze", dict(ANALYZE, workload={"batch": 0}))
        _, _, body = call(self.server.metrics_port, "/metrics")
        text = body.decode()

        def value(prefix):
            for line in text.splitlines():
                if line.startswith(prefix):
                    return float(line.rsplit(" ", 1)[1])
            return None
        self.assertGreaterEqual(value(
            'http_server_requests_total{code="200",method="Analyze"}'), 1)
        self.assertGreaterEqual(value(
            'http_server_requests_total{code="400",method="Analyze"}'), 1)
        self.assertGreaterEqual(value(
            'http_server_request_duration_seconds_count{method="Analyze"}'), 2)
        # The domain metrics are shared with gRPC (same Backend observer).
        self.assertGreaterEqual(value(
            'ridgeline_analyses_total{kind="analyze"}'), 2)

    def test_static_ui(self):
        st, headers, body = call(self.port, "/")
        self.assertEqual(st, 200)
        self.assertIn("text/html", headers["Content-Type"])
        self.assertIn(b"Ridgeline", body)
        st, headers, _ = call(self.port, "/vendor/d3.min.js")
        self.assertEqual(st, 200)
        self.assertIn("javascript", headers["Content-Type"])
        st, _, body = call(self.port, "/no-such-file.js")
        self.assertEqual(st, 404)


class AuthAndTlsTest(unittest.TestCase):
    def test_bearer_token_guards_the_api_not_the_probes(self):
        with tempfile.TemporaryDirectory() as d:
            token = "0123456789abcdef-http-test"
            path = os.path.join(d, "token")
            with open(path, "w") as f:
                f.write(token + "\n")
            server = start(["--auth-token-file=" + path])
            try:
                port = server.http_port
                wait_ready(port)
                self.assertEqual(call(port, "/healthz")[0], 200)
                # The catalog is open, as on gRPC (one table, issue 26).
                self.assertEqual(call(port, "/v1/ListModels", {})[0], 200)
                st, _, body = call(port, "/v1/Analyze", ANALYZE)
                self.assertEqual(st, 401, body)
                self.assertEqual(json.loads(body)["code"], "UNAUTHENTICATED")
                st, _, _ = call(port, "/v1/Analyze", ANALYZE,
                                headers={"Authorization": "Bearer wrong-token-123456"})
                self.assertEqual(st, 401)
                st, _, _ = call(port, "/v1/Analyze", ANALYZE,
                                headers={"Authorization": "Bearer " + token})
                self.assertEqual(st, 200)
            finally:
                server.stop()


class ReadinessTest(unittest.TestCase):
    def test_unavailable_until_plugins_load(self):
        server = start(["--plugin-load-delay-ms=3000"], wait_serving=False)
        try:
            port = server.http_port
            self.assertEqual(call(port, "/healthz")[0], 200)
            self.assertEqual(call(port, "/readyz")[0], 503)
            st, _, body = call(port, "/v1/Analyze", ANALYZE)
            self.assertEqual(st, 503, body)
            self.assertEqual(json.loads(body)["code"], "UNAVAILABLE")
            wait_ready(port)
            self.assertEqual(call(port, "/v1/Analyze", ANALYZE)[0], 200)
        finally:
            self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    ARGS, rest = parse_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
