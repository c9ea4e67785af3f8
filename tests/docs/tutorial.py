#!/usr/bin/env python3
"""Runs a tutorial page as written: its fenced `bash` blocks in order in one bash (from the
repository root), its `toml file=NAME` blocks written to NAME where the shell is at that
point, and checks that every line of each `text` block appears in the page's stdout, in order,
as tests/docs/blocks.py compares output (`...` stands for any text within a line). stderr is
the terminal's too, but not compared: log lines may come and go there.

In a network namespace of its own (loopback only) where port 8080 is already taken by the
README's server (`mcp-runtime` with the embedded default, as `cargo run` leaves it running): the
page must use ports of its own, and none of its calls may reach that server. TMPDIR is a new
folder, so a page that works in `mktemp -d` starts from nothing. Background jobs the page
leaves are stopped.

Usage: python3 tests/docs/tutorial.py [docs/first-tools.md]
Env:   MCP_RUNTIME_BIN  the server that takes 8080 (default target/debug/mcp-runtime)
"""

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from blocks import Failed, expect_lines  # noqa: E402 - the one way output blocks are compared

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("MCP_RUNTIME_BIN", ROOT / "target/debug/mcp-runtime")).resolve()
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```\s*$", re.S | re.M)

# Inside the namespace: the README's server on 8080 first, then the page ($0), then proof that
# the server on 8080 is still the one the harness started.
OUTER = r"""
ip link set lo up
"$BIN" >"$SQUAT_LOG" 2>&1 &
squat=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:8080/readyz >/dev/null && break; sleep 0.1; done
curl -sf http://127.0.0.1:8080/readyz >/dev/null || { cat "$SQUAT_LOG" >&2; echo "TUTORIAL: the server on 8080 did not start" >&2; exit 97; }
bash -c "$0"
rc=$?
kill -0 $squat 2>/dev/null || { echo "TUTORIAL: the server on 8080 is gone" >&2; exit 98; }
kill $squat
exit $rc
"""


def script_and_expected(page):
    parts = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT", f"cd {ROOT}"]
    expected = []
    for m in FENCE.finditer(page.read_text()):
        lang, info, body = m.group(1), m.group(2).strip(), m.group(3)
        if lang == "bash":
            # A reader takes a moment between commands; logs written off the request path
            # (call lines, within 50 ms) are there by then, as they are for a person.
            parts.append("sleep 0.2")
            parts.append(body)
        elif lang == "toml" and info.startswith("file="):
            name = info.split("=", 1)[1]
            parts.append(f"cat > {name} <<'TUTORIAL_EOF'\n{body}TUTORIAL_EOF")
        elif lang == "text":
            expected.append(body)
    return "\n".join(parts) + "\n", expected


def main():
    page = ROOT / (sys.argv[1] if len(sys.argv) > 1 else "docs/first-tools.md")
    script, expected = script_and_expected(page)
    if not expected:
        sys.exit(f"FAILED: {page} has no `text` block to check")
    if not BIN.exists():
        sys.exit(f"FAILED: {BIN} is missing: it takes port 8080 while the tutorial runs (cargo build first)")
    with tempfile.TemporaryDirectory(prefix="tutorial-") as tmp:
        squat_log = Path(tmp) / "server-on-8080.log"
        fresh = Path(tmp) / "tmp"
        fresh.mkdir()
        env = dict(os.environ, BIN=str(BIN), SQUAT_LOG=str(squat_log), TMPDIR=str(fresh))
        run = subprocess.run(
            ["unshare", "--net", "bash", "-c", OUTER, script],
            capture_output=True,
            text=True,
            timeout=900,
            env=env,
        )
        squatted = squat_log.read_text() if squat_log.exists() else ""
    out = run.stdout
    if run.returncode != 0:
        sys.exit(f"FAILED: {page} exited with {run.returncode}\n--- stdout\n{out}\n--- stderr\n{run.stderr[-4000:]}")
    reached = [line for line in squatted.splitlines() if "mcp_runtime::call" in line]
    if reached:
        sys.exit(f"FAILED: {page}: calls reached the other server on 8080:\n" + "\n".join(reached))
    try:
        expect_lines("\n".join(expected), out, f"{page}: its stdout")
    except Failed as e:
        sys.exit(f"FAILED: {e}")
    lines = sum(1 for block in expected for line in block.splitlines() if line.strip())
    print(
        f"ok  {page.relative_to(ROOT)}: every command ran as written, from a fresh folder, with port 8080 "
        f"taken by another server that none of its calls reached; {lines} expected lines seen"
    )


if __name__ == "__main__":
    main()
