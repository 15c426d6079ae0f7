"""Step times for schedulers: Client.step_time (unary StepTime) and
StepTimer, which keeps one StepTimeStream open and answers one step per
round trip."""

import itertools
import queue
import warnings

import grpc

from ridgeline import _requests as rq
from ridgeline._errors import RidgelineError, field_path_of
from ridgeline.v1 import ridgeline_pb2 as pb

_CODES = {s.value[0]: s for s in grpc.StatusCode}


def scenario(model, hardware, *, weights=None, activations=None,
             kv_cache=None, weights_tier=None, kv_cache_tier=None,
             activations_tier=None, flash_attention=None, mla_absorbed=None,
             pure_roofline=None, gemv_max_tokens=None, fp16_accumulation=None,
             profile=None, framework=None, tensor_parallel=None,
             max_sequences=None, max_context_tokens=None,
             max_step_tokens=None):
    """A StepScenario (None = server default). max_sequences and
    max_context_tokens size the KV cache the placement reserves,
    max_step_tokens the activations of the largest step (the scheduler's
    token budget per step; server default 8192)."""
    if isinstance(model, pb.StepScenario):
        return model
    return pb.StepScenario(
        model=rq.model_spec(model), hardware=rq.hardware_spec(hardware),
        formats=rq.formats(weights, activations, kv_cache),
        placement=rq.placement(weights_tier, kv_cache_tier, activations_tier),
        options=rq.options(flash_attention, mla_absorbed, None, pure_roofline,
                           gemv_max_tokens, fp16_accumulation),
        calibration=rq.calibration(profile, framework),
        parallelism=rq.parallelism(tensor_parallel),
        capacity=rq.only_set(pb.StepCapacity(), max_sequences=max_sequences,
                             max_context_tokens=max_context_tokens,
                             max_step_tokens=max_step_tokens))


def step_message(sequences):
    """[(context_tokens, new_tokens), ...] (or StepSequence messages, or a
    Step) -> Step. new_tokens 1 = a decode token, N = a prefill chunk."""
    if isinstance(sequences, pb.Step):
        return sequences
    step = pb.Step()
    add = step.sequences.add
    for s in sequences:
        if isinstance(s, pb.StepSequence):
            step.sequences.append(s)
        else:
            context, new = s
            add(context_tokens=context, new_tokens=new)
    return step


def check_result(result):
    """Raises the RidgelineError a step answered with, else returns it."""
    if result.error_code:
        code = _CODES.get(result.error_code, grpc.StatusCode.UNKNOWN)
        raise RidgelineError(code, result.error_message,
                             field_path_of(result.error_message))
    return result


class SpillWarning(UserWarning):
    """The scenario's reservation does not fit on the device: steps read or
    write bytes in host memory (or flash) and are slow. The message says
    what sits where (StepTimeResponse.spilled)."""


def warn_spilled(spilled):
    """Warns (once per distinct text, by Python's warning filter) when the
    server says the reservation spilled off the device."""
    if spilled:
        warnings.warn(SpillWarning(
            "the step reservation spills off the device: %s; every step "
            "touching it is slow (reserve fewer sequences or shorter "
            "contexts: max_sequences, max_context_tokens)" % spilled),
            stacklevel=3)


_END = object()


class StepTimer:
    """One open StepTimeStream for a scheduler loop:

        with ridgeline.StepTimer("127.0.0.1:50051", model="llama-3-8b",
                                 hardware="nvidia-h100-sxm-80gb") as t:
            seconds = t.step([(1024, 1), (0, 512)])  # a decode, a prefill chunk

    `target` is "host:port" or a Client (its channel, deadline and metadata
    are reused). Scenario keyword arguments as scenario(). The scenario
    travels with the first step; a bad scenario raises RidgelineError there
    and ends the stream, a bad step raises RidgelineError and the stream
    stays open. `timeout` bounds the whole stream (None: none). After each
    step, `last` holds its StepTimeResult (bound, flops, bytes,
    off_device_bytes, warnings, ...). When the reservation spills off the
    device, `spilled` says where (else "") and a SpillWarning is issued.
    Not thread-safe: one StepTimer per scheduler thread.
    """

    def __init__(self, target, model, hardware, *, credentials=None,
                 timeout=None, metadata=None, per_op=False, **scenario_kwargs):
        from ridgeline._client import Client  # (import cycle)
        if isinstance(target, Client):
            self._client, self._own_client = target, False
        else:
            self._client = Client(target, credentials, metadata=metadata)
            self._own_client = True
        self.scenario = scenario(model, hardware, **scenario_kwargs)
        self.per_op = per_op
        self._timeout = self._client.timeout if timeout is None else timeout
        self._call = None
        self.last = None
        self.calibration = None
        self.pure_roofline = None
        self.spilled = ""

    # --- lifetime ---------------------------------------------------------

    def open(self):
        if self._call is not None:
            return self
        self._queue = queue.SimpleQueue()
        self._ids = itertools.count(1)
        self._sent_scenario = False
        self._call = self._client.stub.StepTimeStream(
            iter(self._queue.get, _END), timeout=self._timeout,
            metadata=self._client.metadata)
        return self

    def close(self):
        """Half-closes the stream, waits for the server to end it, and
        closes the channel this StepTimer opened."""
        call, self._call = self._call, None
        if call is not None:
            self._queue.put(_END)
            try:
                for _ in call:  # the server answers nothing more
                    pass
            except grpc.RpcError:
                pass
        if self._own_client:
            self._client.close()

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()

    def _drop(self):
        """Forgets a stream the server ended; the next step opens another."""
        self._queue.put(_END)  # releases gRPC's request-reading thread
        self._call = None

    # --- steps ------------------------------------------------------------

    def _round_trip(self, steps):
        if self._call is None:
            self.open()
        request = pb.StepTimeStreamRequest(steps=steps, id=next(self._ids),
                                           per_op=self.per_op)
        if not self._sent_scenario:
            request.scenario.CopyFrom(self.scenario)
            self._sent_scenario = True
        self._queue.put(request)
        try:
            response = next(self._call)
        except grpc.RpcError as e:
            self._drop()
            raise RidgelineError.from_rpc_error(e) from e
        except StopIteration:
            self._drop()
            raise RidgelineError(grpc.StatusCode.INTERNAL,
                                 "StepTimeStream ended without an answer")
        if response.id != request.id or len(response.steps) != len(steps):
            raise RidgelineError(
                grpc.StatusCode.INTERNAL,
                "StepTimeStream answered id %d with %d steps for id %d with "
                "%d steps" % (response.id, len(response.steps), request.id,
                              len(steps)))
        self.calibration = response.calibration
        self.pure_roofline = response.pure_roofline
        if response.spilled != self.spilled:
            self.spilled = response.spilled
            warn_spilled(self.spilled)
        return response.steps

    def step(self, sequences):
        """The time in seconds of one step: [(context_tokens, new_tokens),
        ...], one entry per sequence in the batch."""
        (result,) = self._round_trip([step_message(sequences)])
        self.last = check_result(result)
        return result.seconds

    def steps(self, steps):
        """The times in seconds of several steps in one round trip (raises
        on the first bad one)."""
        results = self._round_trip([step_message(s) for s in steps])
        for r in results:
            check_result(r)
        self.last = results[-1] if results else None
        return [r.seconds for r in results]
