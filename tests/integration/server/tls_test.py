#!/usr/bin/python3
"""TLS, mutual TLS, certificate reload and bearer-token auth of the real
ridgeline-server (issue 14, Security), with a Python gRPC client (Debian's
python3-grpcio) and certificates made by openssl at test time.

Calls are made with raw protobuf bytes, so the test needs no generated
stubs: an empty HealthCheckRequest is b"", and SERVING is field 1 = 1
(b"\\x08\\x01")."""

import argparse
import http.client
import os
import re
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import unittest

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tls_certs import make_ca, make_leaf  # noqa: E402

ARGS = None
SERVING = b"\x08\x01"
LOCAL_POOL = [("grpc.use_local_subchannel_pool", 1)]


def read(d, name):
    with open(os.path.join(d, name), "rb") as f:
        return f.read()


class Server:
    """ridgeline-server on 127.0.0.1:0; the gRPC port from its stdout."""

    def __init__(self, extra):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("RIDGELINE_")}
        self.proc = subprocess.Popen(
            [ARGS.server_bin, "--listen=127.0.0.1:0", "--metrics-listen=off",
             "--plugin-dir=" + ARGS.plugin_dir,
             "--profile-dir=" + ARGS.profile_dir] + extra,
            env=env, stdout=subprocess.PIPE, stderr=sys.stderr, text=True)
        self.port = None
        self.http_port = None  # with --http-listen
        deadline = time.monotonic() + 30
        while self.port is None and time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.match(r"^http listening on .*:(\d+)\s*$", line)
            if m:
                self.http_port = int(m.group(1))
            m = re.match(r"^listening on .*:(\d+)\s*$", line)
            if m:
                self.port = int(m.group(1))
        if self.port is None:
            self.stop()
            raise RuntimeError("ridgeline-server did not report its port")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()


def call(channel, method, request=b"", metadata=None, timeout=5):
    fn = channel.unary_unary(method)  # bytes in, bytes out
    return fn(request, timeout=timeout, metadata=metadata)


def health(channel, timeout=5):
    """The health answer, retrying while plugins load (UNAVAILABLE with a
    working handshake means "not yet")."""
    deadline = time.monotonic() + 30
    while True:
        resp = call(channel, "/grpc.health.v1.Health/Check", timeout=timeout)
        if resp == SERVING or time.monotonic() > deadline:
            return resp
        time.sleep(0.1)


class TlsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.d = cls.tmp.name
        make_ca(d, "ca")
        make_ca(d, "other-ca")
        make_leaf(d, "ca", "server", server=True)
        make_leaf(d, "ca", "client", server=False)
        make_leaf(d, "other-ca", "stranger", server=False)
        make_leaf(d, "other-ca", "server2", server=True)
        with open(os.path.join(d, "token"), "w") as f:
            f.write("s3cret-token-0123456789\n")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.d, name)

    def tls_channel(self, port, ca="ca.crt", client=None):
        creds = grpc.ssl_channel_credentials(
            root_certificates=read(self.d, ca),
            private_key=read(self.d, client + ".key") if client else None,
            certificate_chain=read(self.d, client + ".crt") if client else None)
        # A private subchannel pool: a refused connection must not leave a
        # shared subchannel in reconnect backoff for the next channel.
        return grpc.secure_channel("127.0.0.1:%d" % port, creds,
                                   options=LOCAL_POOL)

    def expect_refused(self, channel):
        with self.assertRaises(grpc.RpcError) as e:
            call(channel, "/grpc.health.v1.Health/Check", timeout=3)
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE,
                         e.exception.details())

    def test_tls_serves_with_the_ca_and_refuses_plaintext(self):
        s = Server(["--tls-cert=" + self.path("server.crt"),
                    "--tls-key=" + self.path("server.key")])
        try:
            with self.tls_channel(s.port) as ch:
                self.assertEqual(health(ch), SERVING)
                # A catalog call works over TLS (ListModels: empty request).
                self.assertGreater(
                    len(call(ch, "/ridgeline.v1.RidgelineService/ListModels")),
                    100)
            # A client that does not trust the server's CA is refused.
            with self.tls_channel(s.port, ca="other-ca.crt") as ch:
                self.expect_refused(ch)
            # Plaintext to a TLS port fails the handshake.
            with grpc.insecure_channel("127.0.0.1:%d" % s.port, options=LOCAL_POOL) as ch:
                self.expect_refused(ch)
        finally:
            s.stop()

    def test_mutual_tls_needs_a_client_cert_signed_by_the_client_ca(self):
        s = Server(["--tls-cert=" + self.path("server.crt"),
                    "--tls-key=" + self.path("server.key"),
                    "--tls-client-ca=" + self.path("ca.crt")])
        try:
            with self.tls_channel(s.port, client="client") as ch:
                self.assertEqual(health(ch), SERVING)
            with self.tls_channel(s.port) as ch:  # no client certificate
                self.expect_refused(ch)
            with self.tls_channel(s.port, client="stranger") as ch:
                self.expect_refused(ch)  # signed by another CA
            with grpc.insecure_channel("127.0.0.1:%d" % s.port, options=LOCAL_POOL) as ch:
                self.expect_refused(ch)
        finally:
            s.stop()

    def test_certificate_files_are_reloaded_without_restart(self):
        # Served first with a certificate of "ca"; then the files are
        # replaced by one of "other-ca". Within the reload interval a client
        # trusting only "other-ca" is served by the same process.
        cert, key = self.path("live.crt"), self.path("live.key")
        with open(cert, "wb") as f:
            f.write(read(self.d, "server.crt"))
        with open(key, "wb") as f:
            f.write(read(self.d, "server.key"))
        s = Server(["--tls-cert=" + cert, "--tls-key=" + key,
                    "--tls-reload-seconds=1"])
        try:
            with self.tls_channel(s.port) as ch:
                self.assertEqual(health(ch), SERVING)
            with self.tls_channel(s.port, ca="other-ca.crt") as ch:
                self.expect_refused(ch)
            # Key first, then certificate, each by an atomic rename.
            for src, dst in (("server2.key", key), ("server2.crt", cert)):
                with open(dst + ".new", "wb") as f:
                    f.write(read(self.d, src))
                os.replace(dst + ".new", dst)
            served = False
            deadline = time.monotonic() + 15
            while not served and time.monotonic() < deadline:
                time.sleep(0.5)
                with self.tls_channel(s.port, ca="other-ca.crt") as ch:
                    try:
                        served = health(ch, timeout=2) == SERVING
                    except grpc.RpcError:
                        pass
            self.assertTrue(served, "the new certificate was never served")
            self.assertIsNone(s.proc.poll())
        finally:
            s.stop()

    def test_bearer_token_guards_the_expensive_methods(self):
        s = Server(["--auth-token-file=" + self.path("token")])
        try:
            with grpc.insecure_channel("127.0.0.1:%d" % s.port, options=LOCAL_POOL) as ch:
                self.assertEqual(health(ch), SERVING)  # health: no token
                # Catalog calls need no token.
                call(ch, "/ridgeline.v1.RidgelineService/ListModels")
                analyze = "/ridgeline.v1.RidgelineService/Analyze"
                for md in (None, [("authorization", "Bearer wrong")],
                           [("authorization", "s3cret-token-0123456789")]):
                    with self.assertRaises(grpc.RpcError) as e:
                        call(ch, analyze, metadata=md)
                    self.assertEqual(e.exception.code(),
                                     grpc.StatusCode.UNAUTHENTICATED)
                # With the token the call reaches validation: an empty
                # AnalyzeRequest is INVALID_ARGUMENT naming "model".
                with self.assertRaises(grpc.RpcError) as e:
                    call(ch, analyze, metadata=[
                        ("authorization", "Bearer s3cret-token-0123456789")])
                self.assertEqual(e.exception.code(),
                                 grpc.StatusCode.INVALID_ARGUMENT)
                self.assertIn("model", e.exception.details())
        finally:
            s.stop()

    def test_sighup_reloads_the_token_and_usr_signals_are_ignored(self):
        # Issue 26: SIGHUP, SIGUSR1 and SIGUSR2 killed the server at once.
        # Now SIGHUP re-reads the token file (rotation without a restart: the
        # old token is refused, the new one accepted; a bad file keeps the
        # current token) and the other two are ignored.
        token = self.path("rotating-token")
        old, new = "old-token-0123456789abc", "new-token-0123456789xyz"

        def write_token(text):
            with open(token + ".new", "w") as f:
                f.write(text + "\n")
            os.replace(token + ".new", token)

        write_token(old)
        s = Server(["--auth-token-file=" + token])
        analyze = "/ridgeline.v1.RidgelineService/Analyze"
        try:
            with grpc.insecure_channel("127.0.0.1:%d" % s.port,
                                       options=LOCAL_POOL) as ch:
                def code(tok):
                    try:
                        call(ch, analyze,
                             metadata=[("authorization", "Bearer " + tok)])
                    except grpc.RpcError as e:
                        return e.code()
                    return grpc.StatusCode.OK

                self.assertEqual(health(ch), SERVING)
                # With the token an empty request reaches validation.
                self.assertEqual(code(old), grpc.StatusCode.INVALID_ARGUMENT)
                for sig in (signal.SIGUSR1, signal.SIGUSR2):
                    s.proc.send_signal(sig)
                time.sleep(0.3)
                self.assertIsNone(s.proc.poll(), "killed by SIGUSR1/SIGUSR2")
                self.assertEqual(health(ch), SERVING)
                write_token(new)
                self.assertEqual(code(old), grpc.StatusCode.INVALID_ARGUMENT,
                                 "the file is read only on SIGHUP")
                s.proc.send_signal(signal.SIGHUP)
                deadline = time.monotonic() + 10
                while (code(old) != grpc.StatusCode.UNAUTHENTICATED and
                       time.monotonic() < deadline):
                    time.sleep(0.05)
                self.assertEqual(code(old), grpc.StatusCode.UNAUTHENTICATED)
                self.assertEqual(code(new), grpc.StatusCode.INVALID_ARGUMENT)
                # A token too short to use: logged, the current one stays.
                write_token("short")
                s.proc.send_signal(signal.SIGHUP)
                time.sleep(0.5)
                self.assertEqual(code(new), grpc.StatusCode.INVALID_ARGUMENT)
                self.assertIsNone(s.proc.poll())
        finally:
            s.stop()
        self.assertEqual(s.proc.returncode, 0)

    def test_sighup_reloads_the_grpc_certificate_at_once(self):
        # --tls-reload-seconds=86400: without SIGHUP the gRPC port would keep
        # the first certificate for a day; with it, the new one is served
        # within gRPC's one-second poll of the server's private copies.
        cert, key = self.path("hup-grpc.crt"), self.path("hup-grpc.key")
        for src, dst in (("server.crt", cert), ("server.key", key)):
            with open(dst, "wb") as f:
                f.write(read(self.d, src))
        s = Server(["--tls-cert=" + cert, "--tls-key=" + key,
                    "--tls-reload-seconds=86400"])
        try:
            with self.tls_channel(s.port) as ch:
                self.assertEqual(health(ch), SERVING)
            for src, dst in (("server2.key", key), ("server2.crt", cert)):
                with open(dst + ".new", "wb") as f:
                    f.write(read(self.d, src))
                os.replace(dst + ".new", dst)
            time.sleep(2)  # two polls: nothing is re-read unasked
            with self.tls_channel(s.port, ca="other-ca.crt") as ch:
                self.expect_refused(ch)
            s.proc.send_signal(signal.SIGHUP)
            served = False
            deadline = time.monotonic() + 10
            while not served and time.monotonic() < deadline:
                time.sleep(0.2)
                with self.tls_channel(s.port, ca="other-ca.crt") as ch:
                    try:
                        served = health(ch, timeout=2) == SERVING
                    except grpc.RpcError:
                        pass
            self.assertTrue(served, "the new certificate was not served")
            self.assertIsNone(s.proc.poll())
        finally:
            s.stop()

    def test_sighup_reloads_the_https_certificate_at_once(self):
        # --tls-reload-seconds=86400: without SIGHUP the HTTP port would keep
        # the first certificate for a day.
        cert, key = self.path("hup.crt"), self.path("hup.key")
        for src, dst in (("server.crt", cert), ("server.key", key)):
            with open(dst, "wb") as f:
                f.write(read(self.d, src))
        s = Server(["--tls-cert=" + cert, "--tls-key=" + key,
                    "--tls-reload-seconds=86400", "--http-listen=127.0.0.1:0"])

        def healthz(ca):
            ctx = ssl.create_default_context(cafile=self.path(ca))
            conn = http.client.HTTPSConnection("127.0.0.1", s.http_port,
                                               context=ctx, timeout=5)
            try:
                conn.request("GET", "/healthz")
                return conn.getresponse().status
            except (ssl.SSLError, OSError):
                return None
            finally:
                conn.close()

        try:
            self.assertEqual(healthz("ca.crt"), 200)
            for src, dst in (("server2.key", key), ("server2.crt", cert)):
                with open(dst + ".new", "wb") as f:
                    f.write(read(self.d, src))
                os.replace(dst + ".new", dst)
            time.sleep(0.2)
            self.assertIsNone(healthz("other-ca.crt"), "reloaded unasked")
            s.proc.send_signal(signal.SIGHUP)
            served = None
            deadline = time.monotonic() + 10
            while served != 200 and time.monotonic() < deadline:
                time.sleep(0.1)
                served = healthz("other-ca.crt")
            self.assertEqual(served, 200, "the new certificate was not served")
            self.assertIsNone(s.proc.poll())
        finally:
            s.stop()

    def test_missing_tls_file_stops_the_start_naming_it(self):
        r = subprocess.run(
            [ARGS.server_bin, "--listen=127.0.0.1:0", "--metrics-listen=off",
             "--tls-cert=" + self.path("absent.crt"),
             "--tls-key=" + self.path("server.key")],
            capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--tls-cert: cannot read", r.stderr)
        self.assertIn("absent.crt", r.stderr)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--server-bin", required=True)
    p.add_argument("--plugin-dir", required=True)
    p.add_argument("--profile-dir", required=True)
    ARGS, rest = p.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
