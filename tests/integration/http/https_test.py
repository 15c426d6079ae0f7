"""HTTPS on the HTTP port of a real ridgeline-server (issue 14, Security):
the gRPC port's --tls-cert / --tls-key, mutual TLS with --tls-client-ca,
certificate rotation without restart (--tls-reload-seconds), plaintext
refused. Certificates are made by openssl at test time; the client is
Python's urllib / ssl only (no gRPC module)."""

import argparse
import http.client
import json
import os
import shutil
import socket
import ssl
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
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tls_certs import make_ca, make_leaf  # noqa: E402

# Every way a refused connection can surface in urllib: a failed
# handshake, a reset or closed socket, or a reply that is not HTTP.
REFUSED = (ssl.SSLError, ConnectionError, http.client.HTTPException,
           urllib.error.URLError, OSError)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--server-bin", required=True)
    p.add_argument("--plugin-dir", required=True)
    p.add_argument("--profile-dir", required=True)
    return p.parse_known_args()


class HttpsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.d = cls.tmp.name
        make_ca(d, "ca")
        make_ca(d, "other-ca")
        make_leaf(d, "ca", "server", server=True)
        make_leaf(d, "ca", "server2", server=True)
        make_leaf(d, "ca", "client", server=False)
        make_leaf(d, "other-ca", "stranger", server=False)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.d, name)

    def start(self, extra, cert="server"):
        # The gRPC port is TLS too: wait on /readyz over HTTPS instead of the
        # harness's plaintext gRPC health check.
        server = ServerProcess(
            ARGS.server_bin, ARGS.plugin_dir, ARGS.profile_dir,
            ["--http-listen=127.0.0.1:0", "--tls-cert=" + self.path(cert + ".crt"),
             "--tls-key=" + self.path(cert + ".key")] + extra,
            wait_serving=False)
        self.addCleanup(server.stop)
        return server

    def context(self, ca="ca", client=None):
        ctx = ssl.create_default_context(cafile=self.path(ca + ".crt"))
        if client:
            ctx.load_cert_chain(self.path(client + ".crt"),
                                self.path(client + ".key"))
        return ctx

    def get(self, port, path, ctx, body=None, scheme="https"):
        req = urllib.request.Request(
            "%s://127.0.0.1:%d%s" % (scheme, port, path),
            data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30, context=ctx) as r:
            return r.status, r.read()

    def wait_ready(self, port, ctx):
        deadline = time.monotonic() + 30
        while True:
            try:
                if self.get(port, "/readyz", ctx)[0] == 200:
                    return
            except urllib.error.HTTPError as e:
                if e.code != 503 or time.monotonic() > deadline:
                    raise
            time.sleep(0.1)

    def peer_common_name(self, port, ctx):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                subject = dict(x[0] for x in s.getpeercert()["subject"])
                return subject["commonName"]

    def test_https_served_with_the_ca_and_plaintext_refused(self):
        server = self.start([])
        port = server.http_port
        ctx = self.context()
        self.wait_ready(port, ctx)
        st, body = self.get(port, "/v1/ListModels", ctx, {})
        self.assertEqual(st, 200)
        self.assertIn("llama-3-8b", [m["id"] for m in json.loads(body)["models"]])
        st, body = self.get(port, "/", ctx)
        self.assertEqual(st, 200)
        self.assertIn(b"Ridgeline", body)
        # A client trusting another CA refuses the server's certificate.
        with self.assertRaises(urllib.error.URLError) as e:
            self.get(port, "/healthz", self.context(ca="other-ca"))
        self.assertIsInstance(e.exception.reason, ssl.SSLCertVerificationError)
        # Plain HTTP to the HTTPS port gets no HTTP answer.
        with self.assertRaises(REFUSED):
            self.get(port, "/healthz", None, scheme="http")
        # The port still serves after the refused attempts.
        self.assertEqual(self.get(port, "/healthz", ctx)[0], 200)

    def test_mutual_tls_needs_a_client_cert_signed_by_the_client_ca(self):
        server = self.start(["--tls-client-ca=" + self.path("ca.crt")])
        port = server.http_port
        ok = self.context(client="client")
        self.wait_ready(port, ok)
        st, body = self.get(port, "/v1/Analyze", ok, {
            "model": {"catalogId": "llama-3-8b"},
            "hardware": {"platformId": "nvidia-h100-sxm-80gb"}})
        self.assertEqual(st, 200)
        self.assertGreater(json.loads(body)["result"]["ttftSeconds"], 0)
        # No client certificate, or one another CA signed: refused (TLS 1.3
        # reports it on the first read, hence the request in the block).
        for client in (None, "stranger"):
            with self.subTest(client=client):
                with self.assertRaises(REFUSED):
                    self.get(port, "/healthz", self.context(client=client))
        self.assertEqual(self.get(port, "/healthz", ok)[0], 200)

    def test_rotated_certificate_applies_to_new_connections(self):
        # The server reads copies that the test then overwrites, as a
        # Secret or cert-manager rotation does.
        cert, key = self.path("live.crt"), self.path("live.key")
        shutil.copy(self.path("server.crt"), cert)
        shutil.copy(self.path("server.key"), key)
        server = ServerProcess(
            ARGS.server_bin, ARGS.plugin_dir, ARGS.profile_dir,
            ["--http-listen=127.0.0.1:0", "--tls-cert=" + cert,
             "--tls-key=" + key, "--tls-reload-seconds=1"], wait_serving=False)
        self.addCleanup(server.stop)
        port = server.http_port
        ctx = self.context()
        self.wait_ready(port, ctx)
        self.assertEqual(self.peer_common_name(port, ctx), "server")
        # Key first, then certificate: in between the pair does not match
        # and the server keeps the old one.
        for src, dst in (("server2.key", key), ("server2.crt", cert)):
            tmp = dst + ".tmp"
            shutil.copy(self.path(src), tmp)
            os.replace(tmp, dst)
        deadline = time.monotonic() + 15
        name = "server"
        while name == "server" and time.monotonic() < deadline:
            time.sleep(0.3)
            name = self.peer_common_name(port, ctx)
        self.assertEqual(name, "server2")
        self.assertEqual(self.get(port, "/healthz", ctx)[0], 200)

    def test_a_key_not_matching_the_certificate_stops_the_start(self):
        r = subprocess.run(
            [ARGS.server_bin, "--listen=127.0.0.1:0", "--metrics-listen=off",
             "--http-listen=127.0.0.1:0",
             "--tls-cert=" + self.path("server.crt"),
             "--tls-key=" + self.path("server2.key"),
             "--plugin-dir=" + ARGS.plugin_dir,
             "--profile-dir=" + ARGS.profile_dir],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("--tls-key", r.stderr)
        self.assertIn("does not match", r.stderr)


if __name__ == "__main__":
    ARGS, rest = parse_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
