# The production configuration of loadtest/production.sh, shared with loadtest/link-order.sh
# (sourced, not run; after lib/procs.sh, with ROOT, WORK and PIN set). `production_env`
# starts what production needs on loopback (a redis-server for the leased limit, the JWKS
# issuer of loadtest/lib/jwt_issuer.py), remembers their PIDs for stop_all, and sets:
#   TOKEN                    an RS256 token of that issuer for the runtime (every request's)
#   BASE, JWT, LIMIT, AUDIT  the configuration in parts (AUDIT writes $WORK/audit.jsonl)
#   $WORK/production.toml    the four parts together

production_env() {
    command -v redis-server >/dev/null || die "redis-server is not installed (apt-get install redis-server)"
    local redis_port issuer=https://issuer.loadtest.example audience=https://mcp.loadtest.example jwks
    redis_port=$(free_port)
    "${PIN[@]}" redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$WORK/redis.log" 2>&1 &
    PIDS+=($!)
    wait_port "$redis_port" || die "redis-server did not start"
    python3 "$ROOT/loadtest/lib/jwt_issuer.py" "$issuer" "$audience" >"$WORK/issuer.out" 2>"$WORK/issuer.log" &
    PIDS+=($!)
    for _ in $(seq 100); do grep -q '^JWKS ' "$WORK/issuer.out" 2>/dev/null && break; sleep 0.1; done
    TOKEN=$(sed -n 's/^TOKEN //p' "$WORK/issuer.out")
    jwks=$(sed -n 's/^JWKS //p' "$WORK/issuer.out")
    [[ -n "$TOKEN" && -n "$jwks" ]] || die "the issuer did not start: $(cat "$WORK/issuer.log")"
    BASE='[server]
name = "mcp-runtime-production"

[[request_state.keys]]
id = "loadtest"
secret = "bG9hZHRlc3Qta2V5LW5vdC1mb3ItcHJvZHVjdGlvbiE="

[[adapters]]
name = "demo"
kind = "fixtures"
set = "demo"'
    JWT="[auth]
resource = \"$audience\"
[[auth.issuers]]
issuer = \"$issuer\"
jwks_uri = \"$jwks\""
    LIMIT="[redis]
url = \"redis://127.0.0.1:$redis_port\"

[rate_limits]
lease_ms = 100
[rate_limits.tools.echo]
global = { rate = 10000000, per_ms = 1000, burst = 1000000 }"
    AUDIT="[audit]
enabled = true
file = \"$WORK/audit.jsonl\""
    printf '%s\n\n' "$BASE" "$JWT" "$LIMIT" "$AUDIT" >"$WORK/production.toml"
}
