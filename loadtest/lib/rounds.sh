# Interleaved wrk rounds and their paired ratios, for scripts that compare systems in one run.
# Needs: SYSTEMS (names, `bare` among them), URL[name], ROUNDS, DURATION, ROOT, WRK_PIN (a
# taskset prefix or empty) and, optionally, BEARER[name] (a token for loadtest/wrk/mcp.lua) and
# TOOL[name] (the tool it calls, default echo).
# Fills RPS[name] with one req/s per round (0 for a round with errors).

declare -A RPS BEARER TOOL
wrk_rounds() {
    local round i s line
    for round in $(seq "$ROUNDS"); do
        for i in "${!SYSTEMS[@]}"; do
            s=${SYSTEMS[$(((i + round) % ${#SYSTEMS[@]}))]}
            line=$(MCP_BEARER="${BEARER[$s]:-}" MCP_TOOL="${TOOL[$s]:-}" "${WRK_PIN[@]}" wrk -t1 -c32 -d"$DURATION"s -s "$ROOT/loadtest/wrk/mcp.lua" "${URL[$s]}" -- tools/call | sed -n 's/^WRK_JSON //p')
            RPS[$s]="${RPS[$s]:-} $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["rps"] if d.get("errors",0)==0 and d.get("non_2xx",0)==0 else 0)' "$line")"
        done
    done
}
values() { tr ' ' '\n' | grep -v '^$'; }
median() { values | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# Each system against bare in the same round, then the median of those ratios: the machine's
# drift between rounds (the bare handler is the most sensitive to it) cancels out.
paired() { # SYSTEM [REFERENCE (bare)]
    paste -d' ' <(echo "${RPS[$1]}" | values) <(echo "${RPS[${2:-bare}]}" | values) |
        awk '{ printf "%.3f\n", ($2 > 0 ? $1 / $2 : 0) }' | median
}
