#!/usr/bin/env python3
"""Renders the Kubernetes manifests with `kubectl kustomize` (offline) and
checks they agree with the server binary: the ports and environment
variables the manifests use are the ones `ridgeline-server --help` documents,
probes use gRPC health on the gRPC port, and the pod's termination grace
period outlasts the server's drain deadline.

usage: check_manifests.py KUSTOMIZE_DIR SERVER_BINARY
"""
import subprocess
import sys

import yaml


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def main():
    kdir, server = sys.argv[1], sys.argv[2]
    rendered = subprocess.run(["kubectl", "kustomize", kdir], check=True,
                              capture_output=True, text=True).stdout
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    kinds = {d["kind"] for d in docs}
    for needed in ("Deployment", "Service", "PodDisruptionBudget",
                   "HorizontalPodAutoscaler"):
        if needed not in kinds:
            fail(f"{kdir}: no {needed} rendered (got {sorted(kinds)})")

    help_text = subprocess.run([server, "--help"], capture_output=True,
                               text=True, timeout=30)
    help_text = help_text.stdout + help_text.stderr

    deploy = next(d for d in docs if d["kind"] == "Deployment")
    pod = deploy["spec"]["template"]["spec"]
    container = pod["containers"][0]
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    for name in env:
        if name not in help_text:
            fail(f"env {name} is not documented by ridgeline-server --help")
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    grpc_port = int(env.get("RIDGELINE_LISTEN", "0.0.0.0:50051").rsplit(":", 1)[1])
    metrics_port = int(env.get("RIDGELINE_METRICS_LISTEN", "0.0.0.0:9464").rsplit(":", 1)[1])
    if ports.get("grpc") != grpc_port:
        fail(f"container port grpc={ports.get('grpc')} but server listens on {grpc_port}")
    if ports.get("metrics") != metrics_port:
        fail(f"container port metrics={ports.get('metrics')} but metrics on {metrics_port}")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        spec = container.get(probe)
        if not spec or spec.get("grpc", {}).get("port") != grpc_port:
            fail(f"{probe} must be a gRPC health probe on port {grpc_port}: {spec}")
    grace = float(env.get("RIDGELINE_SHUTDOWN_GRACE_SECONDS", "0"))
    if pod.get("terminationGracePeriodSeconds", 30) <= grace:
        fail(f"terminationGracePeriodSeconds {pod.get('terminationGracePeriodSeconds')} "
             f"must exceed the drain deadline {grace}s")
    annotations = deploy["spec"]["template"]["metadata"].get("annotations", {})
    if annotations.get("prometheus.io/port") != str(metrics_port):
        fail("prometheus.io/port annotation does not match the metrics port")
    selector = deploy["spec"]["selector"]["matchLabels"]
    for svc in (d for d in docs if d["kind"] == "Service"):
        if any(svc["spec"]["selector"].get(k) != v for k, v in selector.items()):
            fail(f"service {svc['metadata']['name']} selector does not match the pods")
    print(f"ok: {kdir}: {len(docs)} objects, ports {ports}, grace {grace}s")


if __name__ == "__main__":
    main()
