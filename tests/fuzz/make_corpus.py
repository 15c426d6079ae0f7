#!/usr/bin/python3
"""Regenerates the seed corpora in corpus/<target>/ from real requests.

Sources: seeds/<Method>[-variant].json (requests taken from the README,
docs/web.md, docs/explore.md and the tests), seeds/hardware-*.json (inline
hardware), tests/fixtures/configs/*.json (Hugging Face config.json files)
and data/measurements/calibration.csv (a few rows of each kind); and the
libFuzzer dictionaries <target>.dict (field names, ids and names the code
knows, taken from the .proto and the sources).
Run from anywhere: /usr/bin/python3 tests/fuzz/make_corpus.py (needs protoc and
python3-protobuf). Files found by fuzzing that are kept as regression inputs
live beside the seeds (names starting with "finding-") and are left alone.
"""
import csv
import importlib
import re
import io
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CORPUS = HERE / "corpus"
# Order of fuzz_backend.h's kRpcNames: the first byte of a
# fuzz_backend_proto input selects the RPC.
RPCS = ["Analyze", "Sweep", "ListHardware", "GetHardware", "ListModels",
        "GetModel", "AnalyzeKernel", "StepTime", "StepTimeStream", "Explore",
        "Plan", "Simulate"]


def load_proto_module():
    out = pathlib.Path(tempfile.mkdtemp())
    subprocess.run(["protoc", f"-I{ROOT / 'proto'}", f"--python_out={out}",
                    str(ROOT / "proto/ridgeline/v1/ridgeline.proto")],
                   check=True)
    sys.path.insert(0, str(out))
    return importlib.import_module("ridgeline.v1.ridgeline_pb2")


def fresh(target):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    for f in d.iterdir():
        if not f.name.startswith("finding-"):
            f.unlink()
    return d


def main():
    pb = load_proto_module()
    from google.protobuf import json_format

    json_dir = fresh("fuzz_backend_json")
    proto_dir = fresh("fuzz_backend_proto")
    for seed in sorted((HERE / "seeds").glob("*.json")):
        method = seed.stem.split("-")[0]
        if method not in RPCS:
            continue
        body = seed.read_text()
        (json_dir / seed.stem).write_text(f"{method}\n{body}")
        name = method + "Request"
        msg = getattr(pb, name)()
        json_format.Parse(body, msg)
        (proto_dir / seed.stem).write_bytes(
            bytes([RPCS.index(method)]) + msg.SerializeToString())

    hw_dir = fresh("fuzz_inline_hardware")
    for seed in sorted((HERE / "seeds").glob("hardware-*.json")):
        msg = pb.Hardware()
        json_format.Parse(seed.read_text(), msg)
        (hw_dir / seed.stem).write_bytes(msg.SerializeToString())

    hf_dir = fresh("fuzz_hf_config")
    for cfg in sorted((ROOT / "tests/fixtures/configs").glob("*.json")):
        shutil.copy(cfg, hf_dir / cfg.name)

    # One CSV per kind of row (model metric, kernel rows), header included.
    csv_dir = fresh("fuzz_measurements_csv")
    with open(ROOT / "data/measurements/calibration.csv", newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    model = header.index("model_id")
    metric = header.index("metric")
    picked = {}
    for r in body:
        key = (r[model] if r[model].endswith("-kernel") else "model", r[metric])
        picked.setdefault(key, r)
    for i, (key, r) in enumerate(sorted(picked.items())):
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(header)
        w.writerow(r)
        (csv_dir / f"{key[0]}-{key[1]}-{i}.csv").write_text(buf.getvalue())

    write_http_corpus()
    write_benchmark_import_corpus()
    write_llmd_corpus()
    write_dicts(pb)


def http_request(method, path, body=b"", headers=()):
    """One raw HTTP/1.1 request as a client sends it."""
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1:8080", *headers]
    if body and not any(h.lower().startswith("transfer-encoding") for h in headers):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def write_http_corpus():
    """fuzz_http: raw requests: every seed request as the web UI and the
    HTTP tests send it, plus the shapes the hostile-client tests use
    (chunked, gzip, preflight, foreign Origin, text/plain, nested arrays,
    static files, probes)."""
    import gzip
    d = fresh("fuzz_http")
    json_type = "Content-Type: application/json"
    for seed in sorted((HERE / "seeds").glob("*.json")):
        method = seed.stem.split("-")[0]
        if method not in RPCS:
            continue
        (d / f"post-{seed.stem}").write_bytes(http_request(
            "POST", f"/v1/{method}", seed.read_bytes(), [json_type]))
    analyze = (HERE / "seeds" / "Analyze.json").read_bytes()
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(analyze[i:i + 64]), analyze[i:i + 64])
                       for i in range(0, len(analyze), 64)) + b"0\r\n\r\n"
    extra = {
        "chunked-Analyze": http_request("POST", "/v1/Analyze", chunked,
                                        [json_type, "Transfer-Encoding: chunked"]),
        "gzip-Analyze": http_request("POST", "/v1/Analyze",
                                     gzip.compress(analyze, mtime=0),
                                     [json_type, "Content-Encoding: gzip"]),
        "grpc-path-ListModels": http_request(
            "POST", "/ridgeline.v1.RidgelineService/ListModels", b"{}", [json_type]),
        "deadline-Analyze": http_request("POST", "/v1/Analyze", analyze,
                                         [json_type, "grpc-timeout: 200m"]),
        "auth-Analyze": http_request("POST", "/v1/Analyze", analyze,
                                     [json_type, "Authorization: Bearer 0123456789abcdef"]),
        "preflight": http_request("OPTIONS", "/v1/Analyze", b"", [
            "Origin: http://ui.example:8080", "Access-Control-Request-Method: POST"]),
        "foreign-origin": http_request("POST", "/v1/Analyze", analyze,
                                       [json_type, "Origin: http://evil.example"]),
        "text-plain": http_request("POST", "/v1/Analyze", analyze,
                                   ["Content-Type: text/plain;charset=UTF-8"]),
        "nested-arrays": http_request(
            "POST", "/v1/Sweep", b'{"batchSizes":[[[1]],[2]]}', [json_type]),
        "get-rpc": http_request("GET", "/v1/Analyze"),
        "get-index": http_request("GET", "/"),
        "get-js": http_request("GET", "/js/api.js"),
        "get-dotdot": http_request("GET", "/%2e%2e/README.md"),
        "head-index": http_request("HEAD", "/index.html"),
        "healthz": http_request("GET", "/healthz", b"", ["Connection: close"]),
        "readyz-http10": b"GET /readyz HTTP/1.0\r\n\r\n",
        "expect-continue": http_request("POST", "/v1/ListHardware", b"{}",
                                        [json_type, "Expect: 100-continue"]),
    }
    for name, raw in extra.items():
        (d / name).write_bytes(raw)
    http_tokens = {"GET", "POST", "OPTIONS", "HEAD", "PUT", "HTTP/1.1", "HTTP/1.0",
                   "Content-Length: ", "Content-Type: application/json",
                   "Transfer-Encoding: chunked", "Content-Encoding: gzip",
                   "Content-Encoding: deflate", "Origin: ", "Host: ",
                   "Expect: 100-continue", "Connection: close", "grpc-timeout: ",
                   "Authorization: Bearer ", "/v1/", "/ridgeline.v1.RidgelineService/",
                   "/healthz", "/readyz", "%2e", "..", "[[", "{\"", *RPCS}
    write_dict("fuzz_http", http_tokens)


# Order of calibration::BenchmarkFormats(): the first byte of a
# fuzz_benchmark_import input selects the format.
BENCHMARK_FORMATS = ["vllm-bench", "sglang-bench", "guidellm", "genai-perf",
                     "aiperf"]


def write_benchmark_import_corpus():
    """The benchmark-client result files of the import tests
    (tests/fixtures/benchmarks/), each behind its format byte."""
    out = fresh("fuzz_benchmark_import")
    fixtures = ROOT / "tests/fixtures/benchmarks"
    for name, fmt in [("vllm-bench-max-2runs.jsonl", "vllm-bench"),
                      ("sglang-bench-rate2.jsonl", "sglang-bench"),
                      ("guidellm-benchmarks.json", "guidellm"),
                      ("genai-perf-profile_export_genai_perf.json",
                       "genai-perf"),
                      ("aiperf-profile_export_aiperf.json", "aiperf")]:
        (out / fmt).write_bytes(bytes([BENCHMARK_FORMATS.index(fmt)]) +
                                (fixtures / name).read_bytes())


# Order of fuzz_llmd_predictor.cc's kRoutes.
LLMD_ROUTES = ["/predict", "/predict/bulk", "/predict/bulk/strict",
               "/add_training_data_bulk", "/status", "/readyz", "/healthz"]


def write_llmd_corpus():
    """Bodies of tests/integration/llmd/llmd_predictor_test.py, one per
    route, behind the route byte."""
    import json
    out = fresh("fuzz_llmd_predictor")
    pod = {"kv_cache_percentage": 0.2, "input_token_length": 1000,
           "num_request_waiting": 2, "num_request_running": 8,
           "num_tokens_generated": 0, "prefix_cache_score": 0.3,
           "pod_type": "decode"}
    entry = dict(pod, actual_ttft_ms=120.5, actual_tpot_ms=14.25)
    bodies = {
        "predict": ("/predict", pod),
        "bulk": ("/predict/bulk", {"requests": [pod, dict(pod, pod_type="")]}),
        "bulk-strict": ("/predict/bulk/strict", {"requests": [pod] * 3}),
        "training": ("/add_training_data_bulk", {"entries": [entry] * 2}),
        "status": ("/status", None),
        "missing-field": ("/predict", {k: v for k, v in pod.items()
                                       if k != "prefix_cache_score"}),
    }
    for name, (route, body) in bodies.items():
        data = b"" if body is None else json.dumps(body).encode()
        (out / name).write_bytes(bytes([LLMD_ROUTES.index(route)]) + data)


def quoted_strings(paths, pattern=r'"([A-Za-z0-9_.:<>=+-]{2,40})"'):
    out = set()
    for p in paths:
        out.update(re.findall(pattern, pathlib.Path(p).read_text()))
    return out


def write_dict(name, tokens):
    lines = []
    for t in sorted(tokens):
        esc = t.replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f'"{esc}"')
    (HERE / f"{name}.dict").write_text("\n".join(lines) + "\n")


def write_dicts(pb):
    # JSON requests: every field's JSON name (quoted, as a key), enum value
    # names, and the names and ids the code accepts (formats, axes,
    # objectives, catalog and platform ids).
    tokens = set(RPCS)
    def walk(desc, seen):
        if desc.full_name in seen:
            return
        seen.add(desc.full_name)
        for f in desc.fields:
            tokens.add(f'"{f.json_name}":')
            if f.enum_type:
                tokens.update(v.name for v in f.enum_type.values)
            if f.message_type:
                walk(f.message_type, seen)
    seen = set()
    for rpc in RPCS:
        walk(getattr(pb, rpc + "Request").DESCRIPTOR, seen)
    sources = [*ROOT.glob("engine/src/*.cc"), *ROOT.glob("explore/src/*.cc"),
               *ROOT.glob("serving/src/*.cc"), *ROOT.glob("plugins/*/*.c")]
    tokens.update(f'"{t}"' for t in quoted_strings(sources))
    write_dict("fuzz_backend_json", tokens)
    # config.json: the keys and values the reader looks for.
    hf = quoted_strings([ROOT / "engine/src/hf_config.cc"])
    write_dict("fuzz_hf_config", {f'"{t}"' for t in hf} | {f'"{t}":' for t in hf})
    # Measurement CSV: column names, metrics, units, ids.
    csv_tokens = quoted_strings([*ROOT.glob("calibration/src/*.cc")])
    csv_tokens.update(quoted_strings([ROOT / "plugins/nvidia/nvidia_plugin.c"]))
    write_dict("fuzz_measurements_csv", csv_tokens)


if __name__ == "__main__":
    main()
