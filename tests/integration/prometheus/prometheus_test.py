"""Prometheus scrapes ridgeline-server: a real `prometheus` on 127.0.0.1 with
a generated config (1 s scrape interval, temporary storage) scrapes the
server's metrics port while the `ridgeline` CLI sends RPCs over gRPC; the
test then queries /api/v1/query for grpc_server_handled_total and
ridgeline_* series, and `promtool check metrics` lints the exposition."""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

ARGS = None


def free_port():
    # Prometheus cannot listen on port 0 and report it, so pick one; the
    # window between close() and Prometheus binding it is tiny on loopback.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def find_tool(name):
    path = shutil.which(name) or ("/usr/bin/" + name
                                  if os.path.exists("/usr/bin/" + name)
                                  else None)
    if path is None:
        print("MISSING: `%s` not found (Debian package `prometheus`); the "
              "Prometheus scrape test cannot run" % name, file=sys.stderr)
    return path


class PrometheusScrapeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.prometheus = find_tool("prometheus")
        cls.promtool = find_tool("promtool")
        if not cls.prometheus or not cls.promtool:
            raise RuntimeError("MISSING: prometheus and/or promtool")
        sys.path.insert(0, ARGS.harness_dir)
        import ridgeline_server
        cls.server = ridgeline_server.ServerProcess(
            ARGS.server_bin, ARGS.plugin_dir, ARGS.profile_dir)
        cls.tmp = tempfile.mkdtemp(prefix="ridgeline-prometheus-")
        cls.prom = None
        try:
            cls.start_prometheus()
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def start_prometheus(cls):
        config = os.path.join(cls.tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write(
                "global:\n"
                "  scrape_interval: 1s\n"
                "  evaluation_interval: 1s\n"
                "scrape_configs:\n"
                "  - job_name: ridgeline\n"
                "    scrape_interval: 1s\n"
                "    scrape_timeout: 1s\n"
                "    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % cls.server.metrics_port)
        for attempt in range(3):
            cls.web_port = free_port()
            cls.prom_log = open(os.path.join(cls.tmp, "prometheus.log"), "w")
            cls.prom = subprocess.Popen(
                [cls.prometheus, "--config.file=" + config,
                 "--storage.tsdb.path=" + os.path.join(cls.tmp, "data"),
                 "--web.listen-address=127.0.0.1:%d" % cls.web_port,
                 "--log.level=warn"],
                stdout=cls.prom_log, stderr=subprocess.STDOUT)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and cls.prom.poll() is None:
                try:
                    http_get("http://127.0.0.1:%d/-/ready" % cls.web_port)
                    return
                except Exception:
                    time.sleep(0.2)
            cls.stop_prometheus()
        raise RuntimeError("prometheus did not become ready; log:\n" +
                           open(os.path.join(cls.tmp, "prometheus.log")).read())

    @classmethod
    def stop_prometheus(cls):
        if cls.prom is not None and cls.prom.poll() is None:
            cls.prom.send_signal(signal.SIGTERM)
            try:
                cls.prom.wait(timeout=20)
            except subprocess.TimeoutExpired:
                cls.prom.kill()
                cls.prom.wait()
        cls.prom = None

    @classmethod
    def tearDownClass(cls):
        cls.stop_prometheus()
        cls.server.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def cli(self, *args, expect=0):
        run = subprocess.run([ARGS.cli_bin, "--server", self.server.address,
                              "--format", "json"] + list(args),
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, expect, run.stderr)
        return run

    def query(self, promql):
        url = "http://127.0.0.1:%d/api/v1/query?%s" % (
            self.web_port, urllib.parse.urlencode({"query": promql}))
        body = json.loads(http_get(url))
        self.assertEqual(body["status"], "success", body)
        return body["data"]["result"]

    def wait_value(self, promql, at_least, timeout=30):
        """Polls until the instant vector's single value >= at_least."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            result = self.query(promql)
            if result:
                value = float(result[0]["value"][1])
                if value >= at_least:
                    return value
            time.sleep(0.5)
        self.fail("%s stayed at %s (< %s) for %ss" %
                  (promql, value, at_least, timeout))

    def test_prometheus_scrapes_grpc_and_ridgeline_series(self):
        analyze = ["analyze", "--model", "llama-3-8b", "--hardware",
                   "nvidia-h100-sxm-80gb", "--no-suggestions"]
        for _ in range(3):
            self.cli(*analyze)
        self.cli(*analyze, "--batch", "0", expect=1)  # INVALID_ARGUMENT
        # 2 hardware x 3 batch sizes = 6 points.
        self.cli("sweep", "--model", "llama-3-8b", "--hardware",
                 "nvidia-h100-sxm-80gb,amd-mi300x", "--batch", "1,8,64")

        self.wait_value('up{job="ridgeline"}', 1)
        method = 'grpc_service="ridgeline.v1.RidgelineService"'
        self.wait_value('sum(grpc_server_handled_total{%s,grpc_method="Analyze",'
                        'grpc_code="OK"})' % method, 3)
        self.wait_value('sum(grpc_server_handled_total{%s,grpc_method="Analyze",'
                        'grpc_code="InvalidArgument"})' % method, 1)
        self.wait_value('sum(grpc_server_handled_total{%s,grpc_method="Sweep",'
                        'grpc_code="OK"})' % method, 1)
        self.wait_value('sum(ridgeline_analyses_total{kind="analyze"})', 3)
        self.wait_value('sum(ridgeline_sweep_points_total)', 6)
        self.wait_value('sum(ridgeline_engine_seconds_count)', 9)  # 3 + 6
        self.wait_value('ridgeline_plugins_loaded', 1)
        # Every method x code is pre-created: an RPC never called is 0, not
        # absent.
        never = self.query('grpc_server_handled_total{%s,grpc_method='
                           '"GetModel",grpc_code="NotFound"}' % method)
        self.assertEqual(len(never), 1)
        self.assertEqual(float(never[0]["value"][1]), 0)

    def test_promtool_accepts_the_exposition(self):
        self.cli("models")
        text = http_get("http://127.0.0.1:%d/metrics" % self.server.metrics_port)
        self.assertIn("grpc_server_handled_total", text)
        check = subprocess.run([self.promtool, "check", "metrics"], input=text,
                               capture_output=True, text=True, timeout=60)
        self.assertEqual(check.returncode, 0,
                         "promtool check metrics:\n" + check.stdout + check.stderr)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    for name in ("server-bin", "cli-bin", "plugin-dir", "profile-dir",
                 "harness-dir"):
        p.add_argument("--" + name, required=True)
    ARGS, rest = p.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
