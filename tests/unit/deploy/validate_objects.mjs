// Strict field check of rendered Kubernetes objects (`helm template` output).
//   1. kubernetes-models: each object validates against its kind's OpenAPI
//      schema (types, required fields, enums).
//   2. Unknown fields: every key, at every depth, must be a field of the
//      generated @kubernetes/client-node model of that position (the models
//      carry the API's field list), so a misspelled or misplaced field fails
//      even where the OpenAPI schema would let it through.
// ServiceMonitor (a CRD, in neither package) is checked against its own
// short field list below.
//
// usage: node validate_objects.mjs RENDERED.yaml [EXPECTED_KIND ...]
// Exits 1 naming each bad field as kind/name: path.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import * as k8s from "@kubernetes/client-node";
import * as appsV1 from "kubernetes-models/apps/v1";
import * as batchV1 from "kubernetes-models/batch/v1";
import * as v1 from "kubernetes-models/v1";
import * as policyV1 from "kubernetes-models/policy/v1";
import * as autoscalingV2 from "kubernetes-models/autoscaling/v2";
import * as networkingV1 from "kubernetes-models/networking.k8s.io/v1";

// apiVersion/kind -> [kubernetes-models class, client-node model name].
const KINDS = {
  "apps/v1/Deployment": [appsV1.Deployment, "V1Deployment"],
  "batch/v1/Job": [batchV1.Job, "V1Job"],
  "v1/Service": [v1.Service, "V1Service"],
  "v1/ServiceAccount": [v1.ServiceAccount, "V1ServiceAccount"],
  "v1/ConfigMap": [v1.ConfigMap, "V1ConfigMap"],
  "v1/PersistentVolumeClaim": [v1.PersistentVolumeClaim, "V1PersistentVolumeClaim"],
  "policy/v1/PodDisruptionBudget": [policyV1.PodDisruptionBudget, "V1PodDisruptionBudget"],
  "autoscaling/v2/HorizontalPodAutoscaler":
    [autoscalingV2.HorizontalPodAutoscaler, "V2HorizontalPodAutoscaler"],
  "networking.k8s.io/v1/NetworkPolicy": [networkingV1.NetworkPolicy, "V1NetworkPolicy"],
};

// monitoring.coreos.com/v1 ServiceMonitor: the fields this chart may use.
const SERVICE_MONITOR = {
  apiVersion: null, kind: null,
  metadata: "V1ObjectMeta",
  spec: {
    namespaceSelector: { matchNames: null, any: null },
    selector: "V1LabelSelector",
    jobLabel: null,
    endpoints: [{ port: null, path: null, interval: null, scheme: null, scrapeTimeout: null,
                  tlsConfig: null, honorLabels: null }],
  },
};

// leaderworkerset.x-k8s.io/v1 LeaderWorkerSet (kubernetes-sigs/lws,
// api/leaderworkerset/v1/leaderworkerset_types.go): the fields
// `ridgeline plan --emit kubernetes` may use; the pod templates are checked
// as core PodTemplateSpecs.
const LEADER_WORKER_SET = {
  apiVersion: null, kind: null,
  metadata: "V1ObjectMeta",
  spec: {
    replicas: null,
    leaderWorkerTemplate: {
      size: null, restartPolicy: null,
      leaderTemplate: "V1PodTemplateSpec",
      workerTemplate: "V1PodTemplateSpec",
    },
  },
};

const errors = [];

// Walks `value` as client-node type `type` (e.g. "V1PodSpec",
// "Array<V1Container>", "{ [key: string]: string; }"), reporting keys the
// model does not have.
function walk(value, type, path) {
  if (value === null || value === undefined) return;
  let m = /^Array<(.+)>$/.exec(type);
  if (m) {
    if (!Array.isArray(value)) return errors.push(`${path}: expected a list`);
    value.forEach((v, i) => walk(v, m[1], `${path}[${i}]`));
    return;
  }
  m = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (m) {
    for (const [k, v] of Object.entries(value)) walk(v, m[1], `${path}.${k}`);
    return;
  }
  const model = k8s[type];
  if (typeof model?.getAttributeTypeMap !== "function") return;  // a scalar
  if (typeof value !== "object" || Array.isArray(value)) {
    return errors.push(`${path}: expected an object (${type})`);
  }
  const fields = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  for (const [k, v] of Object.entries(value)) {
    if (!fields.has(k)) {
      errors.push(`${path}.${k}: unknown field (not in ${type})`);
    } else {
      walk(v, fields.get(k), `${path}.${k}`);
    }
  }
}

// Same, for a hand-written field tree (the CRD above).
function walkSpec(value, spec, path) {
  if (spec === null || value === null || value === undefined) return;
  if (typeof spec === "string") return walk(value, spec, path);
  if (Array.isArray(spec)) {
    if (!Array.isArray(value)) return errors.push(`${path}: expected a list`);
    return value.forEach((v, i) => walkSpec(v, spec[0], `${path}[${i}]`));
  }
  for (const [k, v] of Object.entries(value)) {
    if (!(k in spec)) errors.push(`${path}.${k}: unknown field`);
    else walkSpec(v, spec[k], `${path}.${k}`);
  }
}

const [file, ...expectedKinds] = process.argv.slice(2);
const docs = parseAllDocuments(readFileSync(file, "utf8"))
  .map((d) => {
    if (d.errors.length) errors.push(`YAML: ${d.errors[0].message}`);
    return d.toJS();
  })
  .filter((d) => d);
const seen = new Set();
for (const obj of docs) {
  const where = `${obj.kind}/${obj.metadata?.name}`;
  seen.add(obj.kind);
  if (obj.apiVersion === "monitoring.coreos.com/v1" && obj.kind === "ServiceMonitor") {
    walkSpec(obj, SERVICE_MONITOR, where);
    continue;
  }
  if (obj.apiVersion === "leaderworkerset.x-k8s.io/v1" && obj.kind === "LeaderWorkerSet") {
    walkSpec(obj, LEADER_WORKER_SET, where);
    const t = obj.spec?.leaderWorkerTemplate ?? {};
    if (!Number.isInteger(t.size) || t.size < 1) errors.push(`${where}: size must be an integer >= 1`);
    for (const name of ["leaderTemplate", "workerTemplate"]) {
      try {
        // A pod template is valid when a Pod of it is.
        new v1.Pod({ apiVersion: "v1", kind: "Pod", metadata: { name: "x" }, spec: t[name]?.spec }).validate();
      } catch (e) {
        errors.push(`${where}.spec.leaderWorkerTemplate.${name}: kubernetes-models: ${e.message}`);
      }
    }
    continue;
  }
  const entry = KINDS[`${obj.apiVersion}/${obj.kind}`];
  if (!entry) {
    errors.push(`${where}: unexpected apiVersion/kind ${obj.apiVersion}/${obj.kind}`);
    continue;
  }
  const [ModelClass, modelName] = entry;
  try {
    new ModelClass(obj).validate();
  } catch (e) {
    errors.push(`${where}: kubernetes-models: ${e.message}`);
  }
  walk(obj, modelName, where);
}
for (const kind of expectedKinds) {
  if (!seen.has(kind)) errors.push(`no ${kind} rendered (got ${[...seen].join(", ")})`);
}
if (errors.length) {
  for (const e of errors) console.error(`FAIL: ${e}`);
  process.exit(1);
}
console.log(`ok: ${docs.length} objects (${[...seen].sort().join(", ")}): every field known and valid`);
