#!/usr/bin/env bash
# Tracing overhead benchmark (not a test): the same wrk load, tools/call `echo` on the demo
# config, against the release binary in three set-ups, alternated ROUNDS times:
#   off   telemetry off (the default: no OpenTelemetry layer, no request spans)
#   json  JSON logs (request spans for log context, no export)
#   otel  OTLP traces + metrics exported to a local sink, every request sampled, with a
#         traceparent in _meta (the worst case: every request exported)
#   otel1 the same machinery with 1 % of new traces sampled and no caller context (the
#         price of the instrumentation itself)
# Prints, per set-up (median over rounds): the server's CPU time per request (from
# /proc/PID/stat, exporter threads included: the figure least disturbed by other load on the
# machine), req/s and latency, and the ratios to `off`. Server and wrk are pinned to
# different cores when there are two, so they compete less.
#
# Usage: bash loadtest/tracing-overhead.sh     Env: DURATION (10s) CONNS (8) ROUNDS (2) BIN
set -euo pipefail
cd "$(dirname "$0")/.."
BIN_SET=${BIN:-}
BIN=${BIN:-target/release/mcp-runtime}
DURATION=${DURATION:-10s}
CONNS=${CONNS:-8}
ROUNDS=${ROUNDS:-2}
# The release build as the image builds it: profile-guided (loadtest/lib/procs.sh build_release).
[[ -n "$BIN_SET" ]] || RUSTFLAGS="-Cprofile-use=$PWD/service/runtime/pgo.profdata" cargo build --release --locked -p mcp-runtime
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
    for _ in $(seq 400); do grep -q "listening on" "$log" && break; sleep 0.05; done
    grep -q "listening on" "$log" || { cat "$log"; echo "FAILED: $name did not start" >&2; exit 1; }
    local trace=0; [[ $name == otel ]] && trace=1
    TRACEPARENT=$trace $CLIENT_CPU wrk -t1 -c"$CONNS" -d"$DURATION" --latency -s loadtest/tools-call.lua \
        "http://127.0.0.1:$port/mcp" >"$WORK/$name.wrk"
    local ticks requests
    ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    kill -TERM "$pid"; wait "$pid" || true
    requests=$(awk '/requests in/ {print $1}' "$WORK/$name.wrk")
    local cpu_us; cpu_us=$(python3 -c "print($ticks / $(getconf CLK_TCK) * 1e6 / $requests)")
    local rps p50 p99
    rps=$(awk '/^Requests\/sec/ {print $2}' "$WORK/$name.wrk")
    p50=$(awk '$1=="50%" {print $2}' "$WORK/$name.wrk")
    p99=$(awk '$1=="99%" {print $2}' "$WORK/$name.wrk")
    local non2xx; non2xx=$(awk '/Non-2xx/ {print $4}' "$WORK/$name.wrk"); non2xx=${non2xx:-0}
    [[ $non2xx == 0 ]] || { cat "$WORK/$name.wrk" "$log"; echo "FAILED: $name got non-2xx answers" >&2; exit 1; }
    echo "$name $cpu_us $rps $p50 $p99" >>"$WORK/results"
}

for round in $(seq "$ROUNDS"); do
    run_case off
    run_case json MCP_RUNTIME__TELEMETRY__LOG_FORMAT=json
    run_case otel OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$SINK_PORT"
    run_case otel1 OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$SINK_PORT" OTEL_TRACES_SAMPLER_ARG=0.01
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
    name, cpu, rps, p50, p99 = line.split()
    rows.setdefault(name, []).append((float(cpu), float(rps), ms(p50), ms(p99)))
for name, runs in rows.items():
    print(f"  {name:5} runs: " + ", ".join(f"{c:.1f} µs CPU/req, {r:.0f} req/s" for c, r, _, _ in runs))
med = {k: tuple(statistics.median(x[i] for x in v) for i in range(4)) for k, v in rows.items()}
base = med["off"]
print(f"{'set-up':6} {'CPU µs/req':>11} {'CPU vs off':>11} {'req/s':>9} {'req/s vs off':>13} {'p50 ms':>7} {'p99 ms':>7}")
for k in ("off", "json", "otel", "otel1"):
    cpu, rps, p50, p99 = med[k]
    print(f"{k:6} {cpu:11.1f} {cpu / base[0]:11.2f} {rps:9.0f} {rps / base[1]:13.2f} {p50:7.3f} {p99:7.3f}")
PY
