"""Test harness shared by the Python-driven integration tests: starts the real
ridgeline-server on 127.0.0.1 with ports 0, reads the bound ports from its
stdout, waits until it serves, and stops it (SIGTERM, then SIGKILL)."""

import os
import re
import signal
import subprocess
import sys
import time


class ServerProcess:
    def __init__(self, server_bin, plugin_dir, profile_dir, extra_args=(),
                 wait_serving=True):
        env = dict(os.environ)
        for var in ("RIDGELINE_LISTEN", "RIDGELINE_METRICS_LISTEN",
                    "RIDGELINE_HTTP_LISTEN"):
            env.pop(var, None)
        args = [server_bin, "--listen=127.0.0.1:0",
                "--metrics-listen=127.0.0.1:0",
                "--plugin-dir=" + plugin_dir, "--profile-dir=" + profile_dir]
        self.proc = subprocess.Popen(args + list(extra_args), env=env,
                                     stdout=subprocess.PIPE,
                                     stderr=sys.stderr, text=True)
        self.port = None
        self.metrics_port = None
        self.http_port = None
        want_http = any(a.startswith("--http-listen") for a in extra_args)
        deadline = time.monotonic() + 30
        # "listening on HOST:PORT", "metrics listening on HOST:PORT" and,
        # with --http-listen, "http listening on HOST:PORT".
        while (self.port is None or self.metrics_port is None
               or (want_http and self.http_port is None)) \
                and time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.match(r"^(metrics |http )?listening on .*:(\d+)\s*$", line)
            if m and m.group(1) == "metrics ":
                self.metrics_port = int(m.group(2))
            elif m and m.group(1) == "http ":
                self.http_port = int(m.group(2))
            elif m:
                self.port = int(m.group(2))
        if self.port is None or self.metrics_port is None \
                or (want_http and self.http_port is None):
            self.stop()
            raise RuntimeError("ridgeline-server did not report its ports")
        if wait_serving:
            self._wait_serving(deadline)

    def _wait_serving(self, deadline):
        """Until grpc.health.v1 says SERVING (plugins loaded: each is first
        checked in a child process, which takes a moment)."""
        import grpc
        with grpc.insecure_channel(self.address) as channel:
            check = channel.unary_unary("/grpc.health.v1.Health/Check")
            while time.monotonic() < deadline:
                try:
                    if check(b"", timeout=2) == b"\x08\x01":  # SERVING
                        return
                except grpc.RpcError:
                    pass
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("ridgeline-server did not become SERVING")

    @property
    def address(self):
        return "127.0.0.1:%d" % self.port

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        return self.proc.returncode


def wait_serving(call, timeout=30):
    """Retries `call` (an RPC through a raw stub or the ridgeline package)
    while the server answers UNAVAILABLE (plugins still loading)."""
    import grpc
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except Exception as e:
            # grpc.RpcError has code(); ridgeline.RidgelineError has .code.
            code = getattr(e, "code", None)
            code = code() if callable(code) else code
            if code != grpc.StatusCode.UNAVAILABLE or \
                    time.monotonic() > deadline:
                raise
            time.sleep(0.1)
