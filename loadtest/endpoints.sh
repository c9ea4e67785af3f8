#!/usr/bin/env bash
# What a virtual endpoint ([[endpoints]]) costs a call, in one bounded run on loopback (release
# binary; not part of CI's pass/fail). One runtime (the embedded default's demo tools, RUST_LOG=warn)
# serves tools/call echo at three paths; wrk (loadtest/wrk/mcp.lua, 32 connections; the server on
# CPU 0, wrk on CPU 1) runs each in interleaved rounds, and each path is reported as a ratio to
# /mcp in the same round (median of the paired ratios):
#   - main        /mcp, echo as the catalog has it
#   - overridden  /mcp/bench-a: echo with its title, description and annotations overridden
#   - renamed     /mcp/bench-b: echo renamed `say` (the call runs the catalog's echo), among
#                 other tools renamed and with arguments fixed
#
# Usage: bash loadtest/endpoints.sh [--rounds N (7)] [--duration SECONDS (3)] [--bin PATH]
# Environment: OUT (default target/bench/endpoints-<UTC time>): logs, config, results.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
# shellcheck source=lib/procs.sh
source "$ROOT/loadtest/lib/procs.sh"
# shellcheck source=lib/rounds.sh
source "$ROOT/loadtest/lib/rounds.sh"

ROUNDS=7 DURATION=3 BIN=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) ROUNDS="$2"; shift ;;
        --duration) DURATION="$2"; shift ;;
        --bin) BIN=$(realpath "$2"); shift ;;
        -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done
OUT=$(realpath -m "${OUT:-$ROOT/target/bench/endpoints-$(date -u +%Y%m%dT%H%M%SZ)}")
WORK="$OUT/work"
mkdir -p "$WORK"
trap stop_all EXIT
if [[ -z "$BIN" ]]; then
    build_release
    BIN="$ROOT/target/release/mcp-runtime"
fi
bash "$ROOT/loadtest/install-tools.sh" wrk
PIN=() WRK_PIN=()
if command -v taskset >/dev/null && [[ $(nproc) -ge 2 ]]; then PIN=(taskset -c 0); WRK_PIN=(taskset -c 1); fi
RESULTS="$OUT/results.md"
row() { echo "$*" | tee -a "$RESULTS"; }

cat "$ROOT/service/config/default.toml" - >"$WORK/endpoints.toml" <<'TOML'

[[endpoints]]
path = "/mcp/bench-a"
adapters = ["demo"]

[endpoints.tools.echo]
title = "Echo"
description = "Say the text back, word for word."
annotations = { idempotentHint = true }

[[endpoints]]
path = "/mcp/bench-b"

[endpoints.tools.echo]
name = "say"
description = "Say the text back."

[endpoints.tools.add]
name = "increment"
arguments = { b = 1 }
TOML
"$BIN" check --config "$WORK/endpoints.toml" >"$WORK/check.out" || die "the benchmark's config does not check: $(cat "$WORK/check.out")"
RUST_LOG=warn "${PIN[@]}" "$BIN" serve --config "$WORK/endpoints.toml" --listen 127.0.0.1:0 >"$WORK/server.out" 2>"$WORK/server.log" &
PIDS+=($!)
for _ in $(seq 200); do
    base=$(sed -n 's#^mcp-runtime listening on \(http://[^/]*\)/.*#\1#p' "$WORK/server.out")
    [[ -n "$base" ]] && break
    sleep 0.05
done
[[ -n "$base" ]] || die "the runtime did not start: $(cat "$WORK/server.log")"

declare -A URL
URL[main]="$base/mcp" URL[overridden]="$base/mcp/bench-a" URL[renamed]="$base/mcp/bench-b"
TOOL[renamed]=say
SYSTEMS=(main overridden renamed)
wrk_rounds
row "| tools/call echo | req/s (median of $ROUNDS rounds) | ÷ /mcp (paired per round, median) |"
row "|---|---:|---:|"
for s in "${SYSTEMS[@]}"; do
    row "| $s | $(echo "${RPS[$s]}" | median) | $(paired "$s" main) |"
done
echo "[endpoints] rounds (req/s):" >&2
for s in "${SYSTEMS[@]}"; do echo "  $s:${RPS[$s]}" >&2; done
echo "[endpoints] results: $RESULTS"
