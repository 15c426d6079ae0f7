"""Plain Python values -> ridgeline.v1 request messages. Unset keyword
arguments stay unset in the message, so the server's documented defaults
apply (see proto/ridgeline/v1/ridgeline.proto)."""

from ridgeline.v1 import ridgeline_pb2 as pb


def model_spec(model):
    """"llama-3-8b" (a catalog id), a ModelSpec, or a dict
    {"hf_config_json": text, "id": "mine"}."""
    if isinstance(model, pb.ModelSpec):
        return model
    if isinstance(model, str):
        return pb.ModelSpec(catalog_id=model)
    if isinstance(model, dict):
        return pb.ModelSpec(**model)
    raise TypeError("model: a catalog id, a dict or a ModelSpec, not %r"
                    % type(model).__name__)


def hardware_spec(hardware):
    """"nvidia-h100-sxm-80gb" (a catalog id), a Hardware message (an inline
    description) or a HardwareSpec."""
    if isinstance(hardware, pb.HardwareSpec):
        return hardware
    if isinstance(hardware, str):
        return pb.HardwareSpec(platform_id=hardware)
    if isinstance(hardware, pb.Hardware):
        return pb.HardwareSpec(description=hardware)
    raise TypeError("hardware: a catalog id, a Hardware or a HardwareSpec, "
                    "not %r" % type(hardware).__name__)


def only_set(message, **values):
    """Sets only the values given (None = leave unset: server default).
    Returns None when nothing was set, so the request leaves the whole
    sub-message unset rather than present and empty."""
    for name, value in values.items():
        if value is not None:
            setattr(message, name, value)
    return message if message.ListFields() else None


def formats(weights=None, activations=None, kv_cache=None):
    return only_set(pb.Formats(), weights=weights, activations=activations,
                kv_cache=kv_cache)


def formats_entry(entry):
    """A Formats, a dict of its fields or a (weights, activations, kv_cache)
    tuple (None or "" = default)."""
    if isinstance(entry, pb.Formats):
        return entry
    if isinstance(entry, dict):
        return formats(**entry) or pb.Formats()
    weights, activations, kv_cache = (tuple(entry) + (None, None, None))[:3]
    # All defaults is a point of its own in a sweep: keep the empty message.
    return formats(weights or None, activations or None,
                   kv_cache or None) or pb.Formats()


def placement(weights_tier=None, kv_cache_tier=None, activations_tier=None):
    return only_set(pb.PlacementPins(), weights_tier=weights_tier,
                kv_cache_tier=kv_cache_tier, activations_tier=activations_tier)


def speculative(method=None, acceptance=None):
    """options.speculative from the CLI's forms: method "draft:MODEL:k",
    "mtp:k" or "eagle:k"; acceptance a rate or a list of per-position rates.
    The server checks the ranges."""
    if method is None or method in ("", "none"):
        return None
    parts = method.split(":")
    out = pb.SpeculativeDecoding(method=parts[0], tokens=int(parts[-1]))
    if parts[0] == "draft":
        out.draft_model = ":".join(parts[1:-1])
    if isinstance(acceptance, (list, tuple)):
        out.acceptance_by_position.extend(float(a) for a in acceptance)
    elif acceptance is not None:
        out.acceptance_rate = float(acceptance)
    return out


def lora(rank=None, modules=None, adapters=None, cold_fraction=None):
    """options.lora; None when rank is None."""
    if rank is None:
        return None
    return only_set(pb.LoraAdapters(), rank=rank, modules=modules,
                    adapters=adapters, cold_fraction=cold_fraction)


def options(flash_attention=None, mla_absorbed=None, suggestions=None,
            pure_roofline=None, gemv_max_tokens=None, fp16_accumulation=None,
            speculative_method=None, acceptance=None, lora_rank=None,
            lora_modules=None, lora_adapters=None, lora_cold_fraction=None):
    out = only_set(pb.AnalysisOptions(), flash_attention=flash_attention,
                   mla_absorbed=mla_absorbed, suggestions=suggestions,
                   pure_roofline=pure_roofline, gemv_max_tokens=gemv_max_tokens,
                   fp16_accumulation=fp16_accumulation) or pb.AnalysisOptions()
    spec = speculative(speculative_method, acceptance)
    if spec is not None:
        out.speculative.CopyFrom(spec)
    adapters = lora(lora_rank, lora_modules, lora_adapters, lora_cold_fraction)
    if adapters is not None:
        out.lora.CopyFrom(adapters)
    return out if out.ListFields() else None


def calibration(profile=None, framework=None):
    if profile is not None and framework is not None:
        raise ValueError("calibration: give profile or framework, not both")
    return only_set(pb.Calibration(), profile=profile, framework=framework)


def economics(values):
    """A dict of EconomicsOverrides fields ({"pue": 1.2}) or the message."""
    if values is None or isinstance(values, pb.EconomicsOverrides):
        return values
    return only_set(pb.EconomicsOverrides(), **values)


def parallelism(tensor_parallel=None):
    return only_set(pb.Parallelism(), tensor_parallel=tensor_parallel)


_VIEWS = {None: pb.ANALYSIS_VIEW_UNSPECIFIED, "full": pb.ANALYSIS_VIEW_FULL,
          "basic": pb.ANALYSIS_VIEW_BASIC}


def view(name):
    """"basic" (no per-op tables), "full", or an AnalysisView value."""
    if isinstance(name, int):
        return name
    try:
        return _VIEWS[name.lower() if isinstance(name, str) else name]
    except KeyError:
        raise ValueError("view: 'basic' or 'full', not %r" % (name,))


def token_lengths(value, name):
    """Token counts of requests: an int (fixed), a (min, max) tuple
    (uniform, inclusive), a {tokens: weight} dict (histogram) or a
    TokenLengths message."""
    if isinstance(value, pb.TokenLengths):
        return value
    if isinstance(value, bool):
        raise TypeError("%s: an int, a (min, max) tuple or a dict, not bool"
                        % name)
    if isinstance(value, int):
        return pb.TokenLengths(fixed=value)
    if isinstance(value, tuple) and len(value) == 2:
        return pb.TokenLengths(uniform=pb.UniformTokenLengths(
            min=int(value[0]), max=int(value[1])))
    if isinstance(value, dict):
        return pb.TokenLengths(histogram=pb.TokenLengthHistogram(
            values=[int(v) for v in value], weights=list(value.values())))
    raise TypeError("%s: an int, a (min, max) tuple, a {tokens: weight} "
                    "dict or a TokenLengths, not %r"
                    % (name, type(value).__name__))


def serving_options(memory_fraction=None, max_num_seqs=None,
                    max_num_batched_tokens=None, block_size=None,
                    prefix_caching=None, kv_offload=None, preemption=None):
    return only_set(pb.ServingOptions(), memory_fraction=memory_fraction,
                    max_num_seqs=max_num_seqs,
                    max_num_batched_tokens=max_num_batched_tokens,
                    block_size=block_size, prefix_caching=prefix_caching,
                    kv_offload=kv_offload, preemption=preemption)
