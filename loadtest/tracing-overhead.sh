#!/usr/bin/env bash
# Tracing overhead benchmark (not a test): the same wrk load, tools/call `echo` on the demo
# config, against the release binary in three set-ups, alternated ROUNDS times:
#   off   telemetry off (the default: no OpenTelemetry layer, no request spans)
#   json  JSON logs (request spans for log context, no export)
#   otel  OTLP traces + metrics exported to a local sink, every request sampled, with a
#         traceparent in _meta (the worst case: every request exported)
# Prints req/s and latency per set-up and the ratios to `off`. Server and wrk are pinned to
# different cores when there are two, so they compete less.
#
# Usage: bash loadtest/tracing-overhead.sh     Env: DURATION (10s) CONNS (8) ROUNDS (2) BIN
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/mcp-runtime}
DURATION=${DURATION:-10s}
CONNS=${CONNS:-8}
ROUNDS=${ROUNDS:-2}
[[ -x "$BIN" ]] || cargo build --release --locked -p mcp-runtime
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
SERVER_CPU="" ; CLIENT_CPU=""
if [[ $(nproc) -ge 2 ]]; then SERVER_CPU="taskset -c 0"; CLIENT_CPU="taskset -c 1"; fi

SINK_PORT=$(free_port)
python3 loadtest/otlp-sink.py "$SINK_PORT" & PIDS+=($!)

# run_case NAME [ENV=VALUE ...] → appends "NAME rps p50_ms p99_ms" to $WORK/results
run_case() {
    local name=$1; shift
    local port log
    port=$(free_port)
    log="$WORK/$name.log"
    env -i PATH="$PATH" RUST_LOG=warn "$@" $SERVER_CPU "$BIN" serve --listen "127.0.0.1:$port" >"$log" 2>&1 &
    local pid=$!
    for _ in $(seq 100); do grep -q "listening on" "$log" && break; sleep 0.05; done
    local trace=0; [[ $name == otel ]] && trace=1
    TRACEPARENT=$trace $CLIENT_CPU wrk -t1 -c"$CONNS" -d"$DURATION" --latency -s loadtest/tools-call.lua \
        "http://127.0.0.1:$port/mcp" >"$WORK/$name.wrk"
    kill -TERM "$pid"; wait "$pid" || true
    local rps p50 p99
    rps=$(awk '/^Requests\/sec/ {print $2}' "$WORK/$name.wrk")
    p50=$(awk '$1=="50%" {print $2}' "$WORK/$name.wrk")
    p99=$(awk '$1=="99%" {print $2}' "$WORK/$name.wrk")
    local non2xx; non2xx=$(awk '/Non-2xx/ {print $4}' "$WORK/$name.wrk"); non2xx=${non2xx:-0}
    [[ $non2xx == 0 ]] || { cat "$WORK/$name.wrk" "$log"; echo "FAILED: $name got non-2xx answers" >&2; exit 1; }
    echo "$name $rps $p50 $p99" >>"$WORK/results"
}

for round in $(seq "$ROUNDS"); do
    run_case off
    run_case json MCP_RUNTIME__TELEMETRY__LOG_FORMAT=json
    run_case otel OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$SINK_PORT"
done

echo "wrk: 1 thread, $CONNS connections, $DURATION per run, $ROUNDS rounds; $(nproc) cores; binary $BIN"
python3 - "$WORK/results" <<'PY'
import sys, statistics
def ms(v):
    v = v.strip()
    for unit, f in (("us", 0.001), ("ms", 1.0), ("s", 1000.0)):
        if v.endswith(unit):
            return float(v[: -len(unit)]) * f
    return float(v)
rows = {}
for line in open(sys.argv[1]):
    name, rps, p50, p99 = line.split()
    rows.setdefault(name, []).append((float(rps), ms(p50), ms(p99)))
med = {k: tuple(statistics.median(x[i] for x in v) for i in range(3)) for k, v in rows.items()}
base = med["off"]
print(f"{'set-up':6} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'req/s vs off':>13} {'µs/req added':>13}")
for k in ("off", "json", "otel"):
    rps, p50, p99 = med[k]
    added = (1e6 / rps - 1e6 / base[0])
    print(f"{k:6} {rps:10.0f} {p50:8.3f} {p99:8.3f} {rps / base[0]:13.3f} {added:13.1f}")
PY
