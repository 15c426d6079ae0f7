"""Hostile clients against the HTTP port of a real ridgeline-server on
127.0.0.1 port 0 (issue 26 items 4, 5, 6, 9; issue 20 item 8): body bombs
(chunked, gzip, nested arrays), header floods, slow and idle connections,
cross-origin POSTs, symlinks out of --web-dir, GET on a POST route, and a
second bind of the same port. Raw sockets where urllib would hide the bytes.
Every test takes a few seconds and closes what it opens."""

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
import zlib

ARGS = None
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "clients", "python"))
from ridgeline_server import ServerProcess  # noqa: E402

ANALYZE = {
    "model": {"catalogId": "llama-3-8b"},
    "hardware": {"platformId": "nvidia-h100-sxm-80gb"},
    "workload": {"batch": 8, "promptTokens": 1024, "generatedTokens": 128},
}
# Every RPC the HTTP frontend routes (HttpMethods(); a unit test checks that
# table against the service descriptor).
ROUTES = ["Analyze", "Sweep", "ListHardware", "GetHardware", "ListModels",
          "GetModel", "AnalyzeKernel", "StepTime", "Explore", "Plan",
          "Simulate", "ExploreSensitivity"]
MIB = 1 << 20


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--server-bin", required=True)
    p.add_argument("--plugin-dir", required=True)
    p.add_argument("--profile-dir", required=True)
    return p.parse_known_args()


def start(extra=()):
    server = ServerProcess(ARGS.server_bin, ARGS.plugin_dir, ARGS.profile_dir,
                           ["--http-listen=127.0.0.1:0"] + list(extra))
    deadline = time.monotonic() + 30
    while call(server.http_port, "/readyz")[0] != 200:
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError("server never became ready")
        time.sleep(0.05)
    return server


def call(port, path, body=None, headers=None, method=None, raw=None,
         timeout=30):
    """(status, headers, body bytes); HTTP errors are not raised."""
    data = raw if raw is not None else (
        None if body is None else json.dumps(body).encode())
    headers = dict({"Content-Type": "application/json"}, **(headers or {}))
    req = urllib.request.Request(
        "http://127.0.0.1:%d%s" % (port, path), data=data, headers=headers,
        method=method or ("POST" if data is not None else "GET"))
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def raw_exchange(port, data, timeout=10):
    """Sends `data` as is, returns (status, headers, body) of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        resp = http.client.HTTPResponse(s)
        resp.begin()
        return resp.status, resp.headers, resp.read()


def vm_hwm_bytes(pid):
    """The process's peak resident set (VmHWM)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")


def head(path, extra=b"", method=b"POST"):
    return (method + b" " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n" + extra)


class BodyAndHeaderLimitsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # A 1 MiB body cap (--max-message-bytes), on the wire and decoded.
        cls.server = start(["--max-message-bytes=%d" % MIB])
        cls.port = cls.server.http_port
        cls.pid = cls.server.proc.pid

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def assertJsonError(self, resp, status, code, field=None):
        st, _, body = resp
        self.assertEqual(st, status, body[:300])
        err = json.loads(body)
        self.assertEqual(err["code"], code, err)
        if field is not None:
            self.assertEqual(err["field"], field, err)
        return err

    def test_chunked_body_is_refused_413_as_it_arrives(self):
        # Up to 64 MiB of 64 KiB chunks: the server answers 413 once 1 MiB
        # has arrived and stops reading soon after (it drains at most
        # 16 MiB so the client can read the answer, then closes).
        sent = [0]
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        try:
            s.sendall(head(b"/v1/Analyze", b"Transfer-Encoding: chunked\r\n\r\n"))
            chunk = b"10000\r\n" + b"x" * 65536 + b"\r\n"

            def send():
                try:
                    while sent[0] < 64 * MIB:
                        s.sendall(chunk)
                        sent[0] += 65536
                except OSError:
                    pass  # the server closed: it stopped reading
            t = threading.Thread(target=send)
            t.start()
            resp = http.client.HTTPResponse(s)
            resp.begin()
            status, body = resp.status, resp.read()
            t.join(30)
        finally:
            s.close()
        self.assertEqual(status, 413, body[:200])
        self.assertEqual(json.loads(body)["code"], "RESOURCE_EXHAUSTED")
        self.assertIn("--max-message-bytes", json.loads(body)["message"])
        self.assertLess(sent[0], 64 * MIB)

    def test_gzip_body_is_capped_after_inflating(self):
        # 256 MiB of zeros deflate to about 256 KB, under the 1 MiB wire cap;
        # inflating stops at the cap: 413, and the server's peak RSS grows by
        # far less than the 256 MiB the body would inflate to.
        z = zlib.compressobj(wbits=31)  # gzip framing
        zero = bytes(MIB)
        bomb = b"".join(z.compress(zero) for _ in range(256)) + z.flush()
        self.assertLess(len(bomb), MIB)
        before = vm_hwm_bytes(self.pid)
        self.assertJsonError(
            call(self.port, "/v1/Analyze", raw=bomb,
                 headers={"Content-Encoding": "gzip"}),
            413, "RESOURCE_EXHAUSTED")
        self.assertLess(vm_hwm_bytes(self.pid) - before, 64 * MIB)
        # A real gzip body is decoded and served.
        z = zlib.compressobj(wbits=31)
        good = z.compress(json.dumps(ANALYZE).encode()) + z.flush()
        st, _, body = call(self.port, "/v1/Analyze", raw=good,
                           headers={"Content-Encoding": "gzip"})
        self.assertEqual(st, 200, body[:300])
        self.assertGreater(json.loads(body)["result"]["ttftSeconds"], 0)
        # An encoding the server does not undo: 415 naming the header.
        self.assertJsonError(
            call(self.port, "/v1/Analyze", raw=good,
                 headers={"Content-Encoding": "br"}),
            415, "UNIMPLEMENTED", field="Content-Encoding")

    def test_nested_arrays_are_400_naming_the_path(self):
        sweep = ('{"models":[{"catalogId":"llama-3-8b"}],'
                 '"hardware":[{"platformId":"nvidia-h100-sxm-80gb"}],'
                 '"batchSizes":')
        # 200,000 one-element lists in a repeated integer field (~1 MB):
        # refused at the first, before the JSON parser builds anything.
        wide = sweep + "[" + "[1]," * 199999 + "[1]]}"
        self.assertLess(len(wide), MIB)
        before = vm_hwm_bytes(self.pid)
        err = self.assertJsonError(
            call(self.port, "/v1/Sweep", raw=wide.encode()), 400,
            "INVALID_ARGUMENT", field="batchSizes[0]")
        self.assertIn("array inside an array", err["message"])
        # 500,000 levels of lists: the same path.
        deep = sweep + "[" * 500000 + "]" * 500000 + "}"
        self.assertJsonError(call(self.port, "/v1/Sweep", raw=deep.encode()),
                             400, "INVALID_ARGUMENT", field="batchSizes[0]")
        self.assertLess(vm_hwm_bytes(self.pid) - before, 64 * MIB)
        # Objects 40 deep under "model": refused at the 33rd level (the cap
        # is 32 levels; the request object itself is the first).
        nested = '{"model":' + '{"a":' * 39 + "1" + "}" * 39 + "}"
        err = self.assertJsonError(
            call(self.port, "/v1/Analyze", raw=nested.encode()), 400,
            "INVALID_ARGUMENT", field="model" + ".a" * 31)
        self.assertIn("deeper than 32", err["message"])

    def test_header_count_and_size_are_431(self):
        # 200 small fields (about 5 KB): over the 100-field cap.
        many = b"".join(b"X-Pad-%d: 0123456789\r\n" % i for i in range(200))
        st, _, body = raw_exchange(self.port,
                                   head(b"/healthz", many + b"\r\n", b"GET"))
        self.assertEqual(st, 431, body)
        self.assertIn("header fields", json.loads(body)["message"])
        # 100 fields of 1 KB: over the 64 KiB cap on the head's bytes.
        big = b"".join(b"X-Big-%d: %s\r\n" % (i, b"y" * 1024)
                       for i in range(100))
        st, _, body = raw_exchange(self.port,
                                   head(b"/healthz", big + b"\r\n", b"GET"))
        self.assertEqual(st, 431, body)
        self.assertEqual(call(self.port, "/healthz")[0], 200)


class SlowClientsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = start(["--http-read-timeout-seconds=3"])
        cls.port = cls.server.http_port

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_400_slow_or_idle_connections_leave_probes_fast(self):
        socks = []
        stop = threading.Event()
        try:
            for i in range(400):
                s = socket.create_connection(("127.0.0.1", self.port),
                                             timeout=5)
                socks.append(s)
                if i % 4 == 1:    # a head that never ends
                    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                elif i % 4 == 2:  # a body that never ends
                    s.sendall(head(b"/v1/Analyze",
                                   b"Content-Length: 100000\r\n\r\n{"))
                # else idle: connected, nothing sent

            def trickle():  # one byte a second on the slow ones
                while not stop.wait(1.0):
                    for i, s in enumerate(socks):
                        if i % 4 in (1, 2):
                            try:
                                s.send(b"a")
                            except OSError:
                                pass
            t = threading.Thread(target=trickle)
            t.start()
            for path, body in (("/", None), ("/v1/Analyze", ANALYZE),
                               ("/healthz", None)):
                t0 = time.monotonic()
                st, _, _ = call(self.port, path, body, timeout=5)
                took = time.monotonic() - t0
                self.assertEqual(st, 200, path)
                self.assertLess(took, 2.0, path)
        finally:
            stop.set()
            for s in socks:
                s.close()
        t.join(5)

    def test_idle_and_slow_connections_are_cut_at_the_read_deadline(self):
        # --http-read-timeout-seconds=3: each connection must deliver its
        # request within 3 s; a byte every 0.5 s does not extend that.
        results = {}

        def idle():
            with socket.create_connection(("127.0.0.1", self.port),
                                          timeout=10) as s:
                t0 = time.monotonic()
                s.recv(1)  # b"" once the server closes
                results["idle"] = time.monotonic() - t0

        def slow():
            with socket.create_connection(("127.0.0.1", self.port),
                                          timeout=10) as s:
                t0 = time.monotonic()
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
                try:
                    for _ in range(40):
                        s.sendall(b"X-A: b\r\n")
                        time.sleep(0.5)
                except OSError:
                    pass  # closed by the server
                results["slow"] = time.monotonic() - t0
        threads = [threading.Thread(target=f) for f in (idle, slow)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(15)
        self.assertGreater(results["idle"], 2.5)
        self.assertLess(results["idle"], 6)
        self.assertGreater(results["slow"], 2.5)
        self.assertLess(results["slow"], 8)


class ConnectionCapTest(unittest.TestCase):
    def test_connections_over_the_cap_are_closed_at_accept(self):
        server = start(["--http-max-connections=8"])
        socks = []
        try:
            port = server.http_port
            socks = [socket.create_connection(("127.0.0.1", port), timeout=5)
                     for _ in range(8)]
            # Once the server has accepted the eight (on a loaded machine
            # that may take a while), a ninth is closed at accept: served
            # before then, refused within 5 s, or the cap is not enforced.
            def ninth_refused():
                with socket.create_connection(("127.0.0.1", port),
                                              timeout=5) as extra:
                    extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                    try:
                        return extra.recv(100) == b""
                    except ConnectionResetError:
                        return True  # closed: also refused
            deadline = time.monotonic() + 5
            refused = ninth_refused()
            while not refused and time.monotonic() < deadline:
                time.sleep(0.1)
                refused = ninth_refused()
            self.assertTrue(refused, "a ninth connection over the cap of "
                            "8 was still served after 5 s")
            for s in socks:
                s.close()
            socks = []
            # Until the server has seen the eight close, a new connection is
            # still over the cap and closed (a reset): retry for 5 s.
            def healthz_ok():
                try:
                    return call(port, "/healthz")[0] == 200
                except ConnectionError:
                    return False
            deadline = time.monotonic() + 5
            while not healthz_ok():
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.1)
        finally:
            for s in socks:
                s.close()
            server.stop()

    def test_a_second_server_cannot_bind_the_same_http_port(self):
        server = start()
        try:
            r = subprocess.run(
                [ARGS.server_bin, "--listen=127.0.0.1:0",
                 "--metrics-listen=off",
                 "--http-listen=127.0.0.1:%d" % server.http_port,
                 "--plugin-dir=" + ARGS.plugin_dir,
                 "--profile-dir=" + ARGS.profile_dir],
                capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("cannot listen for HTTP", r.stderr)
        finally:
            server.stop()


class CrossOriginTest(unittest.TestCase):
    ALLOWED = "http://ui.example:8080"

    @classmethod
    def setUpClass(cls):
        cls.server = start(["--http-allowed-origins=" + cls.ALLOWED +
                            ", https://other.example"])
        cls.port = cls.server.http_port

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_text_plain_post_is_415(self):
        # What a page's fetch() or a form may send without a preflight.
        for ctype in ("text/plain;charset=UTF-8",
                      "application/x-www-form-urlencoded",
                      "multipart/form-data; boundary=x"):
            with self.subTest(ctype=ctype):
                st, _, body = call(self.port, "/v1/Analyze", ANALYZE,
                                   headers={"Content-Type": ctype})
                self.assertEqual(st, 415, body)
                err = json.loads(body)
                self.assertEqual(err["field"], "Content-Type")
        st, _, _ = call(self.port, "/v1/Analyze", ANALYZE, headers={
            "Content-Type": "Application/JSON; charset=utf-8"})
        self.assertEqual(st, 200)

    def test_foreign_origin_is_403(self):
        st, headers, body = call(self.port, "/v1/Analyze", ANALYZE,
                                 headers={"Origin": "http://evil.example"})
        self.assertEqual(st, 403, body)
        self.assertEqual(json.loads(body)["code"], "PERMISSION_DENIED")
        self.assertIsNone(headers["Access-Control-Allow-Origin"])
        for origin in ("null", "http://127.0.0.1:%d.evil.example" % self.port):
            self.assertEqual(call(self.port, "/v1/ListModels", {},
                                  headers={"Origin": origin})[0], 403)
        # Its preflight is refused too.
        st, _, _ = call(self.port, "/v1/Analyze", method="OPTIONS", headers={
            "Origin": "http://evil.example",
            "Access-Control-Request-Method": "POST"})
        self.assertEqual(st, 403)

    def test_own_allowed_and_absent_origins_pass(self):
        own = "http://127.0.0.1:%d" % self.port
        self.assertEqual(call(self.port, "/v1/Analyze", ANALYZE,
                              headers={"Origin": own})[0], 200)
        self.assertEqual(call(self.port, "/v1/Analyze", ANALYZE)[0], 200)
        st, headers, _ = call(self.port, "/v1/Analyze", ANALYZE,
                              headers={"Origin": self.ALLOWED})
        self.assertEqual(st, 200)
        self.assertEqual(headers["Access-Control-Allow-Origin"], self.ALLOWED)
        st, headers, _ = call(self.port, "/v1/Analyze", method="OPTIONS",
                              headers={"Origin": "https://other.example",
                                       "Access-Control-Request-Method": "POST"})
        self.assertEqual(st, 204)
        self.assertEqual(headers["Access-Control-Allow-Origin"],
                         "https://other.example")
        self.assertIn("POST", headers["Access-Control-Allow-Methods"])
        self.assertIn("Content-Type", headers["Access-Control-Allow-Headers"])


class MethodNotAllowedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = start()
        cls.port = cls.server.http_port

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_get_on_every_rpc_route_is_405_allow_post(self):
        for prefix in ("/v1/", "/ridgeline.v1.RidgelineService/"):
            for rpc in ROUTES:
                with self.subTest(path=prefix + rpc):
                    st, headers, body = call(self.port, prefix + rpc)
                    self.assertEqual(st, 405, body)
                    self.assertEqual(headers["Allow"], "POST")
        st, headers, _ = call(self.port, "/v1/Analyze", ANALYZE, method="PUT")
        self.assertEqual((st, headers["Allow"]), (405, "POST"))
        # Not a route: still 404; probes answer GET only.
        self.assertEqual(call(self.port, "/v1/NoSuchMethod")[0], 404)
        st, headers, _ = call(self.port, "/healthz", {})
        self.assertEqual((st, headers["Allow"]), (405, "GET, HEAD"))


class WebDirSymlinkTest(unittest.TestCase):
    def test_only_regular_files_under_the_folders_real_path(self):
        with tempfile.TemporaryDirectory() as d:
            web = os.path.join(d, "web")
            os.mkdir(web)
            with open(os.path.join(web, "index.html"), "w") as f:
                f.write("<title>Ridgeline test</title>")
            secret = os.path.join(d, "token")
            with open(secret, "w") as f:
                f.write("secret-token-0123456789\n")
            os.symlink("/etc/passwd", os.path.join(web, "passwd"))
            os.symlink(secret, os.path.join(web, "token.txt"))
            os.symlink(d, os.path.join(web, "up"))
            os.symlink("index.html", os.path.join(web, "alias.html"))
            os.mkfifo(os.path.join(web, "fifo"))
            # --web-dir itself may be a link: its real path is the root.
            link = os.path.join(d, "web-link")
            os.symlink(web, link)
            server = start(["--web-dir=" + link])
            try:
                port = server.http_port
                st, _, body = call(port, "/")
                self.assertEqual((st, body), (200, b"<title>Ridgeline test</title>"))
                self.assertEqual(call(port, "/alias.html")[0], 200)
                for path in ("/passwd", "/token.txt", "/up/token",
                             "/up/web/index.html/../../token", "/%2e%2e/token",
                             "/fifo", "/..%2ftoken"):
                    with self.subTest(path=path):
                        st, _, body = call(port, path)
                        self.assertEqual(st, 404, body)
                        self.assertNotIn(b"secret-token", body)
                        self.assertNotIn(b"root:", body)
            finally:
                server.stop()


if __name__ == "__main__":
    ARGS, rest = parse_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
