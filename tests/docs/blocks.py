#!/usr/bin/env python3
"""Docs are executed: every fenced block of README.md and docs/ (docs/adapters/ included) is
run, checked, or marked as an illustration by its info string; a block that is none of these
fails, and so does a wrong one. A failure names the page, the block's line and what went wrong.

Everything runs in a network namespace of its own (loopback only, no way out): the ports the
pages write (8080, 6274, ...) are free, example hosts are unreachable, and nothing here can
reach the registries. The real binary (target/debug/mcp-runtime), the real SDKs and tools at
the pins of tests/interop/setup.sh ($INTEROP_DIR), real processes on loopback.

The info string is the language, then words (`key=value`, quoted like a shell's words):

  toml                      a complete config file: `mcp-runtime --config F check`, online (its
                            secrets resolved, adapters built, programs found); fails on a
                            non-zero exit. Each variable a `*_env` key names (secret_env, ...)
                            is set to a random base64 of 32 bytes (a valid key, token or
                            password). Runs in the page's folder (below).
    file=NAME               written as NAME in the page's folder, where later blocks use it
    wrap=NAME               a fragment: checked inside the complete file WRAPPERS[NAME] (below)
    offline="why"           `check --offline`, where the file's programs, files or hosts are the
                            reader's own; the reason is required
  bash (sh, shell)          run by `bash` with `set -euo pipefail` in the page's folder; must
                            exit 0 within BLOCK_TIMEOUT
    runtime=NAME            with RUNTIMES[NAME] (below) serving on 127.0.0.1:8080 meanwhile
    serve=URL               the block runs a server in the foreground: it passes once URL
                            answers (any HTTP status), then it is stopped; if the process exits
                            first, its output is the failure. An MCP URL (…/mcp) is then listed
                            by a real client (tests/docs/client.py, the Python SDK)
    tools=A,B               with serve=: these tools must be listed (any URL given tools= is an
                            MCP URL: a virtual endpoint's path need not end in /mcp)
  console                   `$ ` lines are commands (run as bash blocks), the lines after each
                            its expected output (see `text output`); takes runtime=
  js (javascript, mjs)      an ES module run by Node 22 ($INTEROP_DIR/bin/node), bare imports
                            resolved from the TypeScript SDK's install ($INTEROP_DIR/ts); must
                            exit 0; takes runtime=
  python                    run by the Python SDK's venv ($INTEROP_DIR/py); must exit 0; takes
                            runtime=
  json client-config        a desktop agent's MCP config: parsed, then each server entry is
                            connected by the Python SDK client as the agent would: a `url` entry
                            with its `headers`, a `command` entry (stdio) with its `args` and
                            `env`. `${input:ID}` (a declared VS Code input) and YOUR_TOKEN
                            stand for the token; takes runtime=
  yaml helm-values          a values file of helm/mcp-runtime: `helm template` with it, every
                            document validated for Kubernetes 1.30 and 1.37, the rendered config
                            through `mcp-runtime check`, served, and the `helm test` request
                            answered (tests/deploy/manifests.py, configs.py; helm and the venv
                            from target/ci-tools, installed by tests/deploy/checks.sh)
  nginx wrap=NAME           a fragment of an nginx config: run inside NGINX[NAME] by a real
                            nginx on 127.0.0.1:8080 in front of a runtime, and a real client
                            lists the tools through it
  text output               the expected output of the runnable block before it on the page:
                            each non-empty line must appear in that output, in order; `...`
                            stands for any text within a line, runs of spaces match any spacing
  text check=NAME           the expected output (as `text output`) of `mcp-runtime check` on the
                            complete file CHECKED[NAME] (below)
  text tree                 a map of the repository: every path in its first column exists
                            (indented entries below the entry above them), and every workspace
                            member of Cargo.toml is on it
  text synopsis             the command line's synopsis: every subcommand and flag it names is
                            in that subcommand's --help
  ANY illustration="why"    not run: only where running it here is impossible (a Docker engine,
                            a Kubernetes cluster, an agent's own CLI); the reason is required

Stand-ins, the same for every page: `npx PKG@VERSION` runs the package tests/interop/setup.sh
installed, under its Node 22, and fails unless the page pins exactly that version (npx without
a version installs whatever is newest for the Node at hand); `cargo run --release` runs as
`cargo run` at the repository root (the same code; the release build's whole-program
optimisation takes minutes). Each page gets a folder of its own whose entries link to the
repository root's (so `tests/fixtures/...` resolves as the page says), HOME inside it, and
MCP_TOKEN (a random token; RUNTIMES take it as their bearer token). Pages listed in TUTORIALS
are run as a whole by their own harness; here their blocks are only held to its kinds.

Usage: python3 tests/docs/blocks.py [--list] [PAGE ...]
  --list   print every block with its classification, run nothing
Env:   INTEROP_DIR (default target/interop), MCP_RUNTIME_BIN (default target/debug/mcp-runtime)
"""

import base64
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("MCP_RUNTIME_BIN", ROOT / "target/debug/mcp-runtime")).resolve()
INTEROP = Path(os.environ.get("INTEROP_DIR", ROOT / "target/interop")).resolve()
NODE = INTEROP / "bin/node"
PYTHON = INTEROP / "py/bin/python"
CI_TOOLS = ROOT / "target/ci-tools"
CLIENT = ROOT / "tests/docs/client.py"

BLOCK_TIMEOUT = 120
SERVE_TIMEOUT = 300  # `cargo run` may have to build first

TUTORIALS = {"docs/first-tools.md": "tests/docs/tutorial.py"}

# The runtimes blocks run against (`runtime=NAME`), on 127.0.0.1:8080 as the pages write it.
AUTH = '\n[auth]\n[[auth.tokens]]\nsubject = "docs"\nsecret_env = "MCP_TOKEN"\n'
RUNTIMES = {
    # The README's server (the embedded default, demo tools), with a bearer token: the
    # client pages show the header "with [auth] only", so the header is proven to work.
    "demo-auth": lambda: (ROOT / "service/config/default.toml").read_text() + AUTH,
    # The compose replicas' config (demo + conformance fixtures, one key ring), one replica.
    "compose": lambda: (ROOT / "docker/runtime.toml").read_text(),
    # The skills adapter page's folder (docs/adapters/skills.md).
    "skills": lambda: f'[[adapters]]\nname = "skills"\nkind = "skills"\nroot = "{ROOT / "tests/fixtures/skills"}"\n',
}

# Complete files that fragments are checked inside (`wrap=NAME`): {block} is the fragment.
WRAPPERS = {
    # A `[[adapters.tools]]` entry of a CLI adapter.
    "cli-adapter": '[[adapters]]\nname = "files"\nkind = "cli"\n\n{block}',
    # Limits for `search_text`: the CLI adapter page's grep tool serves it.
    "search-text": """{block}
[[adapters]]
name = "toolbox"
kind = "cli"

[[adapters.tools]]
name = "search_text"
description = "Prints the lines of a text that match a pattern (grep)."
executable = "grep"
args = ["--regexp={pattern}"]
stdin = "text"
input_schema = { type = "object", required = ["pattern", "text"], properties = { pattern = { type = "string" }, text = { type = "string" } } }
""",
}

# An `[[adapters]]` entry naming upstream `crm` of docs/user-auth.md's deployment.
WRAPPERS["user-auth-crm"] = """[auth]
resource = "https://mcp.example.com/mcp"
[[auth.issuers]]
issuer = "https://idp.example.com"

[user_auth]
public_url = "https://mcp.example.com"
[user_auth.sign_in]
issuer = "https://idp.example.com"
client_id = "mcp-runtime"

[[upstream_auth]]
name = "crm"
issuer = "https://login.crm.example"
client_id = "mcp-runtime"
client_secret_env = "CRM_CLIENT_SECRET"

{block}"""

# Files whose `check` output a `text check=NAME` block shows: (file name, content).
CHECKED = {
    # configuration.md: a CLI tool's timeout written as a string, on line 12.
    "timeout-as-string": (
        "first.toml",
        """[server]
name = "my-first-server"

[[adapters]]
name = "clock"
kind = "cli"

[[adapters.tools]]
name = "utc_now"
description = "The time in UTC."
executable = "date"
timeout_ms = "5000"
args = ["-u"]
""",
    ),
    # adapters/cli.md: a loader variable in env_allow without the opt-in.
    "loader-variable": (
        "toolbox.toml",
        """[[adapters]]
name = "tb"
kind = "cli"

[[adapters.tools]]
name = "t"
description = "Prints its input."
executable = "cat"
env_allow = ["PHPRC"]
""",
    ),
}

# nginx configs that `nginx wrap=NAME` fragments are run inside: {block} is the fragment,
# {dir} the scratch folder, {port} the runtime's port.
NGINX = {
    # A `location` of a server on 127.0.0.1:8080, upstream `mcp-runtime` one replica.
    "server": """daemon off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log info;
events {{ worker_connections 64; }}
http {{
    access_log {dir}/access.log;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    upstream mcp-runtime {{ server 127.0.0.1:{port}; }}
    server {{
        listen 127.0.0.1:8080;
{block}
    }}
}}
""",
}

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")
LANGS = {
    "toml": "toml", "bash": "bash", "sh": "bash", "shell": "bash", "console": "console",
    "js": "js", "javascript": "js", "mjs": "js", "python": "python", "py": "python",
    "json": "json", "yaml": "yaml", "nginx": "nginx", "text": "text",
}


class Failed(Exception):
    """A block is wrong: the message says what went wrong."""


class Block:
    def __init__(self, page, line, info, body):
        self.page, self.line, self.info, self.body = page, line, info.strip(), body
        words = shlex.split(self.info) if self.info else []
        self.lang = words[0] if words else ""
        self.flags, self.opts = set(), {}
        for w in words[1:]:
            if "=" in w:
                k, v = w.split("=", 1)
                self.opts[k] = v
            else:
                self.flags.add(w)

    @property
    def where(self):
        return f"{self.page}:{self.line}"

    def classify(self):
        """What the harness does with the block (a short label), or Failed when the info
        string is not one of the conventions."""
        if "illustration" in self.opts:
            if not self.opts["illustration"].strip():
                raise Failed("illustration needs its reason: illustration=\"why it cannot run here\"")
            return f"illustration ({self.opts['illustration']})"
        if "illustration" in self.flags:
            raise Failed("illustration needs its reason: illustration=\"why it cannot run here\"")
        if self.page in TUTORIALS:
            ok = self.lang == "bash" and not self.opts or self.lang == "text" and not self.info[4:].strip() \
                or self.lang == "toml" and set(self.opts) == {"file"}
            if not ok:
                raise Failed(f"{TUTORIALS[self.page]} runs bash, `toml file=NAME` and text blocks only, not `{self.info}`")
            return f"tutorial: `{self.info}`, run in order by {TUTORIALS[self.page]}"
        kind = LANGS.get(self.lang)
        allowed = {
            "toml": ({"file", "wrap", "offline"}, set()),
            "bash": ({"runtime", "serve", "tools"}, set()),
            "console": ({"runtime"}, set()),
            "js": ({"runtime"}, set()),
            "python": ({"runtime"}, set()),
            "json": ({"runtime"}, {"client-config"}),
            "yaml": (set(), {"helm-values"}),
            "nginx": ({"wrap"}, set()),
            "text": ({"check"}, {"output", "tree", "synopsis"}),
        }.get(kind)
        if allowed is None:
            raise Failed(f"`{self.info or '(no info string)'}`: not a kind the harness runs; "
                         'give a runnable language or illustration="why"')
        opts, flags = allowed
        extra = sorted(set(self.opts) - opts) + sorted(self.flags - flags)
        if extra:
            raise Failed(f"`{self.info}`: {', '.join(extra)} is not a word of a `{self.lang}` block")
        if "wrap" in self.opts and self.opts["wrap"] not in (NGINX if kind == "nginx" else WRAPPERS):
            raise Failed(f"wrap={self.opts['wrap']}: no such wrapper in tests/docs/blocks.py")
        if kind == "nginx" and "wrap" not in self.opts:
            raise Failed("an nginx block is a fragment: wrap=NAME")
        if "runtime" in self.opts and self.opts["runtime"] not in RUNTIMES:
            raise Failed(f"runtime={self.opts['runtime']}: no such runtime in tests/docs/blocks.py")
        if "offline" in self.opts and not self.opts["offline"].strip():
            raise Failed('offline needs its reason: offline="why it cannot be checked online"')
        if "tools" in self.opts and "serve" not in self.opts:
            raise Failed("tools= goes with serve=")
        if kind == "json" and "client-config" not in self.flags:
            raise Failed('a json block is a client-config, or illustration="why"')
        if kind == "yaml" and "helm-values" not in self.flags:
            raise Failed('a yaml block is helm-values, or illustration="why"')
        if kind == "text":
            chosen = [w for w in ("output", "tree", "synopsis") if w in self.flags] + (["check"] if "check" in self.opts else [])
            if len(chosen) != 1:
                raise Failed('a text block is one of: output, check=NAME, tree, synopsis, or illustration="why"')
            if "check" in self.opts and self.opts["check"] not in CHECKED:
                raise Failed(f"check={self.opts['check']}: no such file in CHECKED (tests/docs/blocks.py)")
        return " ".join([kind, *sorted(self.flags), *(f"{k}={v}" for k, v in sorted(self.opts.items()))])


def pages(only):
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs/adapters").glob("*.md"))]
    names = [str(p.relative_to(ROOT)) for p in found]
    for o in only:
        if o not in names:
            sys.exit(f"FAILED: {o} is not one of the pages ({', '.join(names)})")
    return [n for n in names if not only or n in only]


def blocks_of(page):
    lines = (ROOT / page).read_text().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m.group("fence"), len(m.group("indent"))
        j = i + 1
        while j < len(lines) and not re.match(rf"^ {{0,3}}{fence[0]}{{{len(fence)},}}\s*$", lines[j]):
            j += 1
        if j == len(lines):
            raise SystemExit(f"FAILED: {page}:{i + 1}: the fenced block is never closed")
        body = "\n".join(line[indent:] if line[:indent].isspace() else line for line in lines[i + 1:j])
        out.append(Block(page, i + 1, m.group("info"), body + "\n" if body else ""))
        i = j + 1
    return out


# ---------------------------------------------------------------- processes


def stop(proc, grace=10):
    """SIGTERM to the process group, SIGKILL after `grace` seconds."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run(cmd, cwd, env, timeout=BLOCK_TIMEOUT):
    """Runs cmd in a process group of its own; returns (exit status, stdout and stderr as one
    text). Whatever it left running is stopped."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(proc, grace=2)
        raise Failed(f"still running after {timeout} s:\n{tail(proc.stdout.read() if proc.stdout else '')}")
    finally:
        stop(proc, grace=2)
    return proc.returncode, out


def tail(text, n=4000):
    text = text.rstrip()
    return text if len(text) <= n else "...\n" + text[-n:]


def answers(url):
    try:
        urllib.request.urlopen(url, timeout=2).close()
        return True
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, OSError):
        return False


def expect_lines(expected, actual, what):
    """Each non-empty line of `expected` appears in `actual`, in order (`...` is any text in a
    line, runs of spaces are any spacing)."""
    at = 0
    for line in (x.strip() for x in expected.splitlines()):
        if not line:
            continue
        pattern = r"[^\n]*?".join(r"\s+".join(map(re.escape, part.split())) for part in line.split("..."))
        m = re.compile(pattern).search(actual, at)
        if not m:
            raise Failed(f"{what}: expected, in order, `{line}` in:\n{tail(actual)}")
        at = m.end()


class Runtime:
    """`mcp-runtime serve` with one of RUNTIMES, until stopped."""

    def __init__(self, name, folder, env):
        self.config = folder / f"runtime-{name}.toml"
        self.config.write_text(RUNTIMES[name]())
        self.log = folder / f"runtime-{name}.log"
        env = dict(env, MCP_REQUEST_STATE_KEY=random_key())
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([BIN, "serve", "--config", self.config], cwd=folder, env=env,
                                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while "listening on" not in self.log.read_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                stop(self.proc)
                raise Failed(f"runtime={name} did not start:\n{tail(self.log.read_text())}")
            time.sleep(0.05)
        if "127.0.0.1:8080" not in self.log.read_text() and "0.0.0.0:8080" not in self.log.read_text():
            stop(self.proc)
            raise Failed(f"runtime={name} is not on port 8080:\n{tail(self.log.read_text())}")

    def stop(self):
        stop(self.proc)


def random_key():
    return base64.b64encode(secrets.token_bytes(32)).decode()


# ---------------------------------------------------------------- stand-ins


NPX_PARTS = {  # package → its folder under $INTEROP_DIR (tests/interop/setup.sh)
    "@modelcontextprotocol/inspector": "inspector",
    "@modelcontextprotocol/server-everything": "upstreams",
    "@modelcontextprotocol/server-filesystem": "upstreams",
    "mcp-remote": "mcp-remote",
}

NPX = '''#!/usr/bin/env python3
"""npx, as the docs harness runs it: the package versions tests/interop/setup.sh installed,
under its Node 22, offline. A page must pin the version (tests/docs/blocks.py)."""
import json, os, sys
NODE, INTEROP, PARTS = {node!r}, {interop!r}, {parts!r}
args = sys.argv[1:]
while args and args[0] in ("-y", "--yes"):
    args.pop(0)
if not args:
    sys.exit("npx (docs harness): no package named")
spec, rest = args[0], args[1:]
name, version = (spec.rsplit("@", 1) + [""])[:2] if spec.rfind("@") > 0 else (spec, "")
if name not in PARTS:
    sys.exit(f"npx (docs harness): {{name}} is not installed by tests/interop/setup.sh ({{', '.join(PARTS)}})")
d = os.path.join(INTEROP, PARTS[name], "node_modules", name)
m = json.load(open(os.path.join(d, "package.json")))
if version != m["version"]:
    sys.exit(f"npx (docs harness): the page runs {{spec}}, tests/interop/setup.sh pins {{name}}@{{m['version']}}"
             + ("" if version else ": pin the version (npx without one installs whatever is newest for your Node)"))
bins = m["bin"] if isinstance(m["bin"], dict) else {{name.split("/")[-1]: m["bin"]}}
bin = next(iter(bins.values())) if len(bins) == 1 else bins[name.split("/")[-1]]
os.execv(NODE, [NODE, os.path.join(d, bin), *rest])
'''

CARGO = '''#!/usr/bin/env python3
"""cargo, as the docs harness runs it: `cargo run --release ARGS` is `cargo run ARGS` at the
repository root (same code; the release build's whole-program optimisation takes minutes)."""
import os, sys
CARGO, ROOT, ENV = {cargo!r}, {root!r}, {env!r}
args = sys.argv[1:]
if args[:1] != ["run"]:
    sys.exit(f"cargo (docs harness): only `cargo run` is run here, not `cargo {{' '.join(args)}}`")
os.environ.update(ENV)
os.chdir(ROOT)
os.execv(CARGO, [CARGO, *[a for a in args if a != "--release"]])
'''


def stand_ins(folder):
    folder.mkdir(parents=True)
    cargo = shutil.which("cargo")
    real = {k: os.environ[k] for k in ("HOME", "CARGO_HOME", "RUSTUP_HOME") if k in os.environ}
    for name, text in (("npx", NPX.format(node=str(NODE), interop=str(INTEROP), parts=NPX_PARTS)),
                       ("cargo", CARGO.format(cargo=cargo, root=str(ROOT), env=real))):
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)


# ---------------------------------------------------------------- a page


class Page:
    def __init__(self, name, scratch, env):
        self.name = name
        self.dir = scratch / re.sub(r"[^A-Za-z0-9]+", "-", name)
        self.dir.mkdir()
        for entry in ROOT.iterdir():
            if entry.name not in (".git", "target"):
                (self.dir / entry.name).symlink_to(entry)
        (self.dir / "home").mkdir()
        self.env = dict(env, HOME=str(self.dir / "home"))
        self.last = None  # (block, output, whether it succeeded) of the last runnable block

    def with_runtime(self, block, fn):
        rt = Runtime(block.opts["runtime"], self.dir, self.env) if "runtime" in block.opts else None
        try:
            return fn()
        finally:
            if rt:
                rt.stop()

    def shell(self, script, timeout=BLOCK_TIMEOUT):
        return run(["bash", "-c", "set -euo pipefail\n" + script], self.dir, self.env, timeout)

    def client(self, *args, env=None):
        code, out = run([PYTHON, CLIENT, *args], self.dir, env or self.env, timeout=90)
        if code != 0:
            raise Failed(f"the Python SDK client ({' '.join(map(str, args[:2]))}) failed:\n{tail(out)}")
        return json.loads(out.strip().splitlines()[-1])["tools"]

    # One method per kind; each returns a short detail for the report, or raises Failed.

    def toml(self, b):
        name = b.opts.get("file", f"block-L{b.line}.toml")
        text = WRAPPERS[b.opts["wrap"]].replace("{block}", b.body) if "wrap" in b.opts else b.body
        (self.dir / name).write_text(text)
        env = dict(self.env, **{v: random_key() for v in re.findall(r'\b\w*_env\s*=\s*"(\w+)"', text)})
        cmd = [BIN, "--config", name, "check"] + (["--offline"] if "offline" in b.opts else [])
        code, out = run(cmd, self.dir, env)
        self.last = (b, out, code == 0)
        if code != 0:
            # Where the file's lines are on the page (a wrapper's own lines come first).
            before = text.split(b.body)[0].count("\n") if "wrap" in b.opts else 0
            lines = sorted({int(n) for n in re.findall(rf"--> {re.escape(name)}:(\d+)", out)})
            on_page = [f"{name}:{n} is {b.page}:{b.line + n - before}" for n in lines if n > before]
            raise Failed(f"`mcp-runtime --config {name} check{' --offline' if 'offline' in b.opts else ''}` "
                         f"exited with {code}{' (' + '; '.join(on_page) + ')' if on_page else ''}:\n{tail(out)}")
        first = next((line for line in out.splitlines() if line.startswith(name)), "")
        return first[len(name) + 2:] if first else "ok"

    def bash(self, b):
        if "serve" in b.opts:
            return self.with_runtime(b, lambda: self.serve(b))

        def go():
            code, out = self.shell(b.body)
            self.last = (b, out, code == 0)
            if code != 0:
                raise Failed(f"exited with {code}:\n{tail(out)}")
            return f"exit 0, {len(out.splitlines())} lines of output"

        return self.with_runtime(b, go)

    def serve(self, b):
        url, log = b.opts["serve"], self.dir / f"serve-L{b.line}.log"
        with open(log, "w") as f:
            proc = subprocess.Popen(["bash", "-c", "set -euo pipefail\n" + b.body], cwd=self.dir, env=self.env,
                                    stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + SERVE_TIMEOUT
            while not answers(url):
                if proc.poll() is not None:
                    raise Failed(f"exited with {proc.returncode} before {url} answered:\n{tail(log.read_text())}")
                if time.monotonic() > deadline:
                    raise Failed(f"{url} did not answer within {SERVE_TIMEOUT} s:\n{tail(log.read_text())}")
                time.sleep(0.2)
            # An MCP URL: `…/mcp`, or a virtual endpoint's whose tools the block names.
            if not (url.rstrip("/").endswith("/mcp") or "tools" in b.opts):
                return f"{url} answers"
            tools = self.client("http", url)
            missing = [t for t in b.opts.get("tools", "").split(",") if t and t not in tools]
            if missing:
                raise Failed(f"{url} does not list {', '.join(missing)}; it lists {', '.join(tools)}")
            return f"{url} answers; the Python SDK lists {len(tools)} tools"
        finally:
            stop(proc)

    def console(self, b):
        steps, cmd = [], None
        for line in b.body.splitlines():
            if line.startswith("$ "):
                cmd = [line[2:]]
                steps.append((cmd, []))
            elif cmd is not None and cmd[-1].endswith("\\"):
                cmd.append(line)
            elif steps:
                steps[-1][1].append(line)
            else:
                raise Failed(f"a console block starts with a `$ ` command, not `{line}`")

        def go():
            for cmd, expected in steps:
                code, out = self.shell("\n".join(cmd))
                if code != 0:
                    raise Failed(f"`{cmd[0]}` exited with {code}:\n{tail(out)}")
                expect_lines("\n".join(expected), out, f"the output of `{cmd[0]}`")
            return f"{len(steps)} command(s), their output as shown"

        return self.with_runtime(b, go)

    def snippet(self, b, suffix, interpreter):
        path = self.dir / f"snippet-L{b.line}{suffix}"
        path.write_text(b.body)

        def go():
            code, out = run([interpreter, path.name], self.dir, self.env, timeout=90)
            self.last = (b, out, code == 0)
            if code != 0:
                raise Failed(f"`{Path(interpreter).name} {path.name}` exited with {code}:\n{tail(out)}")
            return f"exit 0 ({Path(interpreter).name})"

        return self.with_runtime(b, go)

    def js(self, b):
        modules = self.dir / "node_modules"
        if not modules.exists():
            modules.symlink_to(INTEROP / "ts/node_modules")
        return self.snippet(b, ".mjs", NODE)

    def python(self, b):
        return self.snippet(b, ".py", PYTHON)

    def json(self, b):
        try:
            doc = json.loads(b.body)
        except ValueError as e:
            raise Failed(f"not JSON: {e}")
        servers = doc.get("servers") or doc.get("mcpServers")
        if not isinstance(servers, dict) or not servers:
            raise Failed("no `servers` / `mcpServers` entries")
        inputs = {i.get("id") for i in doc.get("inputs", [])}
        token = self.env["MCP_TOKEN"]

        def fill(value):
            for ref in re.findall(r"\$\{input:([^}]*)\}", value):
                if ref not in inputs:
                    raise Failed(f"${{input:{ref}}} is not one of the declared `inputs`")
            return re.sub(r"\$\{input:[^}]*\}", token, value).replace("YOUR_TOKEN", token)

        def go():
            done = []
            for name, s in servers.items():
                if "url" in s:
                    if s.get("type", "http") != "http":
                        raise Failed(f"{name}: type {s['type']!r}: the runtime speaks Streamable HTTP (\"http\")")
                    headers = [f"{k}: {fill(v)}" for k, v in s.get("headers", {}).items()]
                    tools = self.client("http", fill(s["url"]), *headers)
                    done.append(f"{name}: {s['url']} over HTTP, {len(tools)} tools")
                elif "command" in s:
                    env = dict(self.env, **{k: fill(v) for k, v in s.get("env", {}).items()})
                    tools = self.client("stdio", s["command"], *s.get("args", []), env=env)
                    done.append(f"{name}: {s['command']} {s['args'][0] if s.get('args') else ''} over stdio, {len(tools)} tools")
                else:
                    raise Failed(f"{name}: neither `url` nor `command`")
            return "; ".join(done)

        return self.with_runtime(b, go)

    def yaml(self, b):
        helm, py = CI_TOOLS / "helm/helm", CI_TOOLS / "venv/bin/python"
        if not helm.exists() or not py.exists():
            raise Failed(f"helm or the tools venv is missing under {CI_TOOLS}: run `bash tests/deploy/checks.sh` first")
        d = self.dir / f"helm-L{b.line}"
        d.mkdir()
        (d / "values.yaml").write_text(b.body)
        env = dict(self.env, **{f"HELM_{k}_HOME": str(CI_TOOLS / f"helm-home/{k.lower()}") for k in ("CACHE", "CONFIG", "DATA")})
        code, out = run([helm, "template", "mcp", ROOT / "helm/mcp-runtime", "--namespace", "mcp", "-f", d / "values.yaml",
                         "--set", f"requestState.keyRing.mountPath={d}/keys"], self.dir, env)
        if code != 0:
            raise Failed(f"helm template with these values exited with {code}:\n{tail(out)}")
        (d / "rendered.yaml").write_text(out)
        for args in (["manifests.py", "validate", d / "rendered.yaml", "1.30", "1.37"],
                     ["configs.py", "chart", d / "rendered.yaml", BIN, d]):
            code, out = run([py, *args], ROOT / "tests/deploy", env)
            if code != 0:
                raise Failed(f"tests/deploy/{args[0]} {args[1]} on the rendered chart exited with {code}:\n{tail(out)}")
        return "helm template, valid for Kubernetes 1.30 and 1.37, its config checked and served"

    def nginx(self, b):
        d = self.dir / f"nginx-L{b.line}"
        d.mkdir()
        d.chmod(0o755)  # nginx's workers run as nobody when started by root
        (d / "listen.toml").write_text('[[adapters]]\nkind = "fixtures"\nset = "demo"\n')
        with open(d / "runtime.log", "w") as log:
            rt = subprocess.Popen([BIN, "serve", "--config", d / "listen.toml", "--listen", "127.0.0.1:0"], cwd=d,
                                  env=self.env, stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True)
        nginx = None
        try:
            line = rt.stdout.readline()
            port = re.search(r"127\.0\.0\.1:(\d+)", line)
            if not port:
                raise Failed(f"the runtime behind nginx did not start: {line!r}")
            block = "\n".join("        " + x for x in b.body.splitlines())
            (d / "nginx.conf").write_text(NGINX[b.opts["wrap"]].format(block=block, dir=d, port=port.group(1)))
            binary = shutil.which("nginx") or "/usr/sbin/nginx"  # root's PATH has sbin, others may not
            nginx = subprocess.Popen([binary, "-p", d, "-c", d / "nginx.conf", "-e", d / "error.log"], cwd=d,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            deadline = time.monotonic() + 10
            while not answers("http://127.0.0.1:8080/healthz"):
                if nginx.poll() is not None or time.monotonic() > deadline:
                    raise Failed(f"nginx did not start with the block:\n{tail((d / 'error.log').read_text())}")
                time.sleep(0.05)
            try:
                tools = self.client("http", "http://127.0.0.1:8080/mcp")
            except Failed as e:
                raise Failed(f"{e}\n--- the runtime behind nginx:\n{tail((d / 'runtime.log').read_text(), 2000)}")
            return f"nginx -> runtime: the Python SDK lists {len(tools)} tools through it"
        finally:
            if nginx:
                stop(nginx)
            stop(rt)

    def text(self, b):
        if "output" in b.flags:
            if not self.last:
                raise Failed("`text output` follows no runnable block on this page")
            before, out, ok = self.last
            if not ok:
                raise Failed(f"not compared: the block at line {before.line} failed (above)")
            expect_lines(b.body, out, f"the output of the block at line {before.line}")
            return f"seen in the output of line {before.line}"
        if "check" in b.opts:
            name, content = CHECKED[b.opts["check"]]
            d = self.dir / f"check-L{b.line}"
            d.mkdir()
            (d / name).write_text(content)
            _, out = run([BIN, "--config", name, "check"], d, self.env)
            expect_lines(b.body, out, f"`mcp-runtime --config {name} check` on CHECKED[{b.opts['check']!r}]")
            return f"the output of check on CHECKED[{b.opts['check']!r}]"
        if "tree" in b.flags:
            return self.tree(b)
        return self.synopsis(b)

    def tree(self, b):
        base, seen = None, set()
        for line in b.body.splitlines():
            indent = len(line) - len(line.lstrip())
            head = re.split(r"\s{2,}", line.strip())[0].split()
            if not line.strip() or indent >= 10 or not all("/" in t or "." in t for t in head):
                continue  # a description, or its continuation
            for token in head:
                path = token if indent == 0 else (base or "") + token
                if indent and not base:
                    raise Failed(f"`{token}` is indented below no folder")
                if not (ROOT / path).exists():
                    raise Failed(f"`{path}` does not exist")
                seen.add(path.rstrip("/"))
            if indent == 0:
                base = head[0] if head[0].endswith("/") else None
        members = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["members"]
        missing = [m for m in members if m.rstrip("/") not in seen]
        if missing:
            raise Failed(f"workspace members not on the map: {', '.join(missing)}")
        return f"{len(seen)} paths exist, every workspace member is on it"

    def synopsis(self, b):
        subcommands = {"serve", "check", "config-schema"}
        n = 0
        for line in b.body.splitlines():
            head = re.split(r"\s{2,}", line.strip())[0]
            if not head.startswith("mcp-runtime"):
                continue
            words = [w.strip("[]") for w in head.split()]
            sub = next((w for w in words if w in subcommands), None)
            code, out = run([BIN, *([sub] if sub else []), "--help"], self.dir, self.env)
            for flag in re.findall(r"--[a-z][a-z-]*", head):
                if flag not in out:
                    raise Failed(f"`{head}`: `mcp-runtime {sub or ''} --help` has no {flag}:\n{out}")
            n += 1
        return f"{n} forms, every flag in --help"


def main():
    args = sys.argv[1:]
    listing = "--list" in args
    only = [a for a in args if a != "--list"]
    todo = [(p, blocks_of(p)) for p in pages(only)]
    if listing:
        for page, blocks in todo:
            for b in blocks:
                try:
                    what = b.classify()
                except Failed as e:
                    what = f"UNCLASSIFIED: {e}"
                print(f"{b.where:32} {what}")
        return
    if os.environ.get("DOCS_BLOCKS_NETNS") != "1":
        # Again, inside a network namespace of its own with only loopback up.
        env = dict(os.environ, DOCS_BLOCKS_NETNS="1")
        cmd = ["unshare", "--net", "bash", "-c", 'ip link set lo up && exec "$@"', "-", sys.executable, __file__, *args]
        os.execvpe("unshare", cmd, env)
    for part in (BIN, NODE, PYTHON):
        if not part.exists():
            sys.exit(f"FAILED: {part} is missing (build the runtime; bash tests/interop/setup.sh)")
    t0 = time.monotonic()
    failures, count = [], 0
    with tempfile.TemporaryDirectory(prefix="docs-blocks-") as tmp:
        scratch = Path(tmp)
        stand_ins(scratch / "bin")
        env = dict(os.environ, PATH=f"{scratch / 'bin'}:{BIN.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                   MCP_TOKEN=random_key(), MCP_AUTO_OPEN_ENABLED="false", NO_COLOR="1",
                   npm_config_update_notifier="false", PYTHONDONTWRITEBYTECODE="1")
        for page, blocks in todo:
            p = Page(page, scratch, env)
            for b in blocks:
                count += 1
                t = time.monotonic()
                try:
                    what = b.classify()
                    if what.startswith(("illustration", "tutorial")):
                        print(f"--  {b.where:32} {what}", flush=True)
                        continue
                    detail = getattr(p, LANGS[b.lang])(b)
                    print(f"ok  {b.where:32} {b.info}: {detail} [{time.monotonic() - t:.1f}s]", flush=True)
                except Failed as e:
                    failures.append(b)
                    print(f"FAILED {b.where} ```{b.info}\n{e}\n", flush=True)
                except Exception:  # noqa: BLE001 - a harness error, still named by its block
                    failures.append(b)
                    print(f"FAILED {b.where} ```{b.info}\nthe harness failed on it:\n{traceback.format_exc()}", flush=True)
    took = time.monotonic() - t0
    if failures:
        sys.exit(f"FAILED: {len(failures)} of {count} blocks: {', '.join(b.where for b in failures)} [{took:.0f}s]")
    print(f"ok  every block of {len(todo)} pages ran, checked or is an illustration: {count} blocks [{took:.0f}s]")


if __name__ == "__main__":
    main()
