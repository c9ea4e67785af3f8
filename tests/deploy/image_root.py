#!/usr/bin/env python3
"""Runs the container image's exact default command in a root that holds only what the
runtime stage of docker/Dockerfile copies, plus what its base image
(gcr.io/distroless/cc-debian12) supplies: glibc and libgcc from this (Debian 12) host, the
nonroot user, /tmp. No Docker engine: a chroot, as the image's USER, in a network namespace
of its own (so the image's fixed port cannot collide with anything). The runtime must start,
report ready and answer every tool of its default config.

Usage: python3 tests/deploy/image_root.py [path/to/mcp-runtime]   (default target/debug/mcp-runtime)
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "docker/Dockerfile"
# What the distroless base image holds besides libraries (its /etc/passwd has these users).
PASSWD = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
GROUP = "root:x:0:\nnonroot:x:65532:\n"


def runtime_stage():
    """Instructions of the last stage as (keyword, argument text), continuations joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [l.strip() for l in text.splitlines() if l.strip() and not l.strip().startswith("#")]
    last = max(i for i, l in enumerate(lines) if l.upper().startswith("FROM "))
    out = []
    for line in lines[last + 1 :]:
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def exec_form(text):
    """`["a", "b"]` (exec form) or a shell string split like sh would."""
    return json.loads(text) if text.startswith("[") else shlex.split(text)


def build_root(binary, root):
    """The root from the COPY lines; returns (command, env, user)."""
    entrypoint, cmd, env, user = [], [], {}, "0:0"
    for word, rest in runtime_stage():
        if word == "COPY":
            args = rest.split()
            sources, dest = args[:-1], args[-1]
            stage = next((a.split("=", 1)[1] for a in sources if a.startswith("--from=")), None)
            sources = [a for a in sources if not a.startswith("--")]
            for src in sources:
                if stage is not None:
                    # The build stage installs the release binary at /out/mcp-runtime.
                    if src != "/out/mcp-runtime":
                        sys.exit(f"FAILED: COPY --from={stage} {src}: this check knows only /out/mcp-runtime")
                    files = [Path(binary)]
                else:
                    files = sorted(ROOT.glob(src))
                    if not files:
                        sys.exit(f"FAILED: COPY {src}: nothing in the build context matches")
                for f in files:
                    target = root / dest.lstrip("/")
                    if dest.endswith("/"):
                        target = target / f.name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(f, target)
        elif word == "ENV":
            for k, v in re.findall(r'(\w+)=("[^"]*"|\S+)', rest):
                env[k] = v.strip('"')
        elif word == "USER":
            user = rest
        elif word == "ENTRYPOINT":
            entrypoint = exec_form(rest)
        elif word == "CMD":
            cmd = exec_form(rest)
        elif word in ("ARG", "LABEL", "EXPOSE", "HEALTHCHECK", "STOPSIGNAL"):
            pass
        else:
            sys.exit(f"FAILED: {word} in the runtime stage: teach tests/deploy/image_root.py what it puts in the image")
    # The base image's part: the C libraries the binary links (as distroless/cc has them).
    ldd = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    for lib in re.findall(r"(/\S+)", ldd):
        target = root / lib.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.realpath(lib), target)
    (root / "etc").mkdir(exist_ok=True)
    (root / "etc/passwd").write_text(PASSWD)
    (root / "etc/group").write_text(GROUP)
    (root / "tmp").mkdir(mode=0o1777, exist_ok=True)
    os.chmod(root / "tmp", 0o1777)
    (root / "home/nonroot").mkdir(parents=True, exist_ok=True)
    os.chown(root / "home/nonroot", 65532, 65532)
    return entrypoint + cmd, env, user


def mcp(port, method, params, name=None):
    """One 2026-07-28 request; the parsed JSON-RPC answer."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if name:
        headers["mcp-name"] = name
    req = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", json.dumps(body).encode(), headers)
    with urllib.request.urlopen(req, timeout=10) as res:
        return json.loads(res.read())


def inside(root, user, env, command):
    """In the new network namespace: loopback up, the command in the chroot, probes."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    listen = command[command.index("--listen") + 1] if "--listen" in command else "127.0.0.1:8080"
    port = int(listen.rsplit(":", 1)[1])
    log = open(Path(root).parent / "runtime.log", "w+")
    # The image's environment only (ENV lines): nothing of this host's leaks in.
    chroot = shutil.which("chroot") or "/usr/sbin/chroot"
    proc = subprocess.Popen([chroot, f"--userspec={user}", root, *command], env=env, stdout=log, stderr=log)
    try:
        for _ in range(100):
            if proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        else:
            raise SystemExit("FAILED: not ready within 10 s")
        if proc.poll() is not None:
            raise SystemExit(f"FAILED: the image's command exited with {proc.returncode}")
        tools = mcp(port, "tools/list", {})["result"]["tools"]
        for tool in tools:
            # A value of the declared type for every property (a missing optional one may ask
            # the user, and this client declares no elicitation).
            props = tool.get("inputSchema", {}).get("properties", {})
            args = {k: 1 if p.get("type") in ("number", "integer") else "Ada" for k, p in props.items()}
            answer = mcp(port, "tools/call", {"name": tool["name"], "arguments": args}, tool["name"])
            result = answer.get("result", {})
            if "error" in answer or result.get("isError"):
                raise SystemExit(f"FAILED: {tool['name']} answered {answer}")
            print(f"  {tool['name']}: ok")
        print(f"image root: the default command serves {len(tools)} tools as {user}")
    except BaseException:
        log.seek(0)
        print(log.read(), file=sys.stderr)
        raise
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--inside":
        root, user, env_json = sys.argv[2], sys.argv[3], sys.argv[4]
        inside(root, user, json.loads(env_json), sys.argv[5:])
        return
    binary = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "target/debug/mcp-runtime")
    if not binary.is_file():
        sys.exit(f"FAILED: no runtime binary at {binary}")
    base = ROOT / "target/image-root"
    base.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=base) as scratch:
        root = Path(scratch) / "root"
        root.mkdir()
        os.chmod(scratch, 0o755)
        command, env, user = build_root(binary, root)
        print("image root:", " ".join(sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())))
        print("command:", shlex.join(command))
        subprocess.run(
            ["unshare", "--net", sys.executable, __file__, "--inside", str(root), user, json.dumps(env), *command],
            check=True,
        )


if __name__ == "__main__":
    main()
