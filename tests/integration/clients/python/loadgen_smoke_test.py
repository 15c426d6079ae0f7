"""Smoke test of bench/ridgeline_loadgen against a real ridgeline-server:
a short bounded Analyze run and a Sweep run finish with no errors, count
exactly the requests asked for, read the server's engine metrics, and a
non-loopback target is refused."""

import argparse
import os
import re
import subprocess
import sys
import unittest

ARGS = None


class LoadgenSmokeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import ridgeline_server
        cls.server = ridgeline_server.ServerProcess(
            ARGS.server_bin, ARGS.plugin_dir, ARGS.profile_dir)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def loadgen(self, *args):
        return subprocess.run(
            [ARGS.loadgen_bin, "--target", self.server.address, "--metrics",
             "127.0.0.1:%d" % self.server.metrics_port] + list(args),
            capture_output=True, text=True, timeout=120)

    def test_analyze_run_is_bounded_by_count_and_error_free(self):
        run = self.loadgen("--requests", "300", "--duration", "60",
                           "--concurrency", "8")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertRegex(run.stdout, r"requests 300 ok, 0 errors")
        # One engine analysis per Analyze (suggestions off).
        self.assertRegex(run.stdout, r"server: 300 engine analyses")
        self.assertRegex(run.stdout, r"latency ms: p50 [0-9.]+  p90 [0-9.]+  p99")

    def test_sweep_run_counts_points(self):
        run = self.loadgen("--mode", "sweep", "--requests", "20",
                           "--duration", "60", "--concurrency", "2",
                           "--sweep-batches", "1,8,64")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        # 20 sweeps x 3 batch sizes = 60 points.
        self.assertRegex(run.stdout, r"sweep points 60:")

    def test_duration_bounds_the_run(self):
        run = self.loadgen("--requests", "100000000", "--duration", "1",
                           "--concurrency", "4")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        seconds = float(re.search(r"errors in ([0-9.]+) s", run.stdout).group(1))
        self.assertLess(seconds, 5)

    def test_refuses_non_loopback_targets(self):
        run = subprocess.run([ARGS.loadgen_bin, "--target", "192.0.2.1:50051"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(run.returncode, 2)
        self.assertIn("refusing non-loopback address", run.stderr)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    for name in ("server-bin", "loadgen-bin", "plugin-dir", "profile-dir"):
        p.add_argument("--" + name, required=True)
    ARGS, rest = p.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
