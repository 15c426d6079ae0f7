#!/usr/bin/env python3
"""StepTimer round-trip benchmark (not a test): p50 / p99 latency of
StepTimer.step and steps/s over one open StepTimeStream.

    # against a running server
    python3 clients/python/bench/step_timer_bench.py --target 127.0.0.1:50051
    # or start one on 127.0.0.1:0 for the run
    python3 clients/python/bench/step_timer_bench.py --server-bin \
        build/service/ridgeline-server --plugin-dir build/plugins \
        --profile-dir profiles

Each step is a decode batch at mixed contexts plus one prefill chunk (the
shape a continuous-batching scheduler asks about); --batch sets its size.
The run is bounded by --steps and --duration.
"""

import argparse
import os
import sys
import time

import ridgeline

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(HERE, "..", "..", "..", "tests", "integration",
                       "clients", "python")


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1,
                             int(q * len(sorted_values)))]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target")
    p.add_argument("--server-bin")
    p.add_argument("--plugin-dir")
    p.add_argument("--profile-dir")
    p.add_argument("--model", default="llama-3-8b")
    p.add_argument("--hardware", default="nvidia-h100-sxm-80gb")
    p.add_argument("--batch", type=int, default=32,
                   help="decode sequences per step (plus one prefill chunk)")
    p.add_argument("--chunk", type=int, default=512)
    p.add_argument("--steps", type=int, default=5000)
    p.add_argument("--duration", type=float, default=20.0, help="seconds, max")
    p.add_argument("--warmup", type=int, default=200)
    args = p.parse_args()

    server = None
    if not args.target:
        if not (args.server_bin and args.plugin_dir and args.profile_dir):
            p.error("--target, or --server-bin --plugin-dir --profile-dir")
        sys.path.insert(0, HARNESS)
        import ridgeline_server
        server = ridgeline_server.ServerProcess(
            args.server_bin, args.plugin_dir, args.profile_dir)
        args.target = server.address
        with ridgeline.Client(args.target, timeout=30) as c:
            ridgeline_server.wait_serving(c.list_models)
    try:
        step = [(512 + 37 * i % 2048, 1) for i in range(args.batch)]
        step.append((0, args.chunk))
        latencies = []
        with ridgeline.StepTimer(args.target, model=args.model,
                                 hardware=args.hardware) as t:
            for _ in range(args.warmup):
                t.step(step)
            start = time.perf_counter()
            deadline = start + args.duration
            while len(latencies) < args.steps:
                t0 = time.perf_counter()
                seconds = t.step(step)
                latencies.append(time.perf_counter() - t0)
                if t0 > deadline:
                    break
            elapsed = time.perf_counter() - start
    finally:
        if server:
            server.stop()
    latencies.sort()
    print("StepTimer.step %s on %s, %d sequences/step (%d decode + 1 chunk "
          "of %d), predicted step %.3f ms" % (
              args.model, args.hardware, args.batch + 1, args.batch,
              args.chunk, seconds * 1e3))
    print("steps %d in %.2f s: %.0f steps/s" % (
        len(latencies), elapsed, len(latencies) / elapsed))
    print("round trip us: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f" % (
        percentile(latencies, 0.5) * 1e6, percentile(latencies, 0.9) * 1e6,
        percentile(latencies, 0.99) * 1e6, latencies[-1] * 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
