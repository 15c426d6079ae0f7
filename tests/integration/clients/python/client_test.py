"""The `ridgeline` Python package (installed from its wheel into a fresh
venv, on Debian's python3-grpcio) against a real ridgeline-server: Analyze,
Sweep, the catalogs and errors, checked against hand-derived rooflines."""

import argparse
import os
import sys
import unittest

ARGS = None


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--server-bin", required=True)
    p.add_argument("--plugin-dir", required=True)
    p.add_argument("--profile-dir", required=True)
    args, rest = p.parse_known_args()
    return args, rest


# Llama-3-8B: 8,030,261,248 parameters (32 layers x 218,112,000 + embedding
# and LM head 2 x 128256 x 4096 + final norm 4096; see the CLI test for the
# per-layer sum) x 2 bytes bf16 = 16,060,522,496 B of weights.
LLAMA3_8B_WEIGHT_BYTES = 16060522496.0
# A decode step reads every weight except the embedding table, of which it
# gathers only one row per sequence: 16,060,522,496 - 128256 x 4096 x 2
# (1,050,673,152) = 15,009,849,344 B.
LLAMA3_8B_DECODE_WEIGHT_BYTES = 15009849344.0
# KV per token: 2 (K, V) x 32 layers x 8 KV heads x 128 dims x 2 B = 131,072 B.
LLAMA3_8B_KV_BYTES_PER_TOKEN = 131072.0
# HBM bandwidth, ../shared/data/hardware_specs.csv (cited in plugins/nvidia)
# mem_bw_gbs: nvidia-h100-sxm-80gb 3352 GB/s, amd-mi300x 5300 GB/s.
H100_SXM_BW = 3352e9
MI300X_BW = 5300e9


def decode_roofline_tpot(bandwidth, batch, prompt, gen):
    """Memory-roofline TPOT of a batch-`batch` decode step: the weights a
    step reads plus the KV cache at the mean context, over the HBM bandwidth.
    The engine adds activations, embedding rows and logits, which are small
    at batch <= 8 (< 1% of the bytes), and compute is 2 x 8.03e9 FLOP per
    token / 989 TFLOP/s = 16 us << 4.5 ms, so the step is memory-bound."""
    mean_context = prompt + gen / 2.0
    bytes_per_step = (LLAMA3_8B_DECODE_WEIGHT_BYTES +
                      batch * mean_context * LLAMA3_8B_KV_BYTES_PER_TOKEN)
    return bytes_per_step / bandwidth


class PythonClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import ridgeline
        import ridgeline_server
        cls.rl = ridgeline
        cls.server = ridgeline_server.ServerProcess(
            ARGS.server_bin, ARGS.plugin_dir, ARGS.profile_dir)
        cls.client = ridgeline.Client(cls.server.address, timeout=60)
        ridgeline_server.wait_serving(cls.client.list_models)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        code = cls.server.stop()
        assert code == 0, "server exited %s after SIGTERM" % code

    def test_package_is_the_installed_one(self):
        # Imported from the venv the test runs in, not from the source tree.
        self.assertTrue(
            os.path.realpath(self.rl.__file__).startswith(
                os.path.realpath(sys.prefix)), self.rl.__file__)
        self.assertNotEqual(sys.prefix, sys.base_prefix, "not in a venv")
        # The stubs are generated from every proto of ridgeline/v1.
        self.assertTrue(hasattr(self.rl.pb, "StepTimeStreamRequest"))

    def analyze(self, hardware, batch, prompt, gen):
        return self.client.analyze(model="llama-3-8b", hardware=hardware,
                                   batch=batch, prompt_tokens=prompt,
                                   generated_tokens=gen, pure_roofline=True,
                                   suggestions=False)

    def test_analyze_decode_matches_memory_roofline(self):
        r = self.analyze("nvidia-h100-sxm-80gb", 1, 512, 128)
        self.assertTrue(r.upper_bound)
        self.assertEqual(r.model_id, "llama-3-8b")
        self.assertTrue(r.memory.fits)
        self.assertAlmostEqual(r.memory.required_weights_bytes,
                               LLAMA3_8B_WEIGHT_BYTES,
                               delta=LLAMA3_8B_WEIGHT_BYTES * 1e-6)
        # (15,009,849,344 + 576 x 131,072 = 15,085,346,816 B) / 3.352e12 B/s
        # = 4.500 ms -> 222.2 tok/s; the engine may add up to 1%.
        tpot = decode_roofline_tpot(H100_SXM_BW, 1, 512, 128)
        self.assertGreaterEqual(r.tpot_mean_seconds, tpot * 0.999)
        self.assertLessEqual(r.tpot_mean_seconds, tpot * 1.01)
        self.assertAlmostEqual(r.decode_tokens_per_second_per_sequence,
                               1.0 / r.tpot_mean_seconds, delta=1e-6 / tpot)
        self.assertEqual(r.decode.phase, "decode")
        self.assertEqual(r.decode.steps + 1, 128)  # first token comes from prefill
        self.assertEqual(r.bottleneck.bound, "memory")

    def test_analyze_equals_the_raw_grpc_response(self):
        # The interface checks use: the typed call's field equals the raw
        # stub's on the same request.
        a = self.client.analyze(model="llama-3-8b",
                                hardware="nvidia-h100-sxm-80gb", batch=8,
                                prompt_tokens=1024, generated_tokens=128)
        pb = self.rl.pb
        raw = self.client.stub.Analyze(pb.AnalyzeRequest(
            model=pb.ModelSpec(catalog_id="llama-3-8b"),
            hardware=pb.HardwareSpec(platform_id="nvidia-h100-sxm-80gb"),
            workload=pb.Workload(batch=8, prompt_tokens=1024,
                                 generated_tokens=128)), timeout=60)
        self.assertGreater(raw.result.decode_tokens_per_second_total, 0)
        self.assertEqual(a.decode_tokens_per_second_total,
                         raw.result.decode_tokens_per_second_total)
        self.assertEqual(a.response, raw)
        # Memory-bound batch-8 decode: at most 8 / the roofline TPOT
        # ((15,009,849,344 + 8 x 1088 x 131,072) B / 3.352e12 B/s = 4.82 ms
        # -> 1659 tok/s); calibrated, so slower than that bound.
        self.assertLessEqual(a.decode_tokens_per_second_total,
                             8 / decode_roofline_tpot(H100_SXM_BW, 8, 1024,
                                                      128) * 1.001)

    def test_sweep_streams_points_in_stable_order(self):
        points = list(self.client.sweep(
            models="llama-3-8b", hardware=["nvidia-h100-sxm-80gb", "amd-mi300x"],
            batch_sizes=[1, 8], prompt_tokens=[512], generated_tokens=[128],
            pure_roofline=True))
        self.assertEqual([p.index for p in points], [0, 1, 2, 3])
        self.assertTrue(all(p.total_points == 4 for p in points))
        self.assertTrue(all(not p.HasField("error") for p in points))
        # i = h * 2 + b: H100 b1, H100 b8, MI300X b1, MI300X b8.
        expected = [("nvidia-h100-sxm-80gb", 1, H100_SXM_BW),
                    ("nvidia-h100-sxm-80gb", 8, H100_SXM_BW),
                    ("amd-mi300x", 1, MI300X_BW), ("amd-mi300x", 8, MI300X_BW)]
        for point, (hw, batch, bw) in zip(points, expected):
            s = point.summary
            self.assertEqual((s.hardware_id, s.batch), (hw, batch))
            tpot = decode_roofline_tpot(bw, batch, 512, 128)
            # Memory bound: batch / TPOT tok/s, within 1% below the roofline.
            self.assertLessEqual(s.decode_tokens_per_second_total,
                                 batch / tpot * 1.001, hw)
            self.assertGreaterEqual(s.decode_tokens_per_second_total,
                                    batch / tpot / 1.01, hw)
            self.assertEqual(s.bound, "memory")

    def test_sweep_closed_early_cancels(self):
        # 64 batch sizes; take one point and leave: the iterator cancels the
        # call and the channel stays usable.
        with self.client.sweep(models="llama-3-8b",
                               hardware="nvidia-h100-sxm-80gb",
                               batch_sizes=list(range(1, 65)),
                               prompt_tokens=[512],
                               generated_tokens=[128]) as points:
            first = next(points)
        self.assertEqual(first.index, 0)
        self.assertEqual(first.total_points, 64)
        self.assertEqual(self.client.get_model("llama-3-8b").id, "llama-3-8b")

    def test_catalogs(self):
        hardware = self.client.list_hardware()
        ids = [h.id for h in hardware]
        self.assertEqual(ids, sorted(ids))
        self.assertIn("nvidia-h100-sxm-80gb", ids)
        self.assertTrue(all(h.family == "amd"
                            for h in self.client.list_hardware("amd")))
        self.assertTrue(any(p.loaded for p in self.client.list_plugins()))
        h100 = self.client.get_hardware("nvidia-h100-sxm-80gb")
        # hardware_specs.csv: nvidia-h100-sxm-80gb mem_bw_gbs 3352.
        self.assertIn(H100_SXM_BW, [t.read_bandwidth_bytes_per_second
                                    for t in h100.tiers])
        models = self.client.list_models()
        self.assertIn("llama-3-8b", [m.id for m in models])
        m = self.client.get_model("llama-3-8b")
        # 32 layers, 8 KV heads (config.json of meta-llama/Meta-Llama-3-8B).
        self.assertEqual((m.num_layers, m.num_kv_heads), (32, 8))

    def test_explore_streams_the_front_and_a_summary(self):
        # Batch-1 decode of Llama-3-8B is memory-bound on every op (its
        # intensity is ~1 FLOP/byte, the H100's ridge point ~250 even at
        # 4000 GB/s), so with the pure roofline decode tok/s is exactly
        # proportional to the bandwidth axis: 1000 -> 2000 -> 4000 GB/s
        # doubles it twice.
        messages = list(self.client.explore(
            model="llama-3-8b", hardware="nvidia-h100-sxm-80gb", batch=1,
            prompt_tokens=512, generated_tokens=64,
            vary=["bandwidth_gbs=1000,2000,4000"],
            objectives=["decode_tok_s:max", "j_per_token:min"],
            include_all=True))
        kinds = [m.WhichOneof("kind") for m in messages]
        self.assertEqual(kinds[-1], "summary")
        points = sorted((m.point for m in messages if m.HasField("point")),
                        key=lambda p: p.index)
        self.assertEqual(len(points), 3)
        self.assertEqual([p.axis_values[0] for p in points],
                         ["1000", "2000", "4000"])
        tok_s = [p.objectives[0] for p in points]
        self.assertAlmostEqual(tok_s[1] / tok_s[0], 2.0, delta=2e-3)
        self.assertAlmostEqual(tok_s[2] / tok_s[1], 2.0, delta=2e-3)
        self.assertTrue(all(p.feasible and p.fits for p in points))
        self.assertEqual(messages[-1].summary.evaluated, 3)

    def test_plan_ranks_deployments_and_names_bad_fields(self):
        plan = self.client.plan(
            model="llama-3-8b", hardware=["nvidia-h100-sxm-80gb"], rate=2,
            prompt_tokens=512, generated_tokens=128, ttft_p90_seconds=1.0,
            tpot_p90_seconds=0.05, tensor_parallel=[1, 2])
        self.assertTrue(plan.headline)
        met = [d for d in plan.deployments if d.feasible and d.meets_slo]
        self.assertTrue(met)
        costs = [d.usd_per_mtoken for d in met if d.HasField("usd_per_mtoken")]
        self.assertEqual(costs, sorted(costs))
        for d in met:
            self.assertLessEqual(d.ttft_p90_seconds, 1.0)
            self.assertLessEqual(d.tpot_p90_seconds, 0.05)
        with self.assertRaises(self.rl.RidgelineError) as ctx:
            self.client.plan(model="llama-3-8b",
                             hardware=["nvidia-h100-sxm-80gb"], rate=0,
                             prompt_tokens=512, generated_tokens=128,
                             ttft_p90_seconds=1.0, tpot_p90_seconds=0.05)
        self.assertEqual(ctx.exception.code,
                         self.rl._client.grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("rate", ctx.exception.field_path or
                      ctx.exception.message)

    def test_simulate_one_client_at_a_time_is_the_decode_roofline(self):
        # A closed loop of one client: each request runs alone, admitted
        # the moment the previous one finishes, so nothing queues and
        # every decode step is a batch-1 step at the roofline (no
        # calibration asked for).
        r = self.client.simulate(model="llama-3-8b",
                                 hardware="nvidia-h100-sxm-80gb",
                                 concurrency=1, prompt_tokens=512,
                                 generated_tokens=128, requests=20)
        self.assertIsInstance(r, self.rl.pb.SimulateResponse)
        self.assertEqual(r.requests, 20)
        self.assertEqual(r.profile, "")
        # TPOT: the batch-1 decode step reads 15.01 GB of weights plus the
        # KV cache at the mean context (512 + 64 tokens x 131,072 B) over
        # 3352 GB/s = 4.500 ms; the engine adds activations and logits
        # (< 1 %).
        tpot = decode_roofline_tpot(H100_SXM_BW, 1, 512, 128)
        self.assertAlmostEqual(r.tpot.p50_seconds / tpot, 1.0, delta=0.01)
        self.assertEqual(r.queue.p90_seconds, 0.0)
        # The timeline: one bucket per request (min(200, 20)), the run's
        # span, every arrival counted, one sequence running throughout,
        # none waiting, and KV use = one request's reservation (512 + 128
        # - 1 = 639 tokens, in 16-token blocks: 640) / capacity.
        t = r.timeline
        self.assertEqual(len(t.arrivals), 20)
        for series in (t.ttft_p50_seconds, t.ttft_p90_seconds,
                       t.tpot_p90_seconds, t.e2e_p90_seconds, t.queue_mean,
                       t.running_mean, t.kv_usage_mean):
            self.assertEqual(len(series), 20)
        self.assertAlmostEqual(t.bucket_seconds * 20, r.duration_seconds,
                               delta=1e-9 * r.duration_seconds)
        self.assertEqual(sum(t.arrivals), 20)
        for k in range(20):
            self.assertAlmostEqual(t.running_mean[k], 1.0, delta=1e-6)
            self.assertEqual(t.queue_mean[k], 0.0)
            self.assertAlmostEqual(t.kv_usage_mean[k],
                                   640.0 / r.kv_capacity_tokens, delta=1e-9)
        # The typed method sends what the raw stub would.
        raw = self.client.stub.Simulate(self.rl.pb.SimulateRequest(
            model=self.rl.pb.ModelSpec(catalog_id="llama-3-8b"),
            hardware=self.rl.pb.HardwareSpec(
                platform_id="nvidia-h100-sxm-80gb"),
            traffic=self.rl.pb.SimulateTraffic(
                concurrency=1,
                prompt_tokens=self.rl.pb.TokenLengths(fixed=512),
                generated_tokens=self.rl.pb.TokenLengths(fixed=128)),
            requests=20))
        self.assertEqual(raw, r)
        # A uniform range and a histogram are lengths too.
        u = self.client.simulate(model="llama-3-8b",
                                 hardware="nvidia-h100-sxm-80gb", rate=2,
                                 prompt_tokens=(256, 768),
                                 generated_tokens={64: 1, 128: 3},
                                 requests=50, seed=3)
        self.assertEqual(u.requests, 50)
        self.assertEqual(sum(u.timeline.arrivals), 50)

    def test_simulate_reuses_prefixes(self):
        # 40 prompts of 1024 tokens, the first 512 shared, arriving 1 s
        # apart (each after the one before has prefilled): every one but
        # the first finds the 512 / 16 = 32 shared blocks.
        r = self.client.simulate(model="llama-3-8b",
                                 hardware="nvidia-h100-sxm-80gb",
                                 arrival_seconds=[float(i) for i in range(40)],
                                 prompt_tokens=1024, generated_tokens=16,
                                 shared_prefix_tokens=512)
        self.assertEqual(r.prefill_tokens_saved, 39 * 512)
        self.assertAlmostEqual(r.prefix_hit_rate, 39 * 512 / (40 * 1024),
                               delta=1e-12)
        off = self.client.simulate(model="llama-3-8b",
                                   hardware="nvidia-h100-sxm-80gb",
                                   arrival_seconds=[float(i)
                                                    for i in range(40)],
                                   prompt_tokens=1024, generated_tokens=16,
                                   shared_prefix_tokens=512,
                                   prefix_caching=False)
        self.assertEqual(off.prefill_tokens_saved, 0)
        self.assertGreater(off.ttft.p50_seconds, r.ttft.p50_seconds)
        # Two sessions of 3 turns, 10 s apart, 1 s of think time: turn k
        # finds the KV of the turn before it (its prompt and 15 of its 16
        # generated tokens) in whole blocks: 1039 -> 1024, 2079 -> 2064.
        s = self.client.simulate(model="llama-3-8b",
                                 hardware="nvidia-h100-sxm-80gb",
                                 rate=0.1, requests=6, prompt_tokens=1024,
                                 generated_tokens=16, turns=3,
                                 think_time_seconds=1.0)
        self.assertEqual(s.prefill_tokens_saved, 2 * (1024 + 2064))
        # Host offload: 30 s think times outlast the KV cache a 0.25 memory
        # fraction leaves (35 k tokens); the part's host DRAM tier keeps
        # every session.
        kw = dict(model="llama-3-8b", hardware="nvidia-h100-sxm-80gb",
                  rate=2, requests=400, prompt_tokens=1024,
                  generated_tokens=128, turns=4, think_time_seconds=30.0,
                  memory_fraction=0.25)
        off = self.client.simulate(kv_offload="off", **kw)
        host = self.client.simulate(kv_offload="host", **kw)
        self.assertGreater(host.prefix_hit_rate, off.prefix_hit_rate)
        self.assertGreater(host.kv_offload_hit_rate, 0)
        self.assertEqual([t.name for t in host.kv_tiers],
                         ["host DRAM over PCIe 5.0 x16"])
        self.assertEqual(len(off.kv_tiers), 0)
        # Preemption by recompute on a KV cache too small for the outputs.
        lazy = self.client.simulate(model="llama-3-8b",
                                    hardware="nvidia-h100-sxm-80gb",
                                    concurrency=64, requests=128,
                                    prompt_tokens=1024,
                                    generated_tokens=2048,
                                    memory_fraction=0.25,
                                    preemption="recompute")
        self.assertGreater(lazy.preemptions, 0)
        with self.assertRaises(self.rl.RidgelineError) as ctx:
            self.client.simulate(model="llama-3-8b",
                                 hardware="nvidia-h100-sxm-80gb", rate=1,
                                 prompt_tokens=512, generated_tokens=16,
                                 turns=0)
        self.assertEqual(ctx.exception.field_path, "traffic.sessions.turns")

    def test_simulate_names_bad_fields(self):
        with self.assertRaises(self.rl.RidgelineError) as ctx:
            self.client.simulate(model="llama-3-8b",
                                 hardware="nvidia-h100-sxm-80gb", rate=0,
                                 prompt_tokens=512, generated_tokens=128)
        self.assertEqual(ctx.exception.code,
                         self.rl._client.grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(ctx.exception.field_path, "traffic.rate")
        with self.assertRaises(ValueError):
            self.client.simulate(model="llama-3-8b",
                                 hardware="nvidia-h100-sxm-80gb", rate=1,
                                 concurrency=2, prompt_tokens=512,
                                 generated_tokens=128)
        with self.assertRaises(TypeError):
            self.client.simulate(model="llama-3-8b",
                                 hardware="nvidia-h100-sxm-80gb", rate=1,
                                 prompt_tokens="512", generated_tokens=128)

    def test_simulate_disaggregated_prices_the_kv_transfer(self):
        # One client: each request alone, so its KV transfer never queues.
        # Llama-3-8B bf16 keeps 32 layers x (K + V) x 8 KV heads x 128 x
        # 2 B = 131,072 B a token; 512 tokens = 67,108,864 B from one
        # H100 to another over NVLink4 (900 GB/s both directions, one way
        # 450e9 B/s; no latency stated): 149.1 us.
        r = self.client.simulate(model="llama-3-8b", hardware=None,
                                 concurrency=1, prompt_tokens=512,
                                 generated_tokens=16, requests=3,
                                 prefill={"hardware": "nvidia-h100-sxm-80gb"},
                                 decode={"hardware": "nvidia-h100-sxm-80gb",
                                         "replicas": 2},
                                 router="least-loaded")
        self.assertEqual(r.mode, "disaggregated")
        self.assertEqual(r.kv_link, "scale-up")
        self.assertAlmostEqual(r.kv_transfer_p50_seconds,
                               67108864 / 450e9, delta=1e-12)
        self.assertEqual([p.name for p in r.pools], ["prefill", "decode"])
        self.assertEqual(r.pools[1].replicas, 2)
        for p in r.pools:
            self.assertGreater(p.utilization, 0)
            self.assertLessEqual(p.utilization, 1)
        with self.assertRaises(self.rl.RidgelineError) as ctx:
            self.client.simulate(model="llama-3-8b", hardware=None,
                                 rate=1, prompt_tokens=512,
                                 generated_tokens=16,
                                 decode={"hardware": "nvidia-h100-sxm-80gb"})
        self.assertEqual(ctx.exception.field_path, "prefill")
        with self.assertRaises(self.rl.RidgelineError) as ctx:
            self.client.simulate(model="llama-3-8b",
                                 hardware="nvidia-h100-sxm-80gb", rate=1,
                                 prompt_tokens=512, generated_tokens=16,
                                 replicas=2, router="random")
        self.assertEqual(ctx.exception.field_path, "router")

    def test_errors_name_the_code_and_field_path(self):
        RidgelineError = self.rl.RidgelineError
        grpc = self.rl._client.grpc
        with self.assertRaises(RidgelineError) as ctx:
            self.analyze("nvidia-h100-sxm-80gb", 0, 512, 128)
        self.assertEqual(ctx.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(ctx.exception.field_path, "workload.batch")
        self.assertIn("65536", ctx.exception.message)  # the allowed range
        self.assertIn(("ridgeline-field-path", "workload.batch"),
                      tuple(ctx.exception.__cause__.trailing_metadata()))
        with self.assertRaises(RidgelineError) as ctx:
            self.analyze("nvidia-h100-sxm", 1, 512, 128)
        self.assertEqual(ctx.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertIn("nvidia-h100-sxm-80gb", ctx.exception.message)
        with self.assertRaises(RidgelineError) as ctx:
            self.client.get_model("no-such-model")
        self.assertEqual(ctx.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertEqual(ctx.exception.field_path, "id")
        # Here the path also travels as trailing metadata
        # (ridgeline-field-path), which the raw call carries.
        self.assertIn(("ridgeline-field-path", "id"),
                      tuple(ctx.exception.__cause__.trailing_metadata()))
        # A sweep that fails as a whole raises from the iterator.
        with self.assertRaises(RidgelineError) as ctx:
            list(self.client.sweep(models="llama-3-8b",
                                   hardware="nvidia-h100-sxm-80gb",
                                   batch_sizes=[0]))
        self.assertEqual(ctx.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertTrue(ctx.exception.field_path.startswith("batch_sizes"),
                        ctx.exception.message)

    def test_field_path_parsing_of_server_message_shapes(self):
        from ridgeline._errors import field_path_of
        cases = {
            "workload.batch: must be in [1, 65536]; got 0": "workload.batch",
            "hardware[2].description.tiers[0].capacity_bytes: must be > 0":
                "hardware[2].description.tiers[0].capacity_bytes",
            "steps[3].sequences[17].context_tokens: must be in [0, 1e7]":
                "steps[3].sequences[17].context_tokens",
            "id: unknown model \"x\"; closest: llama-3-8b": "id",
            # Not a field path: prose, or an index without a name.
            "unknown hardware: nvidia": None,
            "[2].x: bad": None,
            "": None,
        }
        for message, path in cases.items():
            self.assertEqual(field_path_of(message), path, message)

    def test_trailing_metadata_path_wins_over_the_message(self):
        grpc = self.rl._client.grpc

        class Call(grpc.RpcError):  # the three methods a failed call has
            def __init__(self, metadata):
                self.metadata = metadata

            def code(self):
                return grpc.StatusCode.INVALID_ARGUMENT

            def details(self):
                return "workload.batch: must be in [1, 65536]; got 0"

            def trailing_metadata(self):
                return self.metadata

        from_call = self.rl.RidgelineError.from_rpc_error
        e = from_call(Call((("ridgeline-field-path", "workload"),)))
        self.assertEqual(e.field_path, "workload")
        self.assertEqual(e.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(from_call(Call(())).field_path, "workload.batch")

    def test_deadline_exceeded_is_a_ridgeline_error(self):
        # A deadline already past (gRPC rounds deadlines up to whole
        # milliseconds, so a tiny positive one can still be met by a fast
        # server on a warm channel).
        with self.assertRaises(self.rl.RidgelineError) as ctx:
            self.client.analyze(model="llama-3-8b",
                                hardware="nvidia-h100-sxm-80gb", timeout=-1.0)
        self.assertEqual(ctx.exception.code,
                         self.rl._client.grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertIsNone(ctx.exception.field_path)

    def test_wait_ready_waits_out_a_server_loading_its_plugins(self):
        import grpc
        import ridgeline_server
        # Loading for 1.5 s: a call now is UNAVAILABLE; wait_ready returns
        # once the plugins are in, and the call then answers.
        loading = ridgeline_server.ServerProcess(
            ARGS.server_bin, ARGS.plugin_dir, ARGS.profile_dir,
            extra_args=["--plugin-load-delay-ms=1500"], wait_serving=False)
        try:
            with self.rl.Client(loading.address, timeout=10) as c:
                with self.assertRaises(self.rl.RidgelineError) as ctx:
                    c.list_hardware()
                self.assertEqual(ctx.exception.code,
                                 grpc.StatusCode.UNAVAILABLE)
                self.assertIn("still loading", str(ctx.exception))
                c.wait_ready(timeout=30)
                self.assertIn("nvidia-h100-sxm-80gb",
                              [h.id for h in c.list_hardware()])
        finally:
            self.assertEqual(loading.stop(), 0)
        # Past its timeout it raises the last UNAVAILABLE (nothing listens
        # on port 1 of loopback).
        with self.rl.Client("127.0.0.1:1") as c:
            with self.assertRaises(self.rl.RidgelineError) as ctx:
                c.wait_ready(timeout=0.5)
            self.assertEqual(ctx.exception.code, grpc.StatusCode.UNAVAILABLE)


if __name__ == "__main__":
    ARGS, rest = parse_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
