"""Client: one channel to a ridgeline-server and a typed method per RPC.

Results are the ridgeline.v1 proto messages (fields as documented in
proto/ridgeline/v1/*.proto); analyze() wraps its response in Analysis so the
AnalysisResult's fields read directly. Every failure raises RidgelineError."""

import time

import grpc

from ridgeline import _requests as rq
from ridgeline import _step
from ridgeline._errors import RidgelineError
from ridgeline.v1 import ridgeline_pb2 as pb
from ridgeline.v1 import ridgeline_pb2_grpc as pb_grpc


def open_channel(target, credentials=None, options=None):
    """A plaintext channel, or a TLS one with `credentials`
    (grpc.ssl_channel_credentials(...))."""
    options = list(options or ())
    if credentials is None:
        return grpc.insecure_channel(target, options=options)
    return grpc.secure_channel(target, credentials, options=options)


def call(method, request, timeout, metadata):
    try:
        return method(request, timeout=timeout, metadata=metadata)
    except grpc.RpcError as e:
        raise RidgelineError.from_rpc_error(e) from e


class Analysis:
    """An AnalyzeResponse read as its AnalysisResult: `a.ttft_seconds`,
    `a.decode_tokens_per_second_total`, ... are the result's fields, plus
    `upper_bound` and `calibration` of the response and the raw `response`."""

    __slots__ = ("response",)

    def __init__(self, response):
        self.response = response

    @property
    def result(self):
        return self.response.result

    @property
    def upper_bound(self):
        return self.response.upper_bound

    @property
    def calibration(self):
        return self.response.calibration

    def __getattr__(self, name):
        return getattr(self.response.result, name)

    def __repr__(self):
        r = self.response.result
        return ("Analysis(model_id=%r, hardware_id=%r, ttft_seconds=%g, "
                "tpot_mean_seconds=%g, decode_tokens_per_second_total=%g, "
                "upper_bound=%s)" % (r.model_id, r.hardware_id, r.ttft_seconds,
                                     r.tpot_mean_seconds,
                                     r.decode_tokens_per_second_total,
                                     self.response.upper_bound))


class _Stream:
    """Iterator over a server stream that raises RidgelineError and cancels
    the call when closed early (or garbage-collected)."""

    def __init__(self, call_):
        self._call = call_

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return next(self._call)
        except grpc.RpcError as e:
            raise RidgelineError.from_rpc_error(e) from e

    def cancel(self):
        self._call.cancel()

    close = cancel

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cancel()


class Client:
    """A connection to one ridgeline-server.

        client = ridgeline.Client("127.0.0.1:50051")
        a = client.analyze(model="llama-3-8b", hardware="nvidia-h100-sxm-80gb",
                           batch=8, prompt_tokens=1024, generated_tokens=128)

    credentials: None (plaintext) or grpc.ChannelCredentials (TLS).
    timeout: default deadline in seconds of every call (None: no deadline);
    each method's `timeout=` overrides it. metadata: sent with every call.
    channel: an existing grpc.Channel to use instead of `target`.
    """

    def __init__(self, target=None, credentials=None, *, timeout=None,
                 options=None, metadata=None, channel=None):
        if channel is None:
            if not target:
                raise ValueError("Client: target (host:port) is required")
            channel = open_channel(target, credentials, options)
            self._own_channel = True
        else:
            self._own_channel = False
        self.target = target
        self.channel = channel
        self.stub = pb_grpc.RidgelineServiceStub(channel)
        self.timeout = timeout
        self.metadata = tuple(metadata or ())

    def close(self):
        if self._own_channel:
            self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _unary(self, name, request, timeout):
        return call(getattr(self.stub, name), request,
                    self.timeout if timeout is None else timeout,
                    self.metadata)

    def _stream(self, name, request, timeout):
        method = getattr(self.stub, name)
        try:
            c = method(request, timeout=self.timeout if timeout is None
                       else timeout, metadata=self.metadata)
        except grpc.RpcError as e:
            raise RidgelineError.from_rpc_error(e) from e
        return _Stream(c)

    # --- Startup -----------------------------------------------------------

    def wait_ready(self, timeout=30.0):
        """Returns once the server answers Ridgeline calls. A server that is
        starting answers UNAVAILABLE (not listening yet, or still loading its
        plugins): retried every 0.1 s for up to `timeout` seconds, after
        which the last UNAVAILABLE is raised. Any other error at once."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                self._unary("ListHardware", pb.ListHardwareRequest(),
                            max(min(left, 5.0), 0.001))
                return
            except RidgelineError as e:
                if e.code not in (grpc.StatusCode.UNAVAILABLE,
                                  grpc.StatusCode.DEADLINE_EXCEEDED) or \
                        time.monotonic() + 0.1 >= deadline:
                    raise
            time.sleep(0.1)

    # --- One scenario ----------------------------------------------------

    def analyze_request(self, model, hardware, batch=None, prompt_tokens=None,
                        generated_tokens=None, *, weights=None,
                        activations=None, kv_cache=None, weights_tier=None,
                        kv_cache_tier=None, activations_tier=None,
                        flash_attention=None, mla_absorbed=None,
                        suggestions=None, pure_roofline=None,
                        gemv_max_tokens=None, fp16_accumulation=None,
                        profile=None, framework=None, economics=None,
                        view=None, tensor_parallel=None, speculative=None,
                        acceptance=None, lora_rank=None, lora_modules=None,
                        lora_adapters=None, lora_cold_fraction=None):
        """The AnalyzeRequest analyze() sends (None = server default).
        speculative: "draft:MODEL:k", "mtp:k" or "eagle:k" with acceptance
        (a rate or per-position rates); lora_*: as the CLI's --lora-*."""
        return pb.AnalyzeRequest(
            model=rq.model_spec(model), hardware=rq.hardware_spec(hardware),
            workload=rq.only_set(pb.Workload(), batch=batch,
                             prompt_tokens=prompt_tokens,
                             generated_tokens=generated_tokens),
            formats=rq.formats(weights, activations, kv_cache),
            placement=rq.placement(weights_tier, kv_cache_tier,
                                   activations_tier),
            options=rq.options(flash_attention, mla_absorbed, suggestions,
                               pure_roofline, gemv_max_tokens,
                               fp16_accumulation, speculative, acceptance,
                               lora_rank, lora_modules, lora_adapters,
                               lora_cold_fraction),
            calibration=rq.calibration(profile, framework),
            economics=rq.economics(economics), view=rq.view(view),
            parallelism=rq.parallelism(tensor_parallel))

    def analyze(self, model=None, hardware=None, batch=None,
                prompt_tokens=None, generated_tokens=None, *, request=None,
                timeout=None, **kwargs):
        """Analyze one scenario -> Analysis (the AnalysisResult's fields,
        plus upper_bound and calibration). Keyword arguments as
        analyze_request(); or pass a ready AnalyzeRequest as `request`."""
        if request is None:
            request = self.analyze_request(model, hardware, batch,
                                           prompt_tokens, generated_tokens,
                                           **kwargs)
        return Analysis(self._unary("Analyze", request, timeout))

    def sweep(self, models=None, hardware=None, batch_sizes=(),
              prompt_tokens=(), generated_tokens=(), *, formats=(),
              request=None, timeout=None, weights_tier=None,
              kv_cache_tier=None, activations_tier=None, flash_attention=None,
              mla_absorbed=None, suggestions=None, pure_roofline=None,
              gemv_max_tokens=None, fp16_accumulation=None, profile=None,
              framework=None, economics=None, shard_index=0, shard_count=0,
              include_full_result=False, result_view=None,
              tensor_parallel=None):
        """The cartesian product as an iterator of SweepPoint messages in the
        server's stable order. A failed point carries `error` (the stream
        goes on); a failed sweep raises RidgelineError. Closing the iterator
        (or leaving a `with` block) cancels the server's work."""
        if request is None:
            def many(x, make):
                x = [x] if isinstance(x, (str, int)) else list(x or ())
                return [make(v) for v in x]
            request = pb.SweepRequest(
                models=many(models, rq.model_spec),
                hardware=many(hardware, rq.hardware_spec),
                batch_sizes=many(batch_sizes, int),
                prompt_tokens=many(prompt_tokens, int),
                generated_tokens=many(generated_tokens, int),
                formats=[rq.formats_entry(f) for f in formats],
                placement=rq.placement(weights_tier, kv_cache_tier,
                                       activations_tier),
                options=rq.options(flash_attention, mla_absorbed, suggestions,
                                   pure_roofline, gemv_max_tokens,
                                   fp16_accumulation),
                calibration=rq.calibration(profile, framework),
                economics=rq.economics(economics), shard_index=shard_index,
                shard_count=shard_count,
                include_full_result=include_full_result,
                result_view=rq.view(result_view),
                parallelism=rq.parallelism(tensor_parallel))
        return self._stream("Sweep", request, timeout)

    def analyze_kernel(self, request, *, timeout=None):
        """AnalyzeKernel with a ready AnalyzeKernelRequest ->
        AnalyzeKernelResponse."""
        return self._unary("AnalyzeKernel", request, timeout)

    # --- Steps (schedulers) ---------------------------------------------

    def step_time(self, model, hardware, steps, *, per_op=False,
                  timeout=None, check=True, **scenario_kwargs):
        """The time of each step of a scenario -> StepTimeResponse (`steps`:
        one StepTimeResult per step, in order; `seconds` is the step's time).
        `steps`: a list of steps, each [(context_tokens, new_tokens), ...].
        Scenario keyword arguments as ridgeline.scenario(). check=True raises
        RidgelineError for the first step the server answered with an
        error; check=False leaves error_code / error_message to the caller."""
        request = pb.StepTimeRequest(
            scenario=_step.scenario(model, hardware, **scenario_kwargs),
            steps=[_step.step_message(s) for s in steps], per_op=per_op)
        response = self._unary("StepTime", request, timeout)
        _step.warn_spilled(response.spilled)
        if check:
            for result in response.steps:
                _step.check_result(result)
        return response

    def step_timer(self, model, hardware, **kwargs):
        """A StepTimer on this client's channel (see StepTimer)."""
        return _step.StepTimer(self, model, hardware, **kwargs)

    # --- Many scenarios ------------------------------------------------------

    def explore(self, model=None, hardware=None, vary=(), objectives=(),
                constraints=(), *, batch=None, prompt_tokens=None,
                generated_tokens=None, include_all=False, shard_index=0,
                shard_count=0, nsga2_generations=0, nsga2_population=0,
                nsga2_seed=0, request=None, timeout=None):
        """Design-space exploration as an iterator of ExploreResponse
        messages in stream order: progress, then the points (the exact
        Pareto front, or all with include_all), then one summary. `vary`:
        axes "NAME=VALUES" ("bandwidth_gbs=500:8000:9"); `objectives`:
        "METRIC:max|min"; `constraints`: "tpot_ms<=50". Closing the iterator
        cancels the server's work. See docs/explore.md."""
        if request is None:
            request = pb.ExploreRequest(
                model=rq.model_spec(model),
                hardware=rq.hardware_spec(hardware),
                workload=rq.only_set(pb.Workload(), batch=batch,
                                     prompt_tokens=prompt_tokens,
                                     generated_tokens=generated_tokens),
                vary=list(vary), objectives=list(objectives),
                constraints=list(constraints), include_all=include_all,
                shard_index=shard_index, shard_count=shard_count,
                nsga2_generations=nsga2_generations,
                nsga2_population=nsga2_population, nsga2_seed=nsga2_seed)
        return self._stream("Explore", request, timeout)

    def plan(self, model=None, hardware=(), *, rate=None, prompt_tokens=None,
             generated_tokens=None, ttft_p90_seconds=None,
             tpot_p90_seconds=None, tensor_parallel=(), framework=None,
             profile=None, disaggregated=None, prefill_hardware=(),
             decode_hardware=(), prefill_tensor_parallel=(),
             decode_tensor_parallel=(), max_pool_replicas=None,
             request=None, timeout=None):
        """Capacity planning -> PlanResponse: every candidate deployment
        (hardware x tensor parallelism x formats) sized for `rate`
        requests/s at fixed prompt / generated lengths and the p90 SLOs,
        ranked by $/Mtoken (`deployments`, `headline`). `disaggregated`
        ("auto" by default, "on", "off") adds prefill / decode pool pairs
        (`prefill_hardware`, `decode_hardware` and their tensor-parallel
        lists default to `hardware` / `tensor_parallel`); such rows have
        `mode` "disaggregated" and the pool fields set. See
        docs/serving.md "Disaggregated pools"."""
        if request is None:
            def ids(h):
                return [h] if isinstance(h, str) else list(h)
            hardware = ids(hardware)
            request = pb.PlanRequest(
                model=rq.model_spec(model),
                traffic=pb.PlanTraffic(
                    rate=rate or 0,
                    prompt_tokens=pb.TokenLengths(fixed=prompt_tokens or 0),
                    generated_tokens=pb.TokenLengths(
                        fixed=generated_tokens or 0)),
                slo=pb.PlanSlo(ttft_p90_seconds=ttft_p90_seconds or 0,
                               tpot_p90_seconds=tpot_p90_seconds or 0),
                candidates=pb.PlanCandidates(
                    hardware=[rq.hardware_spec(h) for h in hardware],
                    tensor_parallel=[int(t) for t in tensor_parallel],
                    calibration=rq.calibration(profile, framework),
                    disaggregated=disaggregated or "",
                    prefill_hardware=[rq.hardware_spec(h)
                                      for h in ids(prefill_hardware)],
                    decode_hardware=[rq.hardware_spec(h)
                                     for h in ids(decode_hardware)],
                    prefill_tensor_parallel=[
                        int(t) for t in prefill_tensor_parallel],
                    decode_tensor_parallel=[
                        int(t) for t in decode_tensor_parallel]))
            if max_pool_replicas is not None:
                request.candidates.max_pool_replicas = max_pool_replicas
        return self._unary("Plan", request, timeout)

    def simulate(self, model=None, hardware=None, *, rate=None,
                 concurrency=None, arrival_seconds=None, prompt_tokens=None,
                 generated_tokens=None, requests=None, seed=None,
                 weights=None, activations=None, kv_cache=None,
                 tensor_parallel=None, pipeline_parallel=None,
                 framework=None, profile=None, memory_fraction=None,
                 max_num_seqs=None, max_num_batched_tokens=None,
                 block_size=None, replicas=None, router=None, prefill=None,
                 decode=None, kv_transfer_overlap=None, prefix_caching=None,
                 kv_offload=None, preemption=None, shared_prefix_tokens=None,
                 turns=None,
                 think_time_seconds=None, request=None, timeout=None):
        """The online serving simulation of one replica, `replicas`
        aggregated replicas behind `router` ("round-robin", "least-loaded",
        "power-of-two", "prefix-affinity"), or a disaggregated deployment: `prefill` and
        `decode` as dicts {"hardware": ID, "tensor_parallel": N,
        "replicas": N} (then `hardware` may be None) -> SimulateResponse:
        latency percentiles (`ttft`, `tpot`, `itl`, `e2e`, `queue`: p50 /
        p90 / p99 / mean seconds), throughput, KV use, and `timeline` (at
        most 200 buckets of the run: latencies by arrival time, queue,
        running sequences, KV use). Arrivals: exactly one of `rate`
        (Poisson, requests/s), `concurrency` (closed loop of clients) or
        `arrival_seconds` (a trace). Lengths: an int, a (min, max) tuple
        or a {tokens: weight} dict. Reuse: `prefix_caching` (default on),
        `shared_prefix_tokens` (a system prompt every prompt starts with),
        `turns` and `think_time_seconds` (multi-turn sessions: each turn's
        prompt is the conversation so far plus `prompt_tokens`; `rate`
        then starts sessions), `kv_offload` ("off", "host" or "all": where
        evicted cached blocks go), `preemption` ("off", "recompute" or "swap");
        the response's `preemptions`, `prefix_hit_rate`,
        `prefill_tokens_saved`, `kv_offload_hit_rate` and `kv_tiers` say
        what the cache saved. Unset keywords
        take the server's defaults (1000 requests, seed 1, vLLM's
        scheduler limits). See docs/serving.md."""
        if request is None:
            given = [k for k, v in (("rate", rate),
                                    ("concurrency", concurrency),
                                    ("arrival_seconds", arrival_seconds))
                     if v is not None]
            if len(given) != 1:
                raise ValueError("simulate: give exactly one of rate, "
                                 "concurrency or arrival_seconds, not %s"
                                 % (given or "none"))
            if prompt_tokens is None or generated_tokens is None:
                raise ValueError("simulate: prompt_tokens and "
                                 "generated_tokens are required")
            traffic = pb.SimulateTraffic(
                prompt_tokens=rq.token_lengths(prompt_tokens,
                                               "prompt_tokens"),
                generated_tokens=rq.token_lengths(generated_tokens,
                                                  "generated_tokens"))
            if rate is not None:
                traffic.rate = rate
            elif concurrency is not None:
                traffic.concurrency = concurrency
            else:
                traffic.trace.arrival_seconds.extend(arrival_seconds)
            if shared_prefix_tokens is not None:
                traffic.shared_prefix_tokens = shared_prefix_tokens
            if turns is not None or think_time_seconds is not None:
                traffic.sessions.turns = 1 if turns is None else turns
                traffic.sessions.think_time_seconds = think_time_seconds or 0
            request = pb.SimulateRequest(
                model=rq.model_spec(model),
                formats=rq.formats(weights, activations, kv_cache),
                parallelism=rq.only_set(pb.Parallelism(),
                                        tensor_parallel=tensor_parallel,
                                        pipeline_parallel=pipeline_parallel),
                calibration=rq.calibration(profile, framework),
                serving=rq.serving_options(memory_fraction, max_num_seqs,
                                           max_num_batched_tokens,
                                           block_size, prefix_caching,
                                           kv_offload, preemption),
                traffic=traffic)
            if hardware is not None:
                request.hardware.CopyFrom(rq.hardware_spec(hardware))
            if requests is not None:
                request.requests = requests
            if seed is not None:
                request.seed = seed
            if replicas is not None:
                request.replicas = replicas
            if router is not None:
                request.router = router
            if kv_transfer_overlap is not None:
                request.kv_transfer_overlap = kv_transfer_overlap
            for name, pool in (("prefill", prefill), ("decode", decode)):
                if pool is None:
                    continue
                unknown = set(pool) - {"hardware", "tensor_parallel",
                                       "replicas"}
                if unknown:
                    raise ValueError("simulate: %s: unknown keys %s (allowed: "
                                     "hardware, tensor_parallel, replicas)"
                                     % (name, sorted(unknown)))
                msg = getattr(request, name)
                msg.SetInParent()
                if pool.get("hardware") is not None:
                    msg.hardware.CopyFrom(rq.hardware_spec(pool["hardware"]))
                for key in ("tensor_parallel", "replicas"):
                    if pool.get(key) is not None:
                        setattr(msg, key, pool[key])
        return self._unary("Simulate", request, timeout)

    # --- Catalogs ----------------------------------------------------------

    def list_hardware(self, family="", *, timeout=None):
        """Every platform of every loaded plugin (Hardware messages, sorted
        by id), optionally of one family."""
        return list(self._unary("ListHardware",
                                pb.ListHardwareRequest(family=family or ""),
                                timeout).hardware)

    def list_plugins(self, *, timeout=None):
        """What happened to each plugin file (PluginInfo messages)."""
        return list(self._unary("ListHardware", pb.ListHardwareRequest(),
                                timeout).plugins)

    def get_hardware(self, id, *, timeout=None):  # noqa: A002 (proto name)
        return self._unary("GetHardware", pb.GetHardwareRequest(id=id),
                           timeout).hardware

    def list_models(self, *, timeout=None):
        """The built-in model catalog (Model messages, sorted by id)."""
        return list(self._unary("ListModels", pb.ListModelsRequest(),
                                timeout).models)

    def get_model(self, id, *, timeout=None):  # noqa: A002 (proto name)
        return self._unary("GetModel", pb.GetModelRequest(id=id),
                           timeout).model
