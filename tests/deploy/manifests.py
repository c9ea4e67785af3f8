#!/usr/bin/env python3
"""Checks of the rendered Helm chart that need a YAML parser: run by tests/deploy/checks.sh
with the tools venv (kubernetes-validate, PyYAML, jsonschema). Shared helpers for configs.py.

  manifests.py validate RENDERED.yaml K8S_VERSION...
      Every document of a `helm template` render, strictly: core kinds against the
      Kubernetes schemas bundled in kubernetes-validate (the validation its `--strict` CLI
      runs: unknown fields fail), the ServiceMonitor and PrometheusRule CRDs against
      servicemonitor.schema.json and prometheusrule.schema.json (kubernetes-validate has no
      CRD schemas and only warns on them, so it never sees those documents); any other kind
      fails. Then the references between documents: selectors,
      ports, names.

  manifests.py values-doc VALUES.yaml docs/deployment.md
      the deployment page's values table names every value (two levels deep).
"""

import json
import sys
import tomllib
from pathlib import Path

import jsonschema
import yaml
from kubernetes_validate import utils as kv

HERE = Path(__file__).resolve().parent


def fail(msg):
    print(f"FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def one(docs, kind):
    found = [d for d in docs if d["kind"] == kind]
    if len(found) != 1:
        fail(f"expected one {kind}, rendered {len(found)}")
    return found[0]


def is_dashboard(doc):
    """The Grafana dashboard ConfigMap (grafanaDashboard.enabled): for Grafana's sidecar, not the pods."""
    return doc["kind"] == "ConfigMap" and "mcp-runtime.json" in doc.get("data", {})


def name(doc):
    return f"{doc['kind']}/{doc['metadata']['name']}"


# ---------------------------------------------------------------- validate


def validate(rendered, versions):
    docs = load(rendered)
    crds = {kind: f"{kind.lower()}.schema.json" for kind in ("ServiceMonitor", "PrometheusRule")}
    for doc in docs:
        if doc.get("apiVersion") == "monitoring.coreos.com/v1" and doc.get("kind") in crds:
            schema_file = crds[doc["kind"]]
            schema = json.loads((HERE / schema_file).read_text())
            errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=str)
            if errors:
                fail(f"{name(doc)}: " + "; ".join(f"{'.'.join(map(str, e.path))}: {e.message}" for e in errors))
            print(f"ok  {name(doc)} against tests/deploy/{schema_file} (CRD)")
            continue
        for v in versions:
            try:
                kv.validate(doc, v, strict=True)
            except kv.SchemaNotFoundError as e:
                fail(f"{name(doc)}: {e.message}; add an explicit check for this kind to {__file__}")
            except kv.ValidationError as e:
                fail(f"{name(doc)} (Kubernetes {v}): {'.'.join(map(str, e.path))}: {e.message}")
        print(f"ok  {name(doc)} against Kubernetes {', '.join(versions)} (strict)")
    cross_references(docs)
    print(f"{len(docs)} documents valid")


def selects(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


def cross_references(docs):
    """What no schema sees: the documents must point at each other correctly."""
    dep = one(docs, "Deployment")
    pod = dep["spec"]["template"]
    pod_labels = pod["metadata"]["labels"]
    if not selects(dep["spec"]["selector"]["matchLabels"], pod_labels):
        fail("Deployment selector does not match its pod labels")
    container = pod["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    svc = one(docs, "Service")
    if not selects(svc["spec"]["selector"], pod_labels):
        fail("Service selector does not match the pods")
    svc_ports = {p["name"]: p for p in svc["spec"]["ports"]}
    for p in svc_ports.values():
        if p["targetPort"] not in ports:
            fail(f"Service port {p['name']} targets {p['targetPort']}, not a container port")
    for probe in ("readinessProbe", "livenessProbe"):
        if container[probe]["httpGet"]["port"] not in ports:
            fail(f"{probe} uses an unknown port")
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    # A ConfigMap is mounted as a volume of its own, or as one source of a projected volume
    # (the conf.d folder made of several ConfigMaps).
    mounted = {v["configMap"]["name"] for v in pod["spec"]["volumes"] if "configMap" in v}
    for v in pod["spec"]["volumes"]:
        mounted.update(src["configMap"]["name"] for src in v.get("projected", {}).get("sources", []) if "configMap" in src)
    for cm in [c for c in by_kind.get("ConfigMap", []) if not is_dashboard(c)]:
        if cm["metadata"]["name"] not in mounted:
            fail(f"{name(cm)} is not mounted")
    for s in by_kind.get("Secret", []):
        vols = [v["secret"] for v in pod["spec"]["volumes"] if v.get("secret", {}).get("secretName") == s["metadata"]["name"]]
        if not vols:
            fail(f"{name(s)} is not mounted")
        missing = [i["key"] for v in vols for i in v.get("items", []) if i["key"] not in s.get("data", {})]
        if missing:
            fail(f"{name(s)} has no key {missing}")
    for hpa in by_kind.get("HorizontalPodAutoscaler", []):
        if hpa["spec"]["scaleTargetRef"]["name"] != dep["metadata"]["name"]:
            fail("HPA scales another Deployment")
        if "replicas" in dep["spec"]:
            fail("Deployment sets replicas while an HPA owns them (every upgrade would reset the scale)")
    for kind in ("PodDisruptionBudget", "NetworkPolicy"):
        for d in by_kind.get(kind, []):
            sel = d["spec"]["selector" if kind == "PodDisruptionBudget" else "podSelector"]["matchLabels"]
            if not selects(sel, pod_labels):
                fail(f"{name(d)} does not select the pods")
    for np in by_kind.get("NetworkPolicy", []):
        for rule in np["spec"].get("ingress", []):
            for p in rule.get("ports", []):
                if isinstance(p["port"], str) and p["port"] not in ports:
                    fail(f"{name(np)} allows port {p['port']}, which the pods do not name")
    # Every host routes the MCP endpoint and each virtual endpoint of the rendered config.
    rendered = [c["data"]["runtime.toml"] for c in by_kind.get("ConfigMap", []) if "runtime.toml" in c.get("data", {})]
    config = tomllib.loads(rendered[0]) if rendered else {}
    mcp_paths = {config.get("server", {}).get("path", "/mcp")} | {e["path"] for e in config.get("endpoints", [])}
    for ing in by_kind.get("Ingress", []):
        for rule in ing["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                backend = path["backend"]["service"]
                if backend["name"] != svc["metadata"]["name"] or backend["port"]["name"] not in svc_ports:
                    fail(f"{name(ing)} routes to {backend}, not to the Service")
            routed = {p["path"] for p in rule["http"]["paths"]}
            if routed != mcp_paths:
                fail(f"{name(ing)} routes {sorted(routed)} for {rule.get('host')}, not the MCP paths {sorted(mcp_paths)}")
    for sm in by_kind.get("ServiceMonitor", []):
        if not selects(sm["spec"]["selector"]["matchLabels"], svc["metadata"]["labels"]):
            fail(f"{name(sm)} does not select the Service")
        if svc["metadata"]["namespace"] not in sm["spec"].get("namespaceSelector", {}).get("matchNames", [svc["metadata"]["namespace"]]):
            fail(f"{name(sm)} looks in another namespace")
        for ep in sm["spec"]["endpoints"]:
            if ep["port"] not in svc_ports:
                fail(f"{name(sm)} scrapes port {ep['port']}, which the Service does not name")
    # The `helm test` pod is no replica, and the NetworkPolicy lets it reach them.
    for test in [d for d in by_kind.get("Pod", []) if d["metadata"].get("annotations", {}).get("helm.sh/hook") == "test"]:
        labels = test["metadata"]["labels"]
        if selects(svc["spec"]["selector"], labels) or selects(dep["spec"]["selector"]["matchLabels"], labels):
            fail(f"{name(test)} carries the replicas' selector labels: the Service would route to it")
        for np in by_kind.get("NetworkPolicy", []):
            for rule in np["spec"].get("ingress", []):
                peers = rule.get("from")
                if peers is not None and not any(
                    set(p) == {"podSelector"} and selects(p["podSelector"].get("matchLabels", {}), labels) for p in peers
                ):
                    fail(f"{name(np)} blocks {name(test)}: `helm test` would fail")
    print("ok  cross-references: selectors, ports, volumes, scale target, ingress backends, helm test pod")


# ---------------------------------------------------------------- values table


def values_doc(values, doc):
    """Every value of the chart (two levels deep) is named in the first column of the values
    table of the deployment page (docs/deployment.md, section "Values"), as `top.key`, or as
    `key` in a row about `top.`."""
    text = Path(doc).read_text()
    if "### Values" not in text:
        fail(f"{doc} has no '### Values' section (the chart's values table)")
    start = text.index("### Values")
    rows = [line.split("|")[1] for line in text[start:].split("\n\n", 2)[1].splitlines() if line.startswith("|")]
    missing = []
    for top, sub in yaml.safe_load(Path(values).read_text()).items():
        if not any(f"`{top}`" in r or f"`{top}." in r for r in rows):
            missing.append(top)
        for k in sub if isinstance(sub, dict) else []:
            if not any(f"`{top}.{k}" in r or (f"`{top}." in r and f"`{k}`" in r) for r in rows):
                missing.append(f"{top}.{k}")
    if missing:
        fail(f"{doc}'s values table does not mention: {', '.join(missing)}")
    print(f"ok  {doc}'s values table names every value of helm/mcp-runtime/values.yaml")


def main():
    cmd, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if cmd == "validate" and len(args) >= 2:
        validate(args[0], args[1:])
    elif cmd == "values-doc" and len(args) == 2:
        values_doc(*args)
    else:
        fail(__doc__)


if __name__ == "__main__":
    main()
