#!/usr/bin/env bash
# Benchmarks the runtime against peers, as ratios measured in one run (not part of CI's
# pass/fail): the same machine, the same load generator (wrk, one thread), the same request
# bytes (loadtest/wrk/mcp.lua), the same concurrency, the systems interleaved round by round
# (each round visits them in a rotated order) so drift on a shared machine hits all alike.
#
#   ours        target/release/mcp-runtime, service/config/conformance.toml
#   bare        loadtest/peers/bare-axum: parse the JSON-RPC body, answer a canned result (the ceiling)
#   rmcp        loadtest/peers/rmcp-server: stateless server on the official Rust SDK (rmcp 3.x)
#   ts          loadtest/peers/ts-server: stateless server on the official TypeScript SDK v2
#   ours-lb1    1 runtime behind nginx with docker/nginx/mcp-runtime.conf
#   ours-lb3    3 runtimes behind nginx with docker/nginx/mcp-runtime.conf
#
# Requests: tools/call echo, tools/list (the first page); for ours* also legacy/tools/call: the
# same echo call as a 2025-era client sends it (one `initialize` per system before the runs, then
# its Mcp-Session-Id and MCP-Protocol-Version: 2025-11-25 on every call, no _meta envelope; the
# peers are stateless 2026-07-28 servers and do not serve it). Figures per system and request:
# median req/s over the rounds, p50/p99 latency of the median round, CPU time per request
# (user+system of the server processes, nginx included, from /proc: steady even when other
# work shares the machine), RSS idle (after one request of each kind) and peak (VmHWM after
# all rounds), from /proc.
#
# Usage: bash loadtest/bench-peers.sh [--rounds N (9)] [--duration SECONDS (3)] [--connections C (32)] [SYSTEM...]
#   SYSTEM: bare ours rmcp ts ours-lb1 ours-lb3 (default: all)
# Environment: PIN=0 lets servers and wrk share both cores (default: servers on CPU 0, wrk on
#   CPU 1, so the load generator never takes the server's core); OUT (default
#   target/bench/<UTC time>): results.json, results.md, wrk and server logs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
# shellcheck source=lib/procs.sh
source "$ROOT/loadtest/lib/procs.sh"
export INTEROP_DIR="${INTEROP_DIR:-$ROOT/target/interop}"

ROUNDS=9 DURATION=3 CONNECTIONS=32 SYSTEMS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) ROUNDS="$2"; shift ;;
        --duration) DURATION="$2"; shift ;;
        --connections) CONNECTIONS="$2"; shift ;;
        -h | --help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) SYSTEMS+=("$1") ;;
    esac
    shift
done
[[ ${#SYSTEMS[@]} -gt 0 ]] || SYSTEMS=(bare ours rmcp ts ours-lb1 ours-lb3)
REQUESTS=(tools/call tools/list legacy/tools/call)
# serves SYSTEM REQUEST: whether the system takes that kind of request (legacy: ours* only).
serves() { [[ "$2" != legacy/* || "$1" == ours* ]]; }

OUT=$(realpath -m "${OUT:-$ROOT/target/bench/$(date -u +%Y%m%dT%H%M%SZ)}")
WORK="$OUT/work"
mkdir -p "$WORK"
trap stop_all EXIT

SERVER_CPU=() WRK_CPU=()
if [[ "${PIN:-1}" == 1 ]] && command -v taskset >/dev/null && [[ $(nproc) -ge 2 ]]; then
    SERVER_CPU=(taskset -c 0) WRK_CPU=(taskset -c 1)
fi

echo "[bench] tools"
bash "$ROOT/loadtest/install-tools.sh" wrk nginx
bash "$ROOT/tests/interop/setup.sh" "$INTEROP_DIR" >/dev/null

echo "[bench] release builds (cargo: nothing to do when they are current)"
RUNTIME="$ROOT/target/release/mcp-runtime"
build_release
for peer in bare-axum rmcp-server; do
    cargo build --release --locked --manifest-path "$ROOT/loadtest/peers/$peer/Cargo.toml" --target-dir "$ROOT/target/peers"
done

# post URL METHOD [SESSION] → the response body of one request with the bench's bytes.
post() {
    if [[ "$2" == legacy/tools/call ]]; then
        curl -sS --max-time 10 "$1" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
            -H 'MCP-Protocol-Version: 2025-11-25' -H "Mcp-Session-Id: $3" \
            -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello from wrk"}}}'
        return
    fi
    local meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}'
    local body name=()
    if [[ "$2" == tools/call ]]; then
        body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hello from wrk\"},$meta}}"
        name=(-H 'Mcp-Name: echo')
    else
        body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{$meta}}"
    fi
    curl -sS --max-time 10 "$1" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
        -H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $2" "${name[@]}" -d "$body"
}

# legacy_session URL → the Mcp-Session-Id of one 2025-11-25 `initialize` (sealed: any replica opens it).
legacy_session() {
    curl -sS --max-time 10 -D - -o /dev/null "$1" -H 'Content-Type: application/json' \
        -H 'Accept: application/json, text/event-stream' \
        -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"1.0.0"}}}' \
        | tr -d '\r' | sed -n 's/^[Mm][Cc][Pp]-[Ss][Ee][Ss][Ss][Ii][Oo][Nn]-[Ii][Dd]: //p'
}

declare -A URL PROCS SESSION
# spawn NAME CMD... → a pinned background process; its PID is added to PROCS[NAME].
spawn() {
    local name="$1"; shift
    # Created before the job starts, so a reader never races its redirection (see procs.sh).
    : >"$WORK/$name.out"
    : >"$WORK/$name.log"
    "${SERVER_CPU[@]}" "$@" >"$WORK/$name.out" 2>"$WORK/$name.log" &
    PIDS+=($!)
    PROCS[$name]="${PROCS[$name]:-} $!"
}
# runtime_replica NAME → RUNTIME_ADDR (port from the runtime's own "listening on" line).
runtime_replica() {
    spawn "$1" "$RUNTIME" serve --config "$ROOT/service/config/conformance.toml" --listen 127.0.0.1:0
    for _ in $(seq 200); do
        RUNTIME_ADDR=$(sed -n 's#^mcp-runtime listening on http://\([^/]*\)/.*#\1#p' "$WORK/$1.out")
        [[ -n "$RUNTIME_ADDR" ]] && return 0
        sleep 0.05
    done
    die "runtime $1 did not start: $(cat "$WORK/$1.log")"
}
# lb NAME N: N runtime replicas behind nginx with the shipped config.
lb() {
    local name="$1" n="$2" addrs=() i
    for i in $(seq "$n"); do runtime_replica "$name-r$i"; addrs+=("$RUNTIME_ADDR"); PROCS[$name]+=" ${PROCS[$name-r$i]}"; done
    # nginx is pinned like the servers (it is part of the system under test), one worker.
    NGINX_WORKERS=1 NGINX_PREFIX="${SERVER_CPU[*]}" start_lb "$name-nginx" "${addrs[@]}"
    NGINX_OF[$name]="$NGINX_PID"
    URL[$name]="http://127.0.0.1:$LB_PORT/mcp"
}
declare -A NGINX_OF

echo "[bench] starting ${SYSTEMS[*]}"
runtime_replica ours-probe
post "http://$RUNTIME_ADDR/mcp" tools/list | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["result"], separators=(",", ":"), ensure_ascii=False))' >"$WORK/tools-list-result.json"
kill "${PROCS[ours-probe]}"
for s in "${SYSTEMS[@]}"; do
    case "$s" in
        ours) runtime_replica ours; URL[ours]="http://$RUNTIME_ADDR/mcp" ;;
        bare)
            port=$(free_port)
            spawn bare "$ROOT/target/peers/release/bench-bare-axum" "127.0.0.1:$port" "$WORK/tools-list-result.json"
            URL[bare]="http://127.0.0.1:$port/mcp" ;;
        rmcp)
            port=$(free_port)
            spawn rmcp "$ROOT/target/peers/release/bench-rmcp-server" "127.0.0.1:$port"
            URL[rmcp]="http://127.0.0.1:$port/mcp" ;;
        ts)
            port=$(free_port)
            spawn ts "$INTEROP_DIR/bin/node" "$ROOT/loadtest/peers/ts-server/server.mjs" "$port"
            URL[ts]="http://127.0.0.1:$port/mcp" ;;
        ours-lb1) lb ours-lb1 1 ;;
        ours-lb3) lb ours-lb3 3 ;;
        *) die "unknown system $s (bare ours rmcp ts ours-lb1 ours-lb3)" ;;
    esac
done
for s in "${SYSTEMS[@]}"; do
    port="${URL[$s]#http://127.0.0.1:}"; port="${port%%/*}"
    wait_port "$port" 20 || die "$s did not listen on $port: $(cat "$WORK/$s.log" 2>/dev/null)"
done

# One request of each kind per system: it must succeed (echo text, a tool list), and its
# size goes into the table (systems list different tool sets).
declare -A BYTES IDLE
for s in "${SYSTEMS[@]}"; do
    if serves "$s" legacy/tools/call; then
        SESSION[$s]=$(legacy_session "${URL[$s]}")
        [[ -n "${SESSION[$s]}" ]] || die "$s: initialize gave no Mcp-Session-Id"
    fi
    BYTES[$s,legacy/tools/call]=0
    for r in "${REQUESTS[@]}"; do
        serves "$s" "$r" || continue
        body=$(post "${URL[$s]}" "$r" "${SESSION[$s]:-}") || die "$s: $r failed"
        case "$r" in
            tools/call | legacy/tools/call) grep -q 'hello from wrk\|canned' <<<"$body" || die "$s: unexpected tools/call answer: ${body:0:300}" ;;
            tools/list) grep -q '"tools"' <<<"$body" || die "$s: unexpected tools/list answer: ${body:0:300}" ;;
        esac
        BYTES[$s,$r]=${#body}
    done
done
sleep 1
# rss_of SYSTEM FIELD → "max_kB sum_kB" over the system's server processes (nginx excluded).
rss_of() {
    local max=0 sum=0 p v
    for p in ${PROCS[$1]}; do
        v=$(rss_kb "$p" "$2"); v=${v:-0}
        sum=$((sum + v)); ((v > max)) && max=$v
    done
    echo "$max $sum"
}
for s in "${SYSTEMS[@]}"; do IDLE[$s]=$(rss_of "$s" VmRSS); done

# cpu_ticks SYSTEM → user+system CPU time (clock ticks) of the system's processes so far,
# nginx workers included: CPU per request does not depend on how much of the shared
# machine the system got, so it is the steadier figure on a busy box.
cpu_ticks() {
    local sum=0 p t
    for p in ${PROCS[$1]} $(for m in ${NGINX_OF[$1]:-}; do echo "$m"; pgrep -P "$m"; done); do
        t=$(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)
        sum=$((sum + t))
    done
    echo "$sum"
}
TICK_US=$((1000000 / $(getconf CLK_TCK)))

run_wrk() { # SYSTEM REQUEST SECONDS → WRK_JSON line plus the system's CPU per request
    local before after line
    before=$(cpu_ticks "$1")
    line=$("${WRK_CPU[@]}" wrk -t1 -c"$CONNECTIONS" -d"$3"s --latency -s "$ROOT/loadtest/wrk/mcp.lua" "${URL[$1]}" -- "$2" ${SESSION[$1]:+"${SESSION[$1]}"} \
        | tee -a "$WORK/wrk.log" | sed -n 's/^WRK_JSON //p')
    after=$(settled cpu_ticks "$1")
    echo "${line%\}},\"cpu_us\":$(( (after - before) * TICK_US ))}"
}

echo "[bench] warm-up (1 s each)"
for s in "${SYSTEMS[@]}"; do for r in "${REQUESTS[@]}"; do if serves "$s" "$r"; then run_wrk "$s" "$r" 1 >/dev/null; fi; done; done

RAW="$OUT/raw.jsonl"
: >"$RAW"
n=${#SYSTEMS[@]}
for round in $(seq "$ROUNDS"); do
    for r in "${REQUESTS[@]}"; do
        for i in $(seq 0 $((n - 1))); do
            s=${SYSTEMS[$(((i + round - 1) % n))]}
            serves "$s" "$r" || continue
            line=$(run_wrk "$s" "$r" "$DURATION")
            echo "{\"round\":$round,\"system\":\"$s\",\"request\":\"$r\",\"wrk\":$line}" >>"$RAW"
            echo "[bench] round $round $r $s: $line"
        done
    done
done

{
    for s in "${SYSTEMS[@]}"; do
        read -r imax isum <<<"${IDLE[$s]}"
        read -r pmax psum <<<"$(rss_of "$s" VmHWM)"
        echo "{\"system\":\"$s\",\"idle_rss_kb\":$imax,\"idle_rss_sum_kb\":$isum,\"peak_rss_kb\":$pmax,\"peak_rss_sum_kb\":$psum,\"processes\":$(wc -w <<<"${PROCS[$s]}"),\"call_bytes\":${BYTES[$s,tools/call]},\"list_bytes\":${BYTES[$s,tools/list]},\"legacy_call_bytes\":${BYTES[$s,legacy/tools/call]}}"
    done
} >"$OUT/systems.jsonl"

python3 "$ROOT/loadtest/lib/bench_report.py" "$OUT" "$ROUNDS" "$DURATION" "$CONNECTIONS" "${#SERVER_CPU[@]}"
echo "[bench] $OUT/results.md, $OUT/results.json"
