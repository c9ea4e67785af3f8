#!/usr/bin/env bash
# tools/call over HTTP/2 against the same over HTTP/1.1, as a ratio measured in one run (not
# part of CI's pass/fail). One load generator for both (h2load, from Debian's nghttp2-client),
# the same request bytes, the same number of requests in flight, the two protocols alternated
# round by round so drift on a shared machine hits both alike:
#
#   h2c     HTTP/2 in cleartext with prior knowledge: C connections x M streams each (what a
#           mesh sidecar or gateway speaking h2 upstream does)
#   http1   HTTP/1.1 keep-alive: C*M connections, one request in flight on each
#
# Usage: bash loadtest/bench-h2.sh [--rounds N (5)] [--duration SECONDS (5)] [--connections C (4)] [--streams M (8)]
# Environment: PIN=0 lets the server and h2load share both cores (default: server on CPU 0,
#   h2load on CPU 1); OUT (default target/bench/h2-<UTC time>): h2load and server logs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
# shellcheck source=lib/procs.sh
source "$ROOT/loadtest/lib/procs.sh"

ROUNDS=5 DURATION=5 CONNECTIONS=4 STREAMS=8
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) ROUNDS="$2"; shift ;;
        --duration) DURATION="$2"; shift ;;
        --connections) CONNECTIONS="$2"; shift ;;
        --streams) STREAMS="$2"; shift ;;
        -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
    shift
done

OUT=$(realpath -m "${OUT:-$ROOT/target/bench/h2-$(date -u +%Y%m%dT%H%M%SZ)}")
WORK="$OUT/work"
mkdir -p "$WORK"
trap stop_all EXIT

SERVER_CPU=() LOAD_CPU=()
if [[ "${PIN:-1}" == 1 ]] && command -v taskset >/dev/null && [[ $(nproc) -ge 2 ]]; then
    SERVER_CPU=(taskset -c 0) LOAD_CPU=(taskset -c 1)
fi

bash "$ROOT/loadtest/install-tools.sh" h2load
echo "[bench-h2] release build (cargo: nothing to do when it is current)"
build_release
RUST_LOG=warn "${SERVER_CPU[@]}" "$ROOT/target/release/mcp-runtime" serve \
    --config "$ROOT/service/config/conformance.toml" --listen 127.0.0.1:0 >"$WORK/runtime.out" 2>"$WORK/runtime.log" &
PIDS+=($!)
for _ in $(seq 200); do
    URL=$(sed -n 's#^mcp-runtime listening on \(http://.*\)$#\1#p' "$WORK/runtime.out")
    [[ -n "$URL" ]] && break
    sleep 0.05
done
[[ -n "$URL" ]] || die "the runtime did not start: $(cat "$WORK/runtime.log")"

META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"h2load","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}'
printf '%s' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hello from h2load\"},$META}}" >"$WORK/body.json"
HEADERS=(-H 'content-type: application/json' -H 'accept: application/json, text/event-stream'
    -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/call' -H 'mcp-name: echo')

# run PROTO ROUND → prints req/s; h2load's own output is kept in $WORK.
run() {
    local args=(-c "$CONNECTIONS" -m "$STREAMS")
    [[ "$1" == http1 ]] && args=(--h1 -c $(( CONNECTIONS * STREAMS )) -m 1)
    local log="$WORK/$1-$2.txt"
    "${LOAD_CPU[@]}" h2load "${args[@]}" -D "$DURATION" --warm-up-time 1 "${HEADERS[@]}" -d "$WORK/body.json" "$URL" >"$log" 2>&1 \
        || die "h2load $1 failed: $(tail -5 "$log")"
    grep -q "status codes: [0-9]* 2xx, 0 3xx, 0 4xx, 0 5xx" "$log" || die "$1: non-2xx answers ($(grep 'status codes' "$log"))"
    grep -q ' 0 failed, 0 errored' "$log" || die "$1: failed requests ($(grep '^requests:' "$log"))"
    sed -n 's/^finished in [^,]*, \([0-9.]*\) req\/s.*/\1/p' "$log"
}

declare -A RPS=([h2c]="" [http1]="")
for round in $(seq "$ROUNDS"); do
    order=(h2c http1)
    (( round % 2 == 0 )) && order=(http1 h2c)
    for proto in "${order[@]}"; do
        rps=$(run "$proto" "$round")
        RPS[$proto]+="$rps "
        echo "[bench-h2] round $round $proto: $rps req/s"
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
H2=$(echo "${RPS[h2c]}" | median)
H1=$(echo "${RPS[http1]}" | median)
{
    echo "tools/call, $((CONNECTIONS * STREAMS)) requests in flight, $ROUNDS rounds x ${DURATION}s, median req/s"
    echo "h2c   ($CONNECTIONS connections x $STREAMS streams): $H2"
    echo "http1 ($((CONNECTIONS * STREAMS)) connections):           $H1"
    echo "ratio h2c / http1: $(awk -v a="$H2" -v b="$H1" 'BEGIN {printf "%.2f", a / b}')"
} | tee "$OUT/summary.txt"
