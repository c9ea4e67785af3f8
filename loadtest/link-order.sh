#!/usr/bin/env bash
# Writes service/runtime/link-order.txt, the order release builds lay out the request path's
# functions in (service/runtime/build.rs gives it to the linker): the functions a tools/call
# and a tools/list execute under callgrind, hottest first, in the embedded default with its
# per-call log line, with the audit trail on, and in loadtest/production.sh's production
# configuration (JWT, leased limit, audit trail; needs redis-server). Rerun it after a
# change that moves the request path (new functions there are left where the compiler put
# them until then) or changes a dependency or a feature (the names carry a hash of their
# crate's build inputs: most of them change); production.sh and scale.sh say in their
# results when a build they measure is not laid out by the list. A stale list costs speed
# (4-11 % of production's in loadtest/RESULTS.md), never correctness. Not part of CI's pass/fail.
#
# Usage: bash loadtest/link-order.sh [--duration SECONDS (5)]
# Environment: OUT (default target/link-order/<UTC time>): the profiles.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
# shellcheck source=lib/procs.sh
source "$ROOT/loadtest/lib/procs.sh"
# shellcheck source=lib/production.sh
source "$ROOT/loadtest/lib/production.sh"

DURATION=5
while [[ $# -gt 0 ]]; do
    case "$1" in
        --duration) DURATION="$2"; shift ;;
        -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done
OUT=$(realpath -m "${OUT:-$ROOT/target/link-order/$(date -u +%Y%m%dT%H%M%SZ)}")
WORK="$OUT/work" PIN=()
mkdir -p "$WORK"
trap stop_all EXIT
build_release
BIN="$ROOT/target/release/mcp-runtime"
{ cat "$ROOT/service/config/default.toml"; printf '\n[audit]\nenabled = true\nfile = "%s"\n' "$OUT/audit.jsonl"; } >"$OUT/audit.toml"
production_env
for config in default audit production; do
    bearer=""
    case $config in
        default) file="$ROOT/service/config/default.toml" ;;
        audit) file="$OUT/audit.toml" ;;
        production) file="$WORK/production.toml" bearer="$TOKEN" ;;
    esac
    OUT="$OUT/$config" BIN="$BIN" CONFIG="$file" RUST_LOG=info VALGRIND_ARGS=--demangle=no MCP_BEARER="$bearer" \
        bash "$ROOT/loadtest/callgrind.sh" --duration "$DURATION" ours
done
python3 "$ROOT/loadtest/lib/link_order.py" "$BIN" "$OUT"/*/ours-*.out >"$ROOT/service/runtime/link-order.txt"
echo "[link-order] service/runtime/link-order.txt: $(wc -l <"$ROOT/service/runtime/link-order.txt") functions; rebuild (loadtest/lib/procs.sh build_release, as the image builds) to use it"
