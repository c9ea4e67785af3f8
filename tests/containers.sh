#!/usr/bin/env bash
# A container engine for the test harness (tests/harness/containers.rs runs Redis, nginx and
# Prometheus through testcontainers, which speaks the Docker Engine API at DOCKER_HOST).
# Idempotent. With an engine already answering at DOCKER_HOST, or at Docker's socket, it only
# prints the export. Otherwise: podman and runc from apt when missing; a
# /etc/containers/containers.conf when none exists (on this kernel's hybrid cgroups the default
# runtime, crun, refuses to start, and the default ulimits exceed the hard limits: runc,
# cgroupfs, ulimits of 1024); `podman system service` on target/podman/podman.sock unless it
# answers already. Progress goes to stderr, the export line to stdout:
#
#   eval "$(bash tests/containers.sh)"        # what tests/run.sh does
#   bash tests/containers.sh stop             # stop the service it started
#   bash tests/containers.sh sweep [RUN]      # remove the harness's containers (of one run,
#                                             # the label tests/run.sh sets, or all)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
DIR="$ROOT/target/podman"
SOCKET="$DIR/podman.sock"
LABEL=mcp-runtime.test
say() { echo "[containers] $*" >&2; }

# ping URL: the engine at unix://PATH answers /_ping.
ping() { curl -sf --max-time 2 --unix-socket "${1#unix://}" http://engine/_ping >/dev/null 2>&1; }

case "${1:-start}" in
    stop)
        if [[ -f "$DIR/service.pid" ]] && kill "$(cat "$DIR/service.pid")" 2>/dev/null; then
            say "stopped podman system service ($(cat "$DIR/service.pid"))"
        fi
        rm -f "$DIR/service.pid"
        exit 0
        ;;
    sweep)
        filter="label=$LABEL"
        [[ -n "${2:-}" ]] && filter="label=$LABEL.run=$2"
        ids=$(podman ps -aq --filter "$filter")
        if [[ -n "$ids" ]]; then
            # --depend: a pod's holder goes with the servers in its namespace.
            # shellcheck disable=SC2086
            podman rm -f --depend $ids >/dev/null
            say "removed $(wc -w <<<"$ids") leftover container(s) ($filter)"
        fi
        exit 0
        ;;
    start) ;;
    *) echo "usage: bash tests/containers.sh [start | stop | sweep [RUN]]" >&2; exit 2 ;;
esac

for host in "${DOCKER_HOST:-}" unix:///var/run/docker.sock; do
    if [[ "$host" == unix://* ]] && ping "$host"; then
        say "an engine answers at $host"
        echo "export DOCKER_HOST=$host"
        exit 0
    fi
done

if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
    say "apt-get install podman runc"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends podman runc >/dev/null \
        || { apt-get update -qq && apt-get install -y -qq --no-install-recommends podman runc >/dev/null; }
fi
if [[ ! -f /etc/containers/containers.conf ]]; then
    say "writing /etc/containers/containers.conf (runc, cgroupfs, ulimits 1024)"
    mkdir -p /etc/containers
    cat >/etc/containers/containers.conf <<'CONF'
# Written by tests/containers.sh: crun refuses hybrid cgroups here, and the default ulimits
# exceed the hard limits.
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
fi

if ! ping "unix://$SOCKET"; then
    mkdir -p "$DIR"
    rm -f "$SOCKET"
    # --time=0: it serves until stopped (`bash tests/containers.sh stop`).
    setsid podman system service --time=0 "unix://$SOCKET" >"$DIR/service.log" 2>&1 </dev/null &
    echo $! >"$DIR/service.pid"
    for _ in $(seq 100); do ping "unix://$SOCKET" && break; sleep 0.1; done
    ping "unix://$SOCKET" || { cat "$DIR/service.log" >&2; say "podman system service did not answer at $SOCKET"; exit 1; }
    say "podman $(podman version --format '{{.Client.Version}}') serves the Docker API at $SOCKET (pid $(cat "$DIR/service.pid"))"
    # For a caller that stops what it started (tests/run.sh).
    echo "export MCP_CONTAINERS_STARTED=1"
fi
echo "export DOCKER_HOST=unix://$SOCKET"
