#!/usr/bin/env python3
"""Runs a tutorial page as written: its fenced `bash` blocks in order in one bash (from the
repository root), its `toml file=NAME` blocks written to NAME where the shell is at that
point, and checks that every line of each `text` block appears in the output, in order.
In a network namespace of its own (loopback only), so the page's fixed ports cannot collide
with anything else on the machine; background jobs the page leaves are stopped.

Usage: python3 tests/docs/tutorial.py [docs/first-tools.md]
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```\s*$", re.S | re.M)


def script_and_expected(page):
    parts = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT", f"cd {ROOT}"]
    expected = []
    for m in FENCE.finditer(page.read_text()):
        lang, info, body = m.group(1), m.group(2).strip(), m.group(3)
        if lang == "bash":
            parts.append(body)
        elif lang == "toml" and info.startswith("file="):
            name = info.split("=", 1)[1]
            parts.append(f"cat > {name} <<'TUTORIAL_EOF'\n{body}TUTORIAL_EOF")
        elif lang == "text":
            expected.extend(line.strip() for line in body.splitlines() if line.strip())
    return "\n".join(parts) + "\n", expected


def main():
    page = ROOT / (sys.argv[1] if len(sys.argv) > 1 else "docs/first-tools.md")
    script, expected = script_and_expected(page)
    if not expected:
        sys.exit(f"FAILED: {page} has no `text` block to check")
    run = subprocess.run(
        ["unshare", "--net", "bash", "-c", 'ip link set lo up && exec bash -c "$0"', script],
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = run.stdout
    if run.returncode != 0:
        sys.exit(f"FAILED: {page} exited with {run.returncode}\n--- stdout\n{out}\n--- stderr\n{run.stderr[-4000:]}")
    at = 0
    for line in expected:
        found = out.find(line, at)
        if found < 0:
            sys.exit(f"FAILED: {page}: expected, in order, `{line}` in:\n{out}")
        at = found + len(line)
    print(f"ok  {page.relative_to(ROOT)}: every command ran as written, {len(expected)} expected lines seen")


if __name__ == "__main__":
    main()
