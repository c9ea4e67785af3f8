#!/usr/bin/env bash
# The configurations people run, against the bare axum JSON-RPC handler, in one bounded run on
# loopback (the release binary as the image builds it, profile-guided: loadtest/lib/procs.sh
# build_release; not part of CI's pass/fail). tools/call echo req/s (wrk,
# loadtest/wrk/mcp.lua, 32 connections; servers on CPU 0, wrk on CPU 1), rounds interleaved;
# each system as a ratio to bare in the same round (median), by req/s and by the server's CPU
# time per request (the steadier of the two on a shared host; redis-server's is not counted):
#   - bare        loadtest/peers/bare-axum, profile-guided like the runtime (loadtest/lib/procs.sh
#                 build_bare: by its own run of these requests)
#   - bare+token  the same, sent production's requests (its token in every one): each system
#                 is also given as a ratio to the bare handler sent the same requests as it
#   - quiet       the embedded default with RUST_LOG=warn: no per-call log line
#   - default     the embedded default config as `cargo run` serves it: per-call log line on
#                 (RUST_LOG unset), written to a file
#   - production  a JWT issuer (an RS256 token verified once, then seen; the JWKS served on
#                 loopback by loadtest/lib/jwt_issuer.py), a cluster-wide rate limit leased
#                 from a redis-server on loopback (lease_ms = 100), the per-call log line and
#                 the audit trail to a file
#   - +jwt, +limit, +audit (with --parts): the embedded default plus that one part of
#                 production, to price each part
#   - NAME (with --also NAME=PATH): default served by another build, e.g. the one before a
#                 change, to compare two builds in one run
#   - NAME (with --also-production NAME=PATH): production served by another build
#
# Usage: bash loadtest/production.sh [--rounds N (5)] [--duration SECONDS (3)] [--bin PATH]
#        [--parts] [--also NAME=PATH]... [--also-production NAME=PATH]...
# Environment: OUT (default target/bench/production-<UTC time>): configs, results.md, and the
#   logs and audit trails while it runs (GBs; removed at the end unless KEEP_LOGS=1); BARE
#   (the bare handler's binary, e.g. one built otherwise; default: build_bare's); BARE_PLAIN=1
#   (build_bare builds it without a profile, the reference before 2026-12-08).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
# shellcheck source=lib/procs.sh
source "$ROOT/loadtest/lib/procs.sh"
# shellcheck source=lib/rounds.sh
source "$ROOT/loadtest/lib/rounds.sh"
# shellcheck source=lib/production.sh
source "$ROOT/loadtest/lib/production.sh"

ROUNDS=5 DURATION=3 BIN="" PARTS=0 ALSO=() ALSO_PRODUCTION=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) ROUNDS="$2"; shift ;;
        --duration) DURATION="$2"; shift ;;
        --bin) BIN=$(realpath "$2"); shift ;;
        --parts) PARTS=1 ;;
        --also) [[ "$2" == ?*=?* ]] || die "--also takes NAME=PATH, not '$2'"; ALSO+=("$2"); shift ;;
        --also-production)
            [[ "$2" == ?*=?* ]] || die "--also-production takes NAME=PATH, not '$2'"
            ALSO_PRODUCTION+=("$2"); shift ;;
        -h | --help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done
OUT=$(realpath -m "${OUT:-$ROOT/target/bench/production-$(date -u +%Y%m%dT%H%M%SZ)}")
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
for bin in "$BIN" "${ALSO[@]#*=}" "${ALSO_PRODUCTION[@]#*=}"; do
    note=$(build_note "$(realpath "$bin")")
    [[ -z "$note" ]] || row "$note"
done

# redis-server and the JWKS issuer on loopback; TOKEN, and the configuration in parts.
production_env
if [[ -z "${BARE:-}" ]]; then
    # Profile-guided like the runtime, by its own run of these requests (token included).
    MCP_BEARER="$TOKEN" build_bare
    BARE=$BARE_BIN
    if [[ "${BARE_PLAIN:-0}" == 1 ]]; then
        row "> **Bare:** built without a profile (BARE_PLAIN=1), the runtime with one: the ratios favour the runtime."
    else
        row "> **Bare:** built as the runtime is (fat LTO, profile-guided by its own run of these requests: loadtest/lib/procs.sh build_bare)."
    fi
else
    row "> **Bare:** $BARE (BARE=)."
fi

declare -A URL
start() { # NAME [CONFIG] [RUST_LOG] [BINARY]: RUST_LOG unset unless given, as deployed; the log to a file
    local args=(serve --listen 127.0.0.1:0) level=(-u RUST_LOG)
    [[ -n "${2:-}" ]] && args+=(--config "$2")
    [[ -n "${3:-}" ]] && level=("RUST_LOG=$3")
    env "${level[@]}" "${PIN[@]}" "${4:-$BIN}" "${args[@]}" >"$WORK/$1.out" 2>"$WORK/$1.log" &
    PIDS+=($!)
    PID[$1]=$!
    for _ in $(seq 200); do
        addr=$(sed -n 's#^mcp-runtime listening on http://\([^/]*\)/.*#\1#p' "$WORK/$1.out")
        [[ -n "$addr" ]] && { URL[$1]="http://$addr/mcp"; return 0; }
        sleep 0.05
    done
    die "$1 did not start: $(cat "$WORK/$1.log")"
}
start_bare() { # NAME: the bare handler, its own process (its own CPU time)
    local port
    port=$(free_port)
    "${PIN[@]}" "$BARE" "127.0.0.1:$port" >"$WORK/$1.log" 2>&1 &
    PIDS+=($!)
    PID[$1]=$!
    wait_port "$port" || die "bare-axum did not start"
    URL[$1]="http://127.0.0.1:$port/mcp"
}
start_bare bare
# The same handler sent production's requests: the token's ~700 bytes cost the kernel (and
# hyper) whoever serves them.
start_bare bare+token
start quiet "" warn
start default
start production "$WORK/production.toml"
SYSTEMS=(bare bare+token quiet default production)
if [[ $PARTS == 1 ]]; then
    AUDIT=${AUDIT//audit.jsonl/audit-alone.jsonl}
    for part in jwt limit audit; do
        case $part in jwt) text=$JWT ;; limit) text=$LIMIT ;; audit) text=$AUDIT ;; esac
        printf '%s\n\n' "$BASE" "$text" >"$WORK/$part.toml"
        start "+$part" "$WORK/$part.toml"
        SYSTEMS+=("+$part")
    done
    BEARER[+jwt]="$TOKEN"
fi
for also in "${ALSO[@]}"; do
    name=${also%%=*}
    start "$name" "" "" "$(realpath "${also#*=}")"
    SYSTEMS+=("$name")
done
for also in "${ALSO_PRODUCTION[@]}"; do
    name=${also%%=*}
    # Its own trail: the one `audit verify` checks below is this build's.
    sed "s#$WORK/audit.jsonl#$WORK/audit-$name.jsonl#" "$WORK/production.toml" >"$WORK/$name.toml"
    start "$name" "$WORK/$name.toml" "" "$(realpath "${also#*=}")"
    SYSTEMS+=("$name")
    BEARER[$name]="$TOKEN"
done

BEARER[production]="$TOKEN" BEARER[bare+token]="$TOKEN"
wrk_rounds
row "| tools/call echo | req/s (median of $ROUNDS rounds) | ÷ bare (paired per round, median) | CPU µs per request (median) | bare's CPU per request ÷ its (paired, median) | ÷ bare sent the same requests | CPU, the same |"
row "|---|---:|---:|---:|---:|---:|---:|"
for s in "${SYSTEMS[@]}"; do
    same=bare
    [[ -n "${BEARER[$s]:-}" ]] && same=bare+token
    row "| $s | $(echo "${RPS[$s]}" | median) | $(paired "$s") | $(echo "${CPU[$s]}" | median) | $(paired_cpu "$s") | $(paired "$s" "$same") | $(paired_cpu "$s" "$same") |"
done
dropped=$(curl -s "${URL[production]%/mcp}/metrics" | sed -n 's/^mcp_call_records_dropped_total \([0-9]*\).*/\1/p')
trail=("$WORK"/audit.jsonl.* "$WORK/audit.jsonl") # rotated files oldest first (the glob sorts)
[[ -e ${trail[0]} ]] || trail=("${trail[@]:1}")
calls=$(cat "${trail[@]}" | grep -c '"type":"call"' || true)
verified=$("$BIN" audit verify "${trail[@]}" 2>&1 | tail -1)
lines=$(grep -c 'mcp_runtime::call' "$WORK/default.log" || true)
row ""
row "production's audit trail: $calls call records in ${#trail[@]} file(s), ${dropped:-?} records dropped; \`audit verify\`: $verified"
row "default's log: $lines call lines"
echo "[production] rounds (req/s):" >&2
for s in "${SYSTEMS[@]}"; do echo "  $s:${RPS[$s]}" >&2; done
echo "[production] rounds (CPU µs per request):" >&2
for s in "${SYSTEMS[@]}"; do echo "  $s:${CPU[$s]}" >&2; done
if [[ "${KEEP_LOGS:-0}" != 1 ]]; then
    # A run leaves GBs of trails and call lines: counted and verified above, then removed.
    rm -f "$WORK"/*.jsonl* "$WORK"/*.log
    echo "[production] audit trails and server logs removed (KEEP_LOGS=1 keeps them in $WORK)" >&2
fi
echo "[production] results: $RESULTS"
