#!/usr/bin/env bash
# The shipped dashboard and alert rules, checked for real (run by tests/run.sh):
#   1. `promtool check rules` on helm/mcp-runtime/rules/mcp-runtime.rules.yaml;
#   2. a real Prometheus (Debian package, pinned; in a container) scraping a running runtime
#      every second, with the rules loaded, while k6 (tests/observability/load.js) calls tools
#      that succeed, fail (an upstream 404, a program exiting 3), go through a REST adapter with
#      one upstream down (ejections, retries), hit a rate limit and send a foreign Host; with a
#      real Redis (a container) behind [redis];
#   3. check.py evaluates every dashboard query and alert expression through Prometheus's HTTP
#      API and fails on an error or an empty answer.
# Redis and Prometheus are the test harness's containers, started by its `mcp-e2e-parts`
# example (built beside the runtime by `cargo test --workspace --no-run`; a container engine
# must answer at DOCKER_HOST: `eval "$(bash tests/containers.sh)"`). Everything it starts lives
# in target/observability or in containers, and is stopped and removed on exit.
#
# Usage: bash tests/observability/run.sh [path/to/mcp-runtime] [path/to/k6]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
BIN="${1:-$ROOT/target/debug/mcp-runtime}"
K6="${2:-$ROOT/target/tools/venv/bin/k6}"
PROMETHEUS_VERSION=2.42.0+ds-5+deb12u1   # Debian 12 (bookworm); ships promtool
RULES="$ROOT/helm/mcp-runtime/rules/mcp-runtime.rules.yaml"
DASHBOARD="$ROOT/helm/mcp-runtime/dashboards/mcp-runtime.json"
WORK="$ROOT/target/observability"
T0=$(date +%s)
step() { echo "=== [observability $(( $(date +%s) - T0 ))s] $*"; }
die() { echo "FAILED: $*" >&2; for f in "$WORK"/*.log; do echo "--- $f" >&2; tail -n 20 "$f" >&2; done; exit 1; }
[[ -x "$BIN" ]] || die "no runtime binary at $BIN (run cargo build or cargo test first)"
[[ -x "$K6" ]] || die "no k6 at $K6 (bash loadtest/install-tools.sh k6)"
PARTS="$(dirname "$BIN")/examples/mcp-e2e-parts"
[[ -x "$PARTS" ]] || die "no $PARTS (cargo test --locked --workspace --no-run builds it)"

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

step "prometheus $PROMETHEUS_VERSION (apt: the files of its image; promtool included)"
if [[ "$(dpkg-query -W -f='${Version}' prometheus 2>/dev/null)" != "$PROMETHEUS_VERSION" ]]; then
    apt-get install -y -qq --no-install-recommends "prometheus=$PROMETHEUS_VERSION" >/dev/null \
        || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "prometheus=$PROMETHEUS_VERSION" >/dev/null; }
fi
prometheus --version 2>&1 | head -n 1

step "promtool check rules"
promtool check rules "$RULES"

rm -rf "$WORK" && mkdir -p "$WORK/upstream"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { # URL WHAT
    for _ in $(seq 100); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done
    die "$2 did not answer at $1"
}
# part NAME ARGS...: starts `mcp-e2e-parts NAME ARGS...` in the background and sets ADDRESS to
# the line it prints once the part is up (the first run of a machine builds its image first).
part() {
    local name="$1"
    "$PARTS" "$@" >"$WORK/$name.address" 2>"$WORK/$name.log" &
    PIDS+=($!)
    for _ in $(seq 600); do
        ADDRESS=$(head -n 1 "$WORK/$name.address")
        [[ -n "$ADDRESS" ]] && return 0
        kill -0 "${PIDS[-1]}" 2>/dev/null || die "mcp-e2e-parts $name exited (see $name.log)"
        sleep 0.1
    done
    die "mcp-e2e-parts $name did not start within 60 s"
}

step "parts: Redis (a container), a live HTTP upstream and a dead one, the runtime"
part redis
REDIS_URL="$ADDRESS"
echo '{"fine": true}' >"$WORK/upstream/ok.json"
LIVE_PORT=$(free_port)
python3 -m http.server "$LIVE_PORT" --bind 127.0.0.1 --directory "$WORK/upstream" >"$WORK/upstream.log" 2>&1 &
PIDS+=($!)
DEAD_PORT=$(free_port)   # nothing listens there: connections are refused
wait_for "http://127.0.0.1:$LIVE_PORT/ok.json" "the live upstream"

cat >"$WORK/runtime.toml" <<TOML
[server]
call_timeout_ms = 5000

[redis]
url = "$REDIS_URL"

[rate_limits.tools.limited]
global = { rate = 1, per_ms = 60000 }

[[adapters]]
name = "demo"
kind = "fixtures"
set = "demo"

[[adapters]]
name = "shell"
kind = "cli"

[[adapters.tools]]
name = "three"
description = "Exits 3."
executable = "sh"
args = ["-c", "echo failing >&2; exit 3"]

[[adapters.tools]]
name = "ok_cli"
description = "Exits 0."
executable = "true"

[[adapters.tools]]
name = "limited"
description = "Exits 0, once a minute."
executable = "true"

[[adapters]]
name = "api"
kind = "rest"
base_urls = ["http://127.0.0.1:$LIVE_PORT", "http://127.0.0.1:$DEAD_PORT"]
ejection = { consecutive_failures = 2, eject_ms = 2000 }

[[adapters.tools]]
name = "fine"
description = "Answers from the live upstream."
path = "/ok.json"

[[adapters.tools]]
name = "gone"
description = "Answers 404."
path = "/missing"
TOML
RUNTIME_PORT=$(free_port)
RUST_LOG=warn "$BIN" serve --config "$WORK/runtime.toml" --listen "127.0.0.1:$RUNTIME_PORT" >"$WORK/runtime.log" 2>&1 &
PIDS+=($!)
wait_for "http://127.0.0.1:$RUNTIME_PORT/readyz" "the runtime"

step "prometheus (a container on the host's network): scrape every 1 s, the rules loaded"
cat >"$WORK/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: mcp-runtime
    static_configs:
      - targets: ["127.0.0.1:$RUNTIME_PORT"]
YAML
# The rule file is copied into the container at the path the config names.
part prometheus "$WORK/prometheus.yml" "$RULES"
PROMETHEUS_URL="$ADDRESS"
wait_for "$PROMETHEUS_URL/-/ready" "Prometheus"

step "k6: 2 VUs x 8 s of calls (tests/observability/load.js)"
"$K6" run --quiet --no-color --no-usage-report -e BASE_URL="http://127.0.0.1:$RUNTIME_PORT" \
    -e VUS=2 -e DURATION=8s tests/observability/load.js >"$WORK/k6.log" 2>&1 || die "the k6 load failed (see k6.log)"
# Two more scrapes and rule evaluations after the last call.
sleep 3

step "every dashboard query and alert expression through Prometheus's HTTP API"
python3 tests/observability/check.py "$PROMETHEUS_URL" "$DASHBOARD" 30s || die "observability check"
