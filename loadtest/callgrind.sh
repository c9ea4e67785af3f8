#!/usr/bin/env bash
# Instructions per request under valgrind's callgrind: user space only, so the figure does
# not depend on what else runs on the machine (not part of CI's pass/fail). Each server runs
# under callgrind with instrumentation off; after a warm-up, it is switched on for a
# fixed wrk run (`wrk -t1 -c4`, loadtest/wrk/mcp.lua's request bytes) and the instructions
# counted in that window, all threads, are divided by the requests wrk got answered.
#
#   ours   target/release/mcp-runtime with service/config/conformance.toml (or BIN, CONFIG)
#   bare   loadtest/peers/bare-axum (the ceiling of bench-peers.sh), profile-guided like the
#          runtime (loadtest/lib/procs.sh build_bare)
#
# Usage: bash loadtest/callgrind.sh [--duration SECONDS (8)] [SYSTEM...] (default: ours bare)
# Environment: BIN (the runtime binary; default: target/release, built first), CONFIG, RUST_LOG
#   (default warn; `warn,mcp_runtime::call=info` prices the per-call log line), MCP_BEARER (a
#   token every request carries, for a config with `[auth]`), MCP_PATH (the path requests go
#   to, default /mcp; a virtual endpoint's to price it), MCP_TOOL (the tool tools/call calls,
#   default echo), PRELOAD (an LD_PRELOAD for the server, e.g. an allocator to try without
#   rebuilding), VALGRIND_ARGS (more callgrind options, e.g. --demangle=no for the linker's
#   names: loadtest/link-order.sh), OUT (default target/callgrind/<UTC time>): one
#   callgrind.out per system and request, and summary.md. Inspect a profile with
#   `callgrind_annotate --inclusive=yes OUT/ours-tools-call.out | head -60`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
# shellcheck source=lib/procs.sh
source "$ROOT/loadtest/lib/procs.sh"

DURATION=8 SYSTEMS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --duration) DURATION="$2"; shift ;;
        -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) SYSTEMS+=("$1") ;;
    esac
    shift
done
[[ ${#SYSTEMS[@]} -gt 0 ]] || SYSTEMS=(ours bare)
BIN_SET="${BIN:-}"
BIN="${BIN:-$ROOT/target/release/mcp-runtime}"
CONFIG="${CONFIG:-$ROOT/service/config/conformance.toml}"
OUT=$(realpath -m "${OUT:-$ROOT/target/callgrind/$(date -u +%Y%m%dT%H%M%SZ)}")
WORK="$OUT/work"
mkdir -p "$WORK"
trap stop_all EXIT

command -v valgrind >/dev/null || die "valgrind is missing (apt-get install valgrind)"
bash "$ROOT/loadtest/install-tools.sh" wrk >/dev/null
[[ -n "${BIN_SET:-}" ]] || build_release
if [[ " ${SYSTEMS[*]} " == *" bare "* ]]; then
    build_bare # profile-guided like the runtime
    BARE=$BARE_BIN
fi

# The bare handler answers tools/list with the runtime's own bytes (as in bench-peers.sh).
start_runtime "$BIN" "$CONFIG" probe
AUTH=()
[[ -n "${MCP_BEARER:-}" ]] && AUTH=(-H "Authorization: Bearer $MCP_BEARER")
curl -sS "http://$RUNTIME_ADDR/mcp" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list' "${AUTH[@]}" \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
    | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["result"], separators=(",", ":"), ensure_ascii=False))' \
        >"$WORK/tools-list-result.json"
stop_all

# profile SYSTEM REQUEST → one line "SYSTEM REQUEST requests instructions per-request".
profile() {
    local system="$1" request="$2" port pid file cmd=()
    port=$(free_port)
    file="$OUT/$system-${request//\//-}.out"
    case "$system" in
        ours) cmd=("$BIN" serve --config "$CONFIG" --listen "127.0.0.1:$port") ;;
        bare) cmd=("$BARE" "127.0.0.1:$port" "$WORK/tools-list-result.json") ;;
        *) die "unknown system $system (ours bare)" ;;
    esac
    # shellcheck disable=SC2086 # VALGRIND_ARGS is a list of options
    RUST_LOG="${RUST_LOG:-warn}" LD_PRELOAD="${PRELOAD:-}" valgrind --tool=callgrind --instr-atstart=no ${VALGRIND_ARGS:-} \
        --callgrind-out-file="$file" "${cmd[@]}" >"$WORK/$system.out" 2>"$WORK/$system.log" &
    pid=$!
    PIDS+=("$pid")
    wait_port "$port" 60 || die "$system did not start under valgrind: $(tail -5 "$WORK/$system.log")"
    local url="http://127.0.0.1:$port${MCP_PATH:-/mcp}"
    wrk -t1 -c4 -d3s -s "$ROOT/loadtest/wrk/mcp.lua" "$url" -- "$request" >/dev/null
    callgrind_control -i on "$pid" >/dev/null
    local line
    line=$(wrk -t1 -c4 -d"$DURATION"s -s "$ROOT/loadtest/wrk/mcp.lua" "$url" -- "$request" | sed -n 's/^WRK_JSON //p')
    callgrind_control -i off "$pid" >/dev/null
    callgrind_control -d "$pid" >/dev/null # the window's counts, in $file.1
    stop_all
    local requests errors instructions
    requests=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["requests"])' "$line")
    errors=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["errors"])' "$line")
    [[ "$errors" == 0 ]] || die "$system $request: $errors errors under wrk"
    mv -f "$file.1" "$file" # the window's profile replaces the (empty) one written on exit
    instructions=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$file")
    echo "$system $request $requests $instructions $((instructions / requests))"
}

echo "| server | request | requests | instructions | per request |" >"$OUT/summary.md"
echo "|---|---|---:|---:|---:|" >>"$OUT/summary.md"
for s in "${SYSTEMS[@]}"; do
    for r in tools/call tools/list; do
        read -r sys req n total per <<<"$(profile "$s" "$r")"
        echo "[callgrind] $sys $req: $n requests, $total instructions, $per per request"
        printf '| %s | %s | %d | %d | **%d** |\n' "$sys" "$req" "$n" "$total" "$per" >>"$OUT/summary.md"
    done
done
cat "$OUT/summary.md"
echo "[callgrind] $OUT"
