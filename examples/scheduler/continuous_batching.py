#!/usr/bin/env python3
"""A minimal continuous-batching scheduler whose cost model is Ridgeline.

Requests arrive (Poisson, seeded), each with a prompt and a number of tokens
to generate. Every iteration the scheduler builds the next step: one decode
token for each running sequence, the next prefill chunk of each sequence
still prefilling, and then admits waiting requests one by one (their first
prefill chunk) while StepTimer says the step stays within --step-budget
seconds (the TPOT the running sequences were promised) and the token budget
and batch limit hold. The simulated clock advances by the step's predicted
time. At the end it prints TTFT / TPOT percentiles and throughput.

    python3 examples/scheduler/continuous_batching.py --target 127.0.0.1:50051

Needs the `ridgeline` package (pip install --no-build-isolation
./clients/python) and a running ridgeline-server.
"""

import argparse
import collections
import json
import random
import sys

import ridgeline


class Request:
    def __init__(self, rid, arrival, prompt, generate):
        self.rid, self.arrival = rid, arrival
        self.prompt, self.generate = prompt, generate
        self.prefilled = 0     # prompt tokens in the KV cache
        self.generated = 0     # output tokens produced
        self.first_token = None
        self.done = None

    @property
    def context(self):
        return self.prefilled + self.generated

    @property
    def prefilling(self):
        return self.prefilled < self.prompt


def workload(args):
    rng = random.Random(args.seed)
    t, requests = 0.0, []
    for i in range(args.requests):
        t += rng.expovariate(args.arrival_rate)
        requests.append(Request(i, t, rng.randint(*args.prompt),
                                rng.randint(*args.generate)))
    return requests


def entry(r, chunk):
    """(context_tokens, new_tokens) of `r` in the next step."""
    if r.prefilling:
        return (r.prefilled, min(chunk, r.prompt - r.prefilled))
    return (r.context, 1)


def percentile(values, q):
    if not values:
        return 0.0
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def run(args, timer):
    pending = collections.deque(workload(args))
    waiting, running, finished = collections.deque(), [], []
    clock, steps, calls, max_batch, max_step = 0.0, 0, 0, 0, 0.0
    over_budget_steps = 0
    while pending or waiting or running:
        while pending and pending[0].arrival <= clock:
            waiting.append(pending.popleft())
        if not running and not waiting:
            clock = pending[0].arrival  # idle until the next arrival
            continue
        batch = [entry(r, args.chunk) for r in running]
        seconds = None
        if batch:
            seconds = timer.step(batch)
            calls += 1
        # Admit while the predicted step stays within budget.
        while waiting and len(running) < args.max_batch:
            r = waiting[0]
            candidate = batch + [entry(r, args.chunk)]
            if sum(n for _, n in candidate) > args.token_budget and batch:
                break
            t = timer.step(candidate)
            calls += 1
            if batch and t > args.step_budget:
                break
            waiting.popleft()
            running.append(r)
            batch, seconds = candidate, t
        if seconds > args.step_budget:
            over_budget_steps += 1  # the running set alone exceeds it
        # Execute the step: advance the clock by its predicted time.
        clock += seconds
        steps += 1
        max_batch = max(max_batch, len(running))
        max_step = max(max_step, seconds)
        still = []
        for r, (_, new) in zip(running, batch):
            if r.prefilling:
                r.prefilled += new
                if not r.prefilling:      # the last chunk yields token 1
                    r.generated, r.first_token = 1, clock
            else:
                r.generated += 1
            if not r.prefilling and r.generated >= r.generate:
                r.done = clock
                finished.append(r)
            else:
                still.append(r)
        running = still
    ttft = [r.first_token - r.arrival for r in finished]
    tpot = [(r.done - r.first_token) / (r.generate - 1)
            for r in finished if r.generate > 1]
    tokens = sum(r.generate for r in finished)
    return {
        "requests": len(finished), "steps": steps, "step_timer_calls": calls,
        "simulated_seconds": clock, "output_tokens": tokens,
        "output_tokens_per_second": tokens / clock if clock else 0.0,
        "max_batch": max_batch, "max_step_seconds": max_step,
        "steps_over_budget": over_budget_steps,
        "ttft_p50_seconds": percentile(ttft, 0.5),
        "ttft_p99_seconds": percentile(ttft, 0.99),
        "tpot_p50_seconds": percentile(tpot, 0.5),
        "tpot_p99_seconds": percentile(tpot, 0.99),
    }


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target", default="127.0.0.1:50051")
    p.add_argument("--model", default="llama-3-8b")
    p.add_argument("--hardware", default="nvidia-h100-sxm-80gb")
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--arrival-rate", type=float, default=20.0,
                   help="requests per second (Poisson)")
    p.add_argument("--prompt", type=int, nargs=2, default=(128, 2048),
                   metavar=("MIN", "MAX"), help="prompt tokens, uniform")
    p.add_argument("--generate", type=int, nargs=2, default=(16, 256),
                   metavar=("MIN", "MAX"), help="output tokens, uniform")
    p.add_argument("--chunk", type=int, default=512,
                   help="prefill chunk size (tokens)")
    p.add_argument("--token-budget", type=int, default=2048,
                   help="new tokens per step (the server reserves the "
                   "activations of a step this large)")
    p.add_argument("--max-batch", type=int, default=128,
                   help="sequences per step (KV slots): the server reserves "
                   "the KV cache of this many at the longest prompt + "
                   "output, which must fit on the device (128 x 2,304 "
                   "tokens of Llama-3-8B bf16 is 38.7 GB)")
    p.add_argument("--step-budget", type=float, default=0.030,
                   help="admit while the step takes at most this (seconds)")
    p.add_argument("--pure-roofline", action="store_true",
                   help="the roofline bound instead of a calibrated profile")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        with ridgeline.StepTimer(
                args.target, model=args.model, hardware=args.hardware,
                timeout=600, pure_roofline=args.pure_roofline or None,
                max_sequences=args.max_batch,
                max_context_tokens=args.prompt[1] + args.generate[1],
                max_step_tokens=args.token_budget) as t:
            stats = run(args, t)
            stats["spilled"] = t.spilled
    except ridgeline.RidgelineError as e:
        print("error: %s (field %s)" % (e, e.field_path), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(stats, indent=2, sort_keys=True))
    else:
        for k, v in stats.items():
            print("%-26s %s" % (k, "%.6g" % v if isinstance(v, float) else v))
    if stats["spilled"]:
        print("warning: the reservation spills off the device (%s): the "
              "figures above are slowed by it; lower --max-batch"
              % stats["spilled"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
