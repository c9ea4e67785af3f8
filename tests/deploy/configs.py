#!/usr/bin/env python3
"""The configs the deployment files give the runtime, run through the real binary: by
tests/deploy/checks.sh, with the tools venv (PyYAML).

  configs.py chart RENDERED.yaml BIN SCRATCH [--mrtr]
      The rendered ConfigMap is a config the runtime accepts: `BIN check` with the
      Deployment's environment and the key files its Secret volume would hold (the render
      must mount them under SCRATCH), then `BIN serve` and the `helm test` pod's request.
      --mrtr: two replicas, and a multi-round call across them (needs the conformance
      fixtures in the config).

  configs.py compose RESOLVED.yaml BIN REPO
      docker/compose.yaml (`docker-compose config` output): the replicas agree; their
      config + environment pass `BIN check`, answer with nginx's Host headers, and two of
      them complete a multi-round call across each other (one key ring).
"""

import base64
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from manifests import fail, is_dashboard, load, name, one

def random_key():
    return base64.b64encode(secrets.token_bytes(32)).decode()


class Runtime:
    """`BIN serve` on a free loopback port, stopped with SIGTERM."""

    def __init__(self, bin_path, config, env):
        self.proc = subprocess.Popen(
            [bin_path, "serve", *config_args(config), "--listen", "127.0.0.1:0"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.stderr = []
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()
        line = self._first_line(10)
        prefix = "mcp-runtime listening on "
        if not line.startswith(prefix):
            self.stop()
            fail(f"the runtime did not start: {line!r}\n{''.join(self.stderr)}")
        self.url = urllib.parse.urlsplit(line[len(prefix):].strip())

    def _first_line(self, timeout):
        """The `listening on` line (other start-up lines, such as the console's URL, before it
        are skipped)."""
        out = []

        def read():
            for line in self.proc.stdout:
                if line.startswith("mcp-runtime listening on "):
                    out.append(line)
                    return

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(timeout)
        return out[0] if out else ""

    def post(self, path, host, headers, body):
        req = urllib.request.Request(f"http://{self.url.netloc}{path}", data=body.encode(), method="POST")
        for k, v in headers.items():
            req.add_header(k, v)
        req.add_header("Host", host)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def stop(self, deadline=10):
        """SIGTERM; returns seconds until exit."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(deadline)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            fail(f"the runtime did not stop within {deadline}s of SIGTERM")
        return time.monotonic() - t0


def check_answers(rt, path, host, headers, body, what):
    status, text = rt.post(path, host, headers, body)
    if status != 200:
        fail(f"{what}: HTTP {status} for Host {host}: {text[:500]}")
    reply = json.loads(text)
    if "result" not in reply:
        fail(f"{what}: no result: {text[:500]}")
    info = reply["result"].get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {})
    if not info.get("name"):
        fail(f"{what}: no serverInfo in the result's _meta: {text[:500]}")
    print(f"ok  {what}: Host {host} → 200 from {info['name']} {info.get('version', '')}")


def config_args(config):
    """`--config` for a path, or for each path of a list (a configuration set)."""
    paths = [config] if isinstance(config, (str, Path)) else config
    return [a for p in paths for a in ("--config", str(p))]


def run_check(bin_path, config, env, what):
    r = subprocess.run([bin_path, "check", *config_args(config)], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{what}: the runtime rejects the config:\n{r.stderr}{r.stdout}")
    print(f"ok  {what}: {r.stdout.strip()}")


def stand_in(name):
    """A value for an env var the pod would read from a Secret: shaped like the real thing
    where the runtime checks its shape (an unreachable Redis only degrades to local state)."""
    if name.endswith("REDIS__URL"):
        return "redis://127.0.0.1:9/0"
    return f"stand-in-for-{name}"


def base_env():
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "RUST_LOG": "warn"}


def chart(rendered, bin_path, scratch, mrtr=False):
    docs = load(rendered)
    scratch = Path(scratch).resolve()
    maps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap" and not is_dashboard(d)}
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    c = pod["containers"][0]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    # Each --config names a file of a mounted ConfigMap, or the folder a projected volume of
    # several ConfigMaps makes (conf.d); both are recreated under scratch as the pod sees them.
    configs = []
    for i, arg in enumerate(c["args"]):
        if arg != "--config":
            continue
        path = c["args"][i + 1]
        vol = next((n for n, m in mounts.items() if path == m or path.startswith(m + "/")), None)
        if vol is None:
            fail(f"--config {path} is on no volume of the pod")
        sources = volumes[vol].get("projected", {}).get("sources") or [volumes[vol]]
        folder = scratch / os.path.relpath(mounts[vol], "/")
        folder.mkdir(parents=True, exist_ok=True)
        for src in sources:
            ref = src["configMap"]["name"]
            if ref not in maps:
                print(f"ok  --config {path}: ConfigMap {ref} is the user's (not rendered by the chart): not checked")
                continue
            for key, text in maps[ref]["data"].items():
                (folder / key).write_text(text)
        target = folder / os.path.relpath(path, mounts[vol])
        if not target.exists():
            fail(f"--config {path} names nothing the mounted ConfigMaps hold")
        configs.append(target)
    # Key files where the Secret volume puts them: random 32-byte keys, base64 (as the
    # chart generates, as `openssl rand -base64 32` writes).
    for n, v in volumes.items():
        if "secret" not in v:
            continue
        mount = Path(mounts[n])
        if scratch not in mount.parents:
            fail(f"render with requestState.keyRing.mountPath under {scratch} (got {mount})")
        mount.mkdir(parents=True, exist_ok=True)
        for item in v["secret"]["items"]:
            (mount / item["path"]).write_text(random_key() + "\n")
    # The container's environment; Secret and field references get stand-in values.
    env = base_env()
    for e in c.get("env", []):
        env[e["name"]] = e["value"] if "value" in e else stand_in(e["name"])
    run_check(bin_path, configs, env, "chart ConfigMaps + Deployment env")
    # The `helm test` pod's request, sent as the pod sends it (same Host, headers, body).
    test = next(d for d in docs if d["kind"] == "Pod" and d["metadata"]["annotations"].get("helm.sh/hook") == "test")
    args = test["spec"]["containers"][0]["args"]
    url = urllib.parse.urlsplit(next(a for a in args if a.startswith("http://")))
    headers = dict(args[i + 1].split(": ", 1) for i, a in enumerate(args) if a == "-H")
    body = args[args.index("-d") + 1]
    rt = Runtime(bin_path, configs, env)
    other = Runtime(bin_path, configs, env) if mrtr else None
    try:
        check_answers(rt, url.path, url.netloc, headers, body, "helm test request")
        if other:
            mrtr_across([rt, other, rt], url.netloc, url.path)
    finally:
        took = rt.stop()
        if other:
            other.stop()
    grace = pod["terminationGracePeriodSeconds"]
    print(f"ok  stopped {took:.2f}s after SIGTERM (terminationGracePeriodSeconds {grace})")


# ---------------------------------------------------------------- compose

DISCOVER = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "server/discover",
    "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                         "io.modelcontextprotocol/clientCapabilities": {}}},
})
DISCOVER_HEADERS = {
    "content-type": "application/json", "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover",
}


def mrtr_across(replicas, host, path="/mcp"):
    """A three-round MRTR call, each round on the next replica: the requestState sealed by
    one replica must open on the others (one key ring)."""
    tool = "test_input_required_result_multi_round"
    meta = json.loads(DISCOVER)["params"]["_meta"]
    meta["io.modelcontextprotocol/clientCapabilities"] = {"elicitation": {"form": {}}}
    headers = dict(DISCOVER_HEADERS, **{"mcp-method": "tools/call", "mcp-name": tool})
    answers = [{"step1": {"action": "accept", "content": {"name": "Ada"}}},
               {"step2": {"action": "accept", "content": {"color": "green"}}}]
    params = {"name": tool, "arguments": {}, "_meta": meta}
    for i, rt in enumerate(replicas):
        body = json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": params})
        status, text = rt.post(path, host, headers, body)
        result = json.loads(text).get("result") if status == 200 else None
        if result is None:
            fail(f"MRTR round {i + 1} (replica {rt.url.netloc}): HTTP {status}: {text[:500]}")
        if i < len(answers):
            if result.get("resultType") != "input_required" or not result.get("requestState"):
                fail(f"MRTR round {i + 1}: expected input_required with a requestState: {text[:500]}")
            params = dict(params, inputResponses=answers[i], requestState=result["requestState"])
    final = result["content"][0]["text"]
    if final != "Multi-round complete for Ada who likes green":
        fail(f"MRTR final round: {final!r}")
    print(f"ok  shared key ring: a 3-round MRTR call across two replicas completes ({final!r})")


def mounts_of(service):
    """{target: source} of a service's bind mounts, short (`src:dst:ro`) or long syntax."""
    out = {}
    for v in service.get("volumes", []):
        if isinstance(v, str):
            src, dst = v.split(":")[:2]
        else:
            src, dst = v["source"], v["target"]
        out[dst] = Path(src)
    return out


def published_port(service):
    p = service["ports"][0]
    # short syntax `[ip:]published:target[/proto]`, or long syntax
    return str(p["published"]) if isinstance(p, dict) else p.split("/")[0].split(":")[-2]


def compose(resolved, bin_path, repo):
    repo = Path(repo).resolve()
    services = load(resolved)[0]["services"]
    replicas = {n: s for n, s in services.items()
                if Path(s.get("build", {}).get("context", "/nonexistent")).resolve() == repo}
    if sorted(replicas) != ["runtime-1", "runtime-2", "runtime-3"]:
        fail(f"expected runtime-1..3 built from docker/Dockerfile, found {sorted(replicas)}")
    first = replicas["runtime-1"]
    for n, s in replicas.items():
        for k in ("environment", "command", "volumes", "image"):
            if s.get(k) != first.get(k):
                fail(f"{n}.{k} differs from runtime-1.{k}: every replica must run the same config and key ring")
    print("ok  runtime-1..3: same image, command, config and environment (one key ring)")
    cmd = first["command"]
    target = cmd[cmd.index("--config") + 1]
    source = mounts_of(first).get(target)
    if source is None:
        fail(f"--config {target} is not mounted into the replicas")
    env = base_env()
    env.update({k: str(v) for k, v in first["environment"].items()})
    source = str(source)
    run_check(bin_path, source, env, f"compose replica config {os.path.relpath(source, repo)} + environment")
    a, b = Runtime(bin_path, source, env), Runtime(bin_path, source, env)
    try:
        port = published_port(services["nginx"])
        for host in (f"localhost:{port}", "nginx"):
            check_answers(a, "/mcp", host, DISCOVER_HEADERS, DISCOVER, "compose replica via nginx")
        mrtr_across([a, b, a], f"localhost:{port}")
    finally:
        a.stop()
        b.stop()
    # nginx's upstream list names the replicas (the file comes with the nginx work).
    mounts = mounts_of(services["nginx"])
    upstream = mounts.get("/etc/nginx/mcp-upstream.conf")
    if upstream is None:
        fail("nginx does not mount /etc/nginx/mcp-upstream.conf")
    if "/etc/nginx/conf.d/default.conf" not in mounts:
        fail("nginx must replace conf.d/default.conf (the image's default server answers Host: localhost)")
    if upstream.exists():
        servers = sorted(line.split()[1].split(":")[0] for line in upstream.read_text().splitlines()
                         if line.strip().startswith("server "))
        if servers != sorted(replicas):
            fail(f"{upstream} lists {servers}, the replicas are {sorted(replicas)}")
        print(f"ok  {os.path.relpath(upstream, repo)} lists runtime-1..3")
    else:
        print(f"WARN {os.path.relpath(upstream, repo)} is not in this tree yet (the nginx round-robin "
              "work adds it): its server names were not compared with the replicas")


def main():
    cmd, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if cmd == "chart" and len(args) in (3, 4) and args[3:] in ([], ["--mrtr"]):
        chart(*args[:3], mrtr=bool(args[3:]))
    elif cmd == "compose" and len(args) == 3:
        compose(*args)
    else:
        fail(__doc__)


if __name__ == "__main__":
    main()
