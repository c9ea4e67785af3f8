#!/usr/bin/env bash
# Writes service/runtime/pgo.profdata, the profile the image's release build is optimised by
# (profile-guided; docker/Dockerfile, docs/deployment.md § Container image): an instrumented
# release build (`-Cprofile-generate`) serves tools/call and tools/list under wrk in the
# embedded default with its per-call log line, with the audit trail on, and in
# loadtest/production.sh's production configuration (JWT, leased limit, audit trail; needs
# redis-server), then stops cleanly (the counts are written on exit), and llvm-profdata
# (rustup's llvm-tools, added to the toolchain at hand when missing) merges them. Rerun it
# after a change to the request path or to a dependency: a function changed since is compiled
# as without a profile (rustc warns: `function control flow change detected`). A stale
# profile costs speed, never correctness. Not part of CI's pass/fail.
#
# Usage: bash loadtest/pgo.sh [--duration SECONDS (5)]
# Environment: OUT (default target/pgo/<UTC time>): the servers' configurations, logs and
#   audit trails while it runs (removed at the end unless KEEP_LOGS=1).
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
        -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done
OUT=$(realpath -m "${OUT:-$ROOT/target/pgo/$(date -u +%Y%m%dT%H%M%SZ)}")
WORK="$OUT/work" PIN=()
mkdir -p "$WORK"
trap stop_all EXIT
bash "$ROOT/loadtest/install-tools.sh" wrk >/dev/null

llvm_profdata

# Its own target directory: the flag changes every crate's build, and the instrumented
# binary is of no use past this script. The counts' folder is always the same (a new one
# would be a new flag: every crate built again), emptied after the build: the build's own
# programs (build scripts, proc macros) were instrumented too and wrote counts of their run.
RAW="$ROOT/target/pgo-instrumented/counts"
RUSTFLAGS="-Cprofile-generate=$RAW" \
    cargo build --release --locked -p mcp-runtime --target-dir "$ROOT/target/pgo-instrumented"
BIN="$ROOT/target/pgo-instrumented/release/mcp-runtime"
rm -rf "$RAW"

{ cat "$ROOT/service/config/default.toml"; printf '\n[audit]\nenabled = true\nfile = "%s"\n' "$WORK/audit-only.jsonl"; } >"$WORK/audit.toml"
production_env
for config in default audit production; do
    bearer=""
    case $config in
        default) file="$ROOT/service/config/default.toml" ;;
        audit) file="$WORK/audit.toml" ;;
        production) file="$WORK/production.toml" bearer="$TOKEN" ;;
    esac
    RUST_LOG=info start_runtime "$BIN" "$file" "$config"
    for request in tools/call tools/list; do
        line=$(MCP_BEARER="$bearer" wrk -t1 -c4 -d"$DURATION"s -s "$ROOT/loadtest/wrk/mcp.lua" \
            "http://$RUNTIME_ADDR/mcp" -- "$request" | sed -n 's/^WRK_JSON //p')
        errors=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["errors"])' "$line")
        [[ "$errors" == 0 ]] || die "$config $request: $errors errors under wrk"
        echo "[pgo] $config $request: $line"
    done
    # The counts are written when the process exits (it drains and returns from main).
    stop_cleanly "$RUNTIME_PID" "$config" "$WORK/$config.log"
done
ls "$RAW"/*.profraw >/dev/null 2>&1 || die "the instrumented build wrote no counts in $RAW"
"$PROFDATA" merge --sparse -o "$ROOT/service/runtime/pgo.profdata" "$RAW"/*.profraw
[[ "${KEEP_LOGS:-0}" == 1 ]] || rm -rf "$WORK" # the servers' logs and audit trails: GBs
echo "[pgo] service/runtime/pgo.profdata: $(du -h "$ROOT/service/runtime/pgo.profdata" | cut -f1); the next build_release (loadtest/lib/procs.sh) or image build uses it"
