#!/usr/bin/python3
"""Regenerates the seed corpora in corpus/<target>/ from real requests.

Sources: seeds/<Method>[-variant].json (requests taken from the README,
docs/web.md, docs/explore.md and the tests), seeds/hardware-*.json (inline
hardware), tests/fixtures/configs/*.json (Hugging Face config.json files)
and data/measurements/calibration.csv (a few rows of each kind).
Run from anywhere: /usr/bin/python3 tests/fuzz/make_corpus.py (needs protoc and
python3-protobuf). Files found by fuzzing that are kept as regression inputs
live beside the seeds (names starting with "finding-") and are left alone.
"""
import csv
import importlib
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


if __name__ == "__main__":
    main()
