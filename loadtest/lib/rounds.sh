# Interleaved wrk rounds and their paired ratios, for scripts that compare systems in one run.
# Needs lib/procs.sh, SYSTEMS (names, `bare` among them), URL[name], ROUNDS, DURATION, ROOT,
# WRK_PIN (a taskset prefix or empty) and, optionally, BEARER[name] (a token for
# loadtest/wrk/mcp.lua), TOOL[name] (the tool it calls, default echo) and PID[name] (the
# server's process).
# Fills RPS[name] with one req/s per round (0 for a round with errors) and, for a system with a
# PID, CPU[name] with its CPU time per request in each round (µs, user + system): on a shared
# host the CPU a request takes moves less than the req/s a server gets.

declare -A RPS BEARER TOOL PID CPU
TICK_US=$((1000000 / $(getconf CLK_TCK)))
cpu_us() { # PID → its user + system CPU time so far, µs (0 once it is gone)
    awk -v tick="$TICK_US" '{ print ($14 + $15) * tick }' "/proc/$1/stat" 2>/dev/null || echo 0
}
wrk_rounds() {
    local round i s line before after
    for round in $(seq "$ROUNDS"); do
        for i in "${!SYSTEMS[@]}"; do
            s=${SYSTEMS[$(((i + round) % ${#SYSTEMS[@]}))]}
            before=$(cpu_us "${PID[$s]:-0}")
            line=$(MCP_BEARER="${BEARER[$s]:-}" MCP_TOOL="${TOOL[$s]:-}" "${WRK_PIN[@]}" wrk -t1 -c32 -d"$DURATION"s -s "$ROOT/loadtest/wrk/mcp.lua" "${URL[$s]}" -- tools/call | sed -n 's/^WRK_JSON //p')
            RPS[$s]="${RPS[$s]:-} $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["rps"] if d.get("errors",0)==0 and d.get("non_2xx",0)==0 else 0)' "$line")"
            [[ -n "${PID[$s]:-}" ]] || continue
            after=$(settled cpu_us "${PID[$s]}")
            CPU[$s]="${CPU[$s]:-} $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(round(int(sys.argv[2]) / d["requests"], 3) if d["requests"] else 0)' "$line" "$((after - before))")"
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
# The same for CPU per request, as bare's over the system's (1.0: as cheap as bare).
paired_cpu() { # SYSTEM [REFERENCE (bare)]
    paste -d' ' <(echo "${CPU[$1]}" | values) <(echo "${CPU[${2:-bare}]}" | values) |
        awk '{ printf "%.3f\n", ($1 > 0 ? $2 / $1 : 0) }' | median
}
