#!/usr/bin/env bash
# Cheap at scale, measured in one bounded run on loopback (release binary; not part of CI's
# pass/fail), printing one table:
#   - RSS at rest for 10 / 1,000 / 5,000 tools (CLI tools with realistic input schemas from
#     loadtest/lib/gen_tools.py), after one tools/list;
#   - RSS with 0 / 1,000 / 5,000 idle subscriptions/listen streams and 1,000 / 5,000 2025-era
#     GET streams (loadtest/lib/streams.py), and again after each burst has closed (per stream:
#     against the RSS just before the burst; an idle runtime returns freed pages within ~2 s);
#   - tools/call echo req/s (wrk, loadtest/wrk/mcp.lua, 32 connections, servers on CPU 0, wrk on
#     CPU 1) for: bare (loadtest/peers/bare-axum, profile-guided like the runtime:
#     loadtest/lib/procs.sh build_bare), ours (no limit), ours with a cluster-wide
#     limit through a redis-server on loopback, leased (rate_limits.lease_ms = 100) and exact
#     (lease_ms = 0); rounds interleaved; medians, and each system as a ratio to bare in the
#     same round (median).
#
# Usage: bash loadtest/scale.sh [--rounds N (3)] [--duration SECONDS (3)] [--bin PATH] [--memory-only]
#   --bin PATH      that runtime binary (default: target/release/mcp-runtime, cargo builds it first)
#   --memory-only   the RSS rows only (no Redis, no wrk, no bare-axum build)
# Environment: OUT (default target/bench/scale-<UTC time>): logs, configs, results.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
# shellcheck source=lib/procs.sh
source "$ROOT/loadtest/lib/procs.sh"
# shellcheck source=lib/rounds.sh
source "$ROOT/loadtest/lib/rounds.sh"

ROUNDS=3 DURATION=3 BIN="" MEMORY_ONLY=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) ROUNDS="$2"; shift ;;
        --duration) DURATION="$2"; shift ;;
        --bin) BIN=$(realpath "$2"); shift ;;
        --memory-only) MEMORY_ONLY=1 ;;
        -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done
OUT=$(realpath -m "${OUT:-$ROOT/target/bench/scale-$(date -u +%Y%m%dT%H%M%SZ)}")
WORK="$OUT/work"
mkdir -p "$WORK"
trap stop_all EXIT
ulimit -n 20000 2>/dev/null || die "needs 20000 open files (ulimit -n) for 5,000 streams"

if [[ -z "$BIN" ]]; then
    build_release
    BIN="$ROOT/target/release/mcp-runtime"
fi
PIN=()
if command -v taskset >/dev/null && [[ $(nproc) -ge 2 ]]; then PIN=(taskset -c 0); fi
RESULTS="$OUT/results.md"
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
row() { echo "$*" | tee -a "$RESULTS"; }
note=$(build_note "$BIN")
[[ -z "$note" ]] || row "$note"

row "| measurement | RSS MB | per item |"
row "|---|---:|---:|"
# --- tools at rest ---
base_rss=0
for n in 10 1000 5000; do
    python3 "$ROOT/loadtest/lib/gen_tools.py" "$n" >"$WORK/tools-$n.toml"
    start_runtime "$BIN" "$WORK/tools-$n.toml" "tools-$n"
    curl -sS -o /dev/null "http://$RUNTIME_ADDR/mcp" -H 'Content-Type: application/json' \
        -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list' \
        -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"scale","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}'
    # At rest: past the idle workers' collection (once a second) and mimalloc's purge delay (1 s).
    sleep 3
    rss=$(rss_kb "$RUNTIME_PID")
    [[ $n == 10 ]] && base_rss=$rss
    per=$([[ $n == 10 ]] && echo "–" || awk -v a="$rss" -v b="$base_rss" -v n="$n" 'BEGIN { printf "%.1f KB/tool", (a - b) / (n - 10) }')
    row "| $n tools at rest | $(mb "$rss") | $per |"
    kill "$RUNTIME_PID"; wait "$RUNTIME_PID" 2>/dev/null || true
done

# --- idle streams ---
cat >"$WORK/streams.toml" <<TOML
[server]
max_listen_streams = 100000
max_listen_streams_per_caller = 100000
[limits]
max_connections = 100000
[[adapters]]
name = "demo"
kind = "fixtures"
set = "demo"
TOML
start_runtime "$BIN" "$WORK/streams.toml" streams
STREAMS_PID=$RUNTIME_PID
sleep 3
rest=$(rss_kb "$STREAMS_PID")
row "| 0 streams | $(mb "$rest") | – |"
for kind in listen legacy; do
    for n in 1000 5000; do
        before=$(rss_kb "$STREAMS_PID")
        fifo="$WORK/hold-$kind-$n"
        mkfifo "$fifo"
        flag=()
        [[ $kind == legacy ]] && flag=(--legacy)
        python3 "$ROOT/loadtest/lib/streams.py" "$RUNTIME_ADDR" "$n" "${flag[@]}" <"$fifo" >"$WORK/streams-$kind-$n.out" &
        holder=$!
        exec 7>"$fifo"
        for _ in $(seq 600); do grep -q '^open' "$WORK/streams-$kind-$n.out" && break; sleep 0.1; done
        grep -q "^open $n refused 0" "$WORK/streams-$kind-$n.out" || die "$kind: $(cat "$WORK/streams-$kind-$n.out")"
        sleep 1
        open_rss=$(rss_kb "$STREAMS_PID")
        exec 7>&-
        wait "$holder"
        sleep 3
        after=$(rss_kb "$STREAMS_PID")
        # Against the RSS just before this burst: an earlier burst's memory may not be back.
        per=$(awk -v a="$open_rss" -v b="$before" -v n="$n" 'BEGIN { printf "%.1f KB/stream", (a - b) / n }')
        label=$([[ $kind == listen ]] && echo "subscriptions/listen" || echo "2025-era GET")
        row "| $n $label streams open | $(mb "$open_rss") | $per |"
        row "| ... after they closed | $(mb "$after") | – |"
    done
done
kill "$STREAMS_PID"; wait "$STREAMS_PID" 2>/dev/null || true

# --- tools/call with a cluster-wide limit, as a ratio to the bare handler ---
[[ $MEMORY_ONLY == 1 ]] && { echo "[scale] results: $RESULTS"; exit 0; }
bash "$ROOT/loadtest/install-tools.sh" wrk
command -v redis-server >/dev/null || die "redis-server is not installed (tests/run.sh installs it: apt-get install redis-server)"
build_bare # profile-guided like the runtime
REDIS_PORT=$(free_port)
"${PIN[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
wait_port "$REDIS_PORT" || die "redis-server did not start"
declare -A URL
runtime_with() { # NAME EXTRA-TOML
    { cat "$ROOT/loadtest/config/runtime.toml"; echo "$2"; } >"$WORK/$1.toml"
    RUST_LOG=warn "${PIN[@]}" "$BIN" serve --config "$WORK/$1.toml" --listen 127.0.0.1:0 >"$WORK/$1.out" 2>"$WORK/$1.log" &
    PIDS+=($!)
    for _ in $(seq 200); do
        addr=$(sed -n 's#^mcp-runtime listening on http://\([^/]*\)/.*#\1#p' "$WORK/$1.out")
        [[ -n "$addr" ]] && { URL[$1]="http://$addr/mcp"; return 0; }
        sleep 0.05
    done
    die "$1 did not start: $(cat "$WORK/$1.log")"
}
LIMIT='[rate_limits.tools.echo]
global = { rate = 10000000, per_ms = 1000, burst = 1000000 }'
BARE_PORT=$(free_port)
"${PIN[@]}" "$BARE_BIN" "127.0.0.1:$BARE_PORT" >"$WORK/bare.log" 2>&1 &
PIDS+=($!)
wait_port "$BARE_PORT" || die "bare-axum did not start"
URL[bare]="http://127.0.0.1:$BARE_PORT/mcp"
runtime_with ours ""
runtime_with leased "[redis]
url = \"redis://127.0.0.1:$REDIS_PORT\"
[rate_limits]
lease_ms = 100
$LIMIT"
runtime_with exact "[redis]
url = \"redis://127.0.0.1:$REDIS_PORT\"
[rate_limits]
lease_ms = 0
$LIMIT"
SYSTEMS=(bare ours leased exact)
WRK_PIN=()
[[ ${#PIN[@]} -gt 0 ]] && WRK_PIN=(taskset -c 1)
wrk_rounds
row ""
row "| tools/call echo | req/s (median of $ROUNDS rounds) | ÷ bare (paired per round, median) |"
row "|---|---:|---:|"
for s in "${SYSTEMS[@]}"; do
    row "| $s | $(echo "${RPS[$s]}" | median) | $(paired "$s") |"
done
echo "[scale] rounds (req/s):" >&2
for s in "${SYSTEMS[@]}"; do echo "  $s:${RPS[$s]}" >&2; done
echo "[scale] results: $RESULTS"
