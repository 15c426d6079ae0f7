"""The llm-d latency-predictor endpoint of a real ridgeline-server
(--llmd-predictor-listen on 127.0.0.1:0), called as llm-d's endpoint picker
calls its predictor sidecars: per incoming request, one /predict/bulk/strict
with every candidate pod's state, then the pick; streamed observations back
through /add_training_data_bulk; /status for the fit. Field names, types and
response keys are checked against the list kept from llm-d's own server
(llmd_api_fields.json, with its source commit). Python's urllib only."""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.request

ARGS = None
FIELDS = None
SERVER = None  # (process, port) shared by the tests


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--server-bin", required=True)
    p.add_argument("--plugin-dir", required=True)
    p.add_argument("--profile-dir", required=True)
    p.add_argument("--fields", required=True)
    return p.parse_known_args()


def start_server(extra=()):
    """Starts the server; returns (process, llmd port) once /readyz is 200."""
    env = dict(os.environ)
    for var in list(env):
        if var.startswith("RIDGELINE_"):
            env.pop(var)
    proc = subprocess.Popen(
        [ARGS.server_bin, "--listen=127.0.0.1:0", "--metrics-listen=off",
         "--plugin-dir=" + ARGS.plugin_dir,
         "--profile-dir=" + ARGS.profile_dir,
         "--llmd-predictor-listen=127.0.0.1:0",
         "--llmd-model=llama-3.1-8b",
         "--llmd-hardware=nvidia-h100-sxm-80gb",
         "--llmd-framework=vllm"] + list(extra),
        env=env, stdout=subprocess.PIPE, stderr=sys.stderr, text=True)
    port = None
    deadline = time.monotonic() + 30
    while port is None and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("llmd predictor listening on "):
            port = int(line.rsplit(":", 1)[1])
    if port is None:
        stop_server(proc)
        raise RuntimeError("no 'llmd predictor listening on' line")
    while time.monotonic() < deadline:
        status, _ = call(port, "/readyz")
        if status == 200:
            return proc, port
        time.sleep(0.05)
    stop_server(proc)
    raise RuntimeError("the predictor never became ready")


def stop_server(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    proc.stdout.close()
    return proc.returncode


def call(port, path, body=None, raw=None, method=None):
    """(status, parsed JSON or raw bytes); HTTP errors are not raised."""
    data = raw if raw is not None else (
        None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(
        "http://127.0.0.1:%d%s" % (port, path), data=data,
        headers={"Content-Type": "application/json"},
        method=method or ("POST" if data is not None else "GET"))
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            status, out = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, out = e.code, e.read()
    try:
        return status, json.loads(out)
    except ValueError:
        return status, out


def pod(kv=0.2, input_len=1000, waiting=0, running=8, generated=0,
        prefix=0.0, pod_type=""):
    """A PredictionRequest as the gateway fills it in."""
    return {"kv_cache_percentage": kv, "input_token_length": input_len,
            "num_request_waiting": waiting, "num_request_running": running,
            "num_tokens_generated": generated, "prefix_cache_score": prefix,
            "pod_type": pod_type}


class LlmdPredictorTest(unittest.TestCase):
    @property
    def port(self):
        return SERVER[1]

    def predict(self, state):
        status, out = call(self.port, "/predict", state)
        self.assertEqual(status, 200, out)
        return out

    def test_probes_and_status_carry_llmd_keys(self):
        status, out = call(self.port, "/healthz")
        self.assertEqual(status, 200)
        for key in FIELDS["healthz_response"]:
            self.assertIn(key, out)
        status, out = call(self.port, "/readyz")
        self.assertEqual(status, 200)
        for key in FIELDS["readyz_response"]:
            self.assertIn(key, out)
        status, out = call(self.port, "/status")
        self.assertEqual(status, 200)
        for key in FIELDS["status_response"]:
            self.assertIn(key, out)
        self.assertTrue(out["is_ready"])
        r = out["ridgeline"]
        self.assertEqual(r["model"], "llama-3.1-8b")
        self.assertEqual(r["hardware"], "nvidia-h100-sxm-80gb")
        self.assertEqual(r["calibration"], "serving.vllm")
        self.assertGreater(r["kv_capacity_tokens"], 0)

    def test_predict_answers_every_documented_key(self):
        out = self.predict(pod())
        for key in FIELDS["prediction_response"]:
            self.assertIn(key, out)
        self.assertGreater(out["ttft_ms"], 0)
        self.assertGreater(out["tpot_ms"], 0)
        # Every optional field of llm-d's request is accepted.
        full = pod()
        for name in FIELDS["prediction_request"]["optional"]:
            full.setdefault(name, 0)
        full["pod_type"] = None
        self.assertEqual(call(self.port, "/predict", full)[0], 200)

    def test_predictions_follow_the_pod_state(self):
        base = self.predict(pod())
        queued = self.predict(pod(waiting=4))
        cached = self.predict(pod(prefix=0.9))
        busy = self.predict(pod(running=64, kv=0.6))
        # A queue ahead delays the first token; a cached prefix speeds it.
        self.assertGreater(queued["ttft_ms"], base["ttft_ms"])
        self.assertLess(cached["ttft_ms"], base["ttft_ms"])
        # More sequences over more KV: each step (TPOT) is slower.
        self.assertGreater(busy["tpot_ms"], base["tpot_ms"])
        # A queue puts prefill chunks into this request's decode steps.
        self.assertGreater(queued["tpot_ms"], base["tpot_ms"])

    def test_gateway_replay_scores_candidates_and_learns(self):
        """The endpoint picker's loop: score three candidate pods per
        request in one strict bulk call, route to the lowest TTFT, then
        report what was measured. The 'decode' pods measure 3x the model
        (with a few stragglers at 100x); the fit for that pod_type goes to
        3, robust to the stragglers, and the others stay at 1."""
        rng = random.Random(7)
        pods = [dict(kv=0.1, running=4, waiting=0),
                dict(kv=0.5, running=40, waiting=2),
                dict(kv=0.9, running=120, waiting=9)]
        picks = [0, 0, 0]
        entries = []
        for i in range(20):
            input_len = rng.randint(200, 4000)
            prefix = rng.random() * 0.5
            cands = [pod(input_len=input_len, prefix=prefix,
                         pod_type="decode", **p) for p in pods]
            status, out = call(self.port, "/predict/bulk/strict",
                               {"requests": cands})
            self.assertEqual(status, 200, out)
            for key in FIELDS["bulk_response"]:
                self.assertIn(key, out)
            self.assertEqual(out["total_requests"], 3)
            self.assertEqual(out["successful_predictions"], 3)
            ttfts = [p["ttft_ms"] for p in out["predictions"]]
            best = ttfts.index(min(ttfts))
            picks[best] += 1
            # No decode sample has been sent yet: these are the raw
            # model's, and the "measurement" is a multiple of them.
            scale = 100.0 if i % 10 == 9 else 3.0
            entry = dict(cands[best])
            entry["actual_ttft_ms"] = out["predictions"][best]["ttft_ms"] * scale
            entry["actual_tpot_ms"] = out["predictions"][best]["tpot_ms"] * scale
            entries.append(entry)
            if i == 19:
                # 20 observations, streamed back in one bulk as the
                # gateway's flush does.
                status, out = call(self.port, "/add_training_data_bulk",
                                   {"entries": entries})
                self.assertEqual(status, 202, out)
                self.assertEqual(out["message"],
                                 "Accepted 20 training samples.")
        # The least loaded pod wins every time.
        self.assertEqual(picks[0], 20)
        status, out = call(self.port, "/status")
        fit = out["ridgeline"]["correction"]["pods"]["decode"]
        # 18 ratios of 3 and 2 of 100: the median is 3.
        self.assertAlmostEqual(fit["ttft_factor"], 3.0, places=6)
        self.assertAlmostEqual(fit["tpot_factor"], 3.0, places=6)
        self.assertEqual(fit["ttft_samples_in_window"], 20)
        # Corrected predictions: 3x for decode pods, unchanged for others.
        raw = self.predict(pod(pod_type="prefill"))
        corrected = self.predict(pod(pod_type="decode"))
        self.assertAlmostEqual(corrected["ttft_ms"] / raw["ttft_ms"], 3.0,
                               places=6)
        self.assertAlmostEqual(corrected["tpot_ms"] / raw["tpot_ms"], 3.0,
                               places=6)

    def test_training_sample_with_zero_tpot_counts_for_ttft_only(self):
        entry = pod(pod_type="zero-tpot")
        entry.update(actual_ttft_ms=50.0, actual_tpot_ms=0.0)
        status, _ = call(self.port, "/add_training_data_bulk",
                         {"entries": [entry] * 12})
        self.assertEqual(status, 202)
        _, out = call(self.port, "/status")
        fit = out["ridgeline"]["correction"]["pods"]["zero-tpot"]
        self.assertEqual(fit["ttft_samples_in_window"], 12)
        self.assertEqual(fit["tpot_samples_in_window"], 0)
        self.assertEqual(fit["tpot_factor"], 1.0)

    def test_missing_or_ill_typed_fields_are_422_naming_the_field(self):
        for name in FIELDS["prediction_request"]["required"]:
            body = pod()
            del body[name]
            status, out = call(self.port, "/predict", body)
            self.assertEqual(status, 422, name)
            self.assertIn({"type": "missing", "loc": ["body", name],
                           "msg": "Field required"}, out["detail"])
        cases = [("kv_cache_percentage", "high", "float_type"),
                 ("kv_cache_percentage", 1.5, "less_than_equal"),
                 ("prefix_cache_score", -0.1, "greater_than_equal"),
                 ("input_token_length", 12.5, "int_from_float"),
                 ("num_request_running", "4", "int_type"),
                 ("num_request_waiting", -1, "greater_than_equal"),
                 ("num_tokens_generated", True, "int_type"),
                 ("pod_type", 7, "string_type")]
        for name, value, kind in cases:
            body = pod()
            body[name] = value
            status, out = call(self.port, "/predict", body)
            self.assertEqual(status, 422, (name, value))
            self.assertEqual(out["detail"][0]["loc"], ["body", name])
            self.assertEqual(out["detail"][0]["type"], kind)
        # pydantic takes 5.0 for an int.
        body = pod()
        body["input_token_length"] = 5.0
        self.assertEqual(call(self.port, "/predict", body)[0], 200)
        # A training entry needs its measurements.
        entry = pod()
        status, out = call(self.port, "/add_training_data_bulk",
                           {"entries": [entry]})
        self.assertEqual(status, 422)
        locs = [e["loc"] for e in out["detail"]]
        self.assertIn(["body", "entries", 0, "actual_ttft_ms"], locs)
        self.assertIn(["body", "entries", 0, "actual_tpot_ms"], locs)

    def test_bulk_validation_is_422_for_the_whole_call(self):
        bad = pod()
        del bad["prefix_cache_score"]
        for path in ("/predict/bulk", "/predict/bulk/strict"):
            status, out = call(self.port, path, {"requests": [pod(), bad]})
            self.assertEqual(status, 422, path)
            self.assertEqual(out["detail"][0]["loc"],
                             ["body", "requests", 1, "prefix_cache_score"])
            status, out = call(self.port, path, {"requests": []})
            self.assertEqual(status, 422)
            self.assertEqual(out["detail"][0]["type"], "too_short")
            status, out = call(self.port, path, {"requests": "x"})
            self.assertEqual(out["detail"][0]["type"], "list_type")
            status, out = call(self.port, path, {})
            self.assertEqual(out["detail"][0]["loc"], ["body", "requests"])
        status, out = call(self.port, "/predict/bulk",
                           {"requests": [pod()] * 10001})
        self.assertEqual(status, 422)
        self.assertEqual(out["detail"][0]["type"], "too_long")
        # The lenient bulk answers with the documented error list.
        status, out = call(self.port, "/predict/bulk", {"requests": [pod()]})
        self.assertEqual(status, 200)
        for key in FIELDS["bulk_response_with_errors"]:
            self.assertIn(key, out)
        self.assertEqual(out["errors"], [])

    def test_ten_thousand_predictions_in_one_bulk_call(self):
        """The size of llm-d's largest bulk call (max_length 10000); the
        time is measured by bench/llmd_predictor_bench.cc, not here."""
        rng = random.Random(3)
        reqs = [pod(kv=rng.random(), input_len=rng.randint(1, 8000),
                    waiting=rng.randint(0, 20), running=rng.randint(0, 200),
                    generated=rng.randint(0, 500), prefix=rng.random())
                for _ in range(10000)]
        status, out = call(self.port, "/predict/bulk/strict",
                           {"requests": reqs})
        self.assertEqual(status, 200)
        self.assertEqual(out["successful_predictions"], 10000)
        self.assertEqual(len(out["predictions"]), 10000)
        self.assertTrue(all(p["ttft_ms"] > 0 and p["tpot_ms"] > 0
                            for p in out["predictions"]))

    def test_hostile_bodies_never_crash_it(self):
        bodies = [b"", b"{", b"[]", b"null", b"\"x\"", b"1e999",
                  b"{\"requests\": " + b"[" * 5000 + b"]" * 5000 + b"}",
                  json.dumps({"requests": [None, 1, "x", [], {}]}).encode(),
                  json.dumps(pod(input_len=10 ** 30)).encode(),
                  json.dumps(pod(input_len=2 ** 62, waiting=2 ** 53,
                                 running=2 ** 53)).encode(),
                  json.dumps({"entries": [pod()] * 3}).encode(),
                  b"\xff\xfe\x00garbage"]
        for path in ("/predict", "/predict/bulk", "/predict/bulk/strict",
                     "/add_training_data_bulk"):
            for raw in bodies:
                status, _ = call(self.port, path, raw=raw)
                self.assertIn(status, (200, 202, 400, 413, 422), (path, raw[:40]))
        # The largest counts the types allow still give a finite answer.
        out = self.predict(pod(input_len=2 ** 53, waiting=2 ** 53,
                               running=2 ** 53, generated=2 ** 53,
                               kv=1.0))
        self.assertGreater(out["ttft_ms"], 0)
        self.assertEqual(call(self.port, "/nope")[0], 404)
        self.assertEqual(call(self.port, "/predict")[0], 405)
        self.assertEqual(call(self.port, "/healthz")[0], 200)


def main():
    global ARGS, FIELDS, SERVER
    ARGS, rest = parse_args()
    with open(ARGS.fields) as f:
        FIELDS = json.load(f)
    SERVER = start_server()
    try:
        prog = unittest.main(argv=[sys.argv[0]] + rest, exit=False)
    finally:
        code = stop_server(SERVER[0])
    if code != 0:
        print("server exited with %s" % code, file=sys.stderr)
        sys.exit(1)
    sys.exit(0 if prog.result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
