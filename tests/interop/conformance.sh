#!/usr/bin/env bash
# Runs the official MCP conformance suite (server side, the requirement set of revision
# 2026-07-28, or of CONFORMANCE_REQUIREMENTS) against a running server, then prints one line per scenario and a closing
# `N passed, N failed` over the scored scenarios:
#
#   PASS <scenario> [(k warning(s): ids)]   no check failed (WARNINGs are SHOULD-level)
#   FAIL <scenario>: <check>: <message> | …  the first failing checks
#   INFO <scenario> [not scored: why] passing|failing (…)   run, but not scored for this revision
#   # …                                      comments
#
# Usage: bash tests/interop/conformance.sh URL [extra arguments for `conformance server`]
#   URL must be a localhost URL (the dns-rebinding scenario sends other Host headers).
# Env: INTEROP_DIR           where tests/interop/setup.sh installed (default <repo>/target/interop)
#      CONFORMANCE_OUT       where the per-scenario checks.json files go (default a new folder
#                            under $INTEROP_DIR/results)
#      CONFORMANCE_REQUIREMENTS  the requirement set (revision) to score: 2026-07-28 (default) or
#                            2025-11-25 (2025-era clients on the same endpoint)
#      CONFORMANCE_SCENARIO  run this one scenario only (at that revision's wire; an extension
#                            scenario, e.g. sep-2640-skills-enumeration, also needs the extra
#                            argument --force: the suite puts extensions on no revision's timeline)
# Exit: 0 when every scored scenario passed, 1 when one failed, 2 on usage or setup errors.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
URL="${1:-}"
if [[ -z "$URL" ]]; then
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
shift
DIR="${INTEROP_DIR:-$ROOT/target/interop}"
NODE="$DIR/bin/node"
CLI="$DIR/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [[ ! -x "$NODE" || ! -f "$CLI" ]]; then
    echo "the conformance suite is not installed under $DIR: run \`bash tests/interop/setup.sh\`" >&2
    exit 2
fi
OUT="${CONFORMANCE_OUT:-$DIR/results/$(date -u +%Y%m%dT%H%M%SZ)-$$}"
mkdir -p "$OUT"
LOG="$OUT/conformance.log"

ARGS=(server --url "$URL" -o "$OUT" --timeout 30000)
if [[ -n "${CONFORMANCE_SCENARIO:-}" ]]; then
    ARGS+=(--scenario "$CONFORMANCE_SCENARIO" --spec-version "${CONFORMANCE_REQUIREMENTS:-2026-07-28}")
else
    ARGS+=(--requirements "${CONFORMANCE_REQUIREMENTS:-2026-07-28}")
fi
ARGS+=("$@")

echo "# conformance $("$NODE" "$CLI" --version) (node $("$NODE" --version)): ${ARGS[*]}"
START=$(date +%s)
"$NODE" "$CLI" "${ARGS[@]}" >"$LOG" 2>&1
echo "# the suite exited with $? after $(( $(date +%s) - START ))s; its log and checks.json files: $OUT"
# With tests/interop/h2-preload.mjs loaded, the suite's protocol tally (to stderr, for the caller).
grep '^h2-preload:' "$LOG" >&2 || true
"$NODE" "$HERE/conformance-summary.cjs" "$OUT" "$LOG"
