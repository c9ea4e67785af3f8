# Process helpers shared by run.sh and bench-peers.sh (sourced, not run): start servers on
# loopback, remember their PIDs, stop exactly those on exit. Expects ROOT (the repository)
# and WORK (a scratch directory for configs and logs) to be set.

PIDS=()
stop_all() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null || true
    done
    PIDS=()
}

die() { echo "FAILED: $*" >&2; exit 1; }

# stop_cleanly PID WHAT LOG: SIGTERM, then waits for PID to return from main (an instrumented
# build writes its counts on exit; SIGKILL would lose them), dying with LOG's tail if it does
# not exit cleanly; stop_all forgets it (matched whole: a pattern would cut it out of others).
stop_cleanly() {
    local p left=()
    kill "$1"
    wait "$1" || die "$2 did not stop cleanly: $(tail -5 "$3")"
    for p in "${PIDS[@]}"; do [[ "$p" == "$1" ]] || left+=("$p"); done
    PIDS=("${left[@]}")
}

# build_release: target/release/mcp-runtime as the image builds it (docker/Dockerfile):
# profile-guided by service/runtime/pgo.profdata (loadtest/pgo.sh writes it), RUSTFLAGS of
# one's own kept. Nothing to do when it is current.
build_release() {
    RUSTFLAGS="-Cprofile-use=$ROOT/service/runtime/pgo.profdata${RUSTFLAGS:+ $RUSTFLAGS}" \
        cargo build --release --locked -p mcp-runtime
}

# llvm_profdata → PROFDATA: rustup's llvm-profdata for the toolchain at hand (the llvm-tools
# component, added when missing), which merges an instrumented build's counts.
llvm_profdata() {
    local sysroot
    sysroot=$(rustc --print sysroot)
    PROFDATA="$sysroot/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-profdata"
    [[ -x "$PROFDATA" ]] || rustup component add llvm-tools --toolchain "$(basename "$sysroot")" >&2
    [[ -x "$PROFDATA" ]] || die "llvm-profdata is missing from $sysroot (rustup component add llvm-tools)"
}

# build_bare → BARE_BIN: the bare handler (loadtest/peers/bare-axum) built the way
# build_release builds the runtime, so that a ratio to it compares like with like:
# profile-guided, by its own run of the requests the benchmarks send (wrk, 3 s each of
# tools/call and tools/list, and tools/call again with MCP_BEARER's token when set). Its
# profile is taken afresh each time (a minute or so). BARE_PLAIN=1 builds it plainly instead
# (the reference of the figures before 2026-12-08). Needs wrk, ROOT and WORK.
build_bare() {
    local manifest="$ROOT/loadtest/peers/bare-axum/Cargo.toml" raw="$ROOT/target/peers-instrumented/counts"
    local port pid request token line errors
    if [[ "${BARE_PLAIN:-0}" == 1 ]]; then
        cargo build --release --locked --manifest-path "$manifest" --target-dir "$ROOT/target/peers" >&2
        BARE_BIN="$ROOT/target/peers/release/bench-bare-axum"
        return 0
    fi
    llvm_profdata
    RUSTFLAGS="-Cprofile-generate=$raw" \
        cargo build --release --locked --manifest-path "$manifest" --target-dir "$ROOT/target/peers-instrumented" >&2
    rm -rf "$raw" # the build's own build scripts and proc macros wrote counts too
    port=$(free_port)
    "$ROOT/target/peers-instrumented/release/bench-bare-axum" "127.0.0.1:$port" >"$WORK/bare-instrumented.log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    wait_port "$port" || die "the instrumented bare handler did not start: $(cat "$WORK/bare-instrumented.log")"
    for request in tools/call tools/list tools/call+token; do
        token=""
        if [[ $request == *+token ]]; then
            [[ -n "${MCP_BEARER:-}" ]] || continue
            token=$MCP_BEARER
        fi
        line=$(MCP_BEARER="$token" wrk -t1 -c4 -d3s -s "$ROOT/loadtest/wrk/mcp.lua" "http://127.0.0.1:$port/mcp" \
            -- "${request%+token}" | sed -n 's/^WRK_JSON //p')
        errors=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["errors"])' "$line")
        [[ "$errors" == 0 ]] || die "the instrumented bare handler, $request: $errors errors under wrk"
    done
    stop_cleanly "$pid" "the instrumented bare handler" "$WORK/bare-instrumented.log"
    "$PROFDATA" merge --sparse -o "$ROOT/target/peers-instrumented/bare.profdata" "$raw"/*.profraw
    # Built afresh: cargo would keep its dependencies compiled by the last profile.
    rm -rf "$ROOT/target/peers-pgo"
    RUSTFLAGS="-Cprofile-use=$ROOT/target/peers-instrumented/bare.profdata" \
        cargo build --release --locked --manifest-path "$manifest" --target-dir "$ROOT/target/peers-pgo" >&2
    BARE_BIN="$ROOT/target/peers-pgo/release/bench-bare-axum"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT [SECONDS]: until something accepts connections on 127.0.0.1:PORT.
wait_port() {
    local i
    for i in $(seq $(( ${2:-10} * 20 ))); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# start_runtime BIN CONFIG NAME → RUNTIME_PID, RUNTIME_ADDR (127.0.0.1:PORT). The port is
# the one the runtime reports on stdout ("mcp-runtime listening on http://ADDR/PATH").
start_runtime() {
    local bin="$1" config="$2" name="$3"
    # Created here, not by the background job's redirection: the loop below may read them
    # before the job has opened them, and a failed `sed` would end a `set -e` caller.
    : >"$WORK/$name.out"
    : >"$WORK/$name.log"
    RUST_LOG="${RUST_LOG:-warn}" "$bin" serve --config "$config" --listen 127.0.0.1:0 \
        >"$WORK/$name.out" 2>"$WORK/$name.log" &
    RUNTIME_PID=$!
    PIDS+=("$RUNTIME_PID")
    for _ in $(seq 200); do
        RUNTIME_ADDR=$(sed -n 's#^mcp-runtime listening on http://\([^/]*\)/.*#\1#p' "$WORK/$name.out")
        [[ -n "$RUNTIME_ADDR" ]] && return 0
        kill -0 "$RUNTIME_PID" 2>/dev/null || break
        sleep 0.05
    done
    cat "$WORK/$name.log" >&2
    die "$name did not start ($bin --config $config)"
}

# nginx_main_conf DIR SERVER_BLOCKS: a minimal main config with pid, logs and temp paths in DIR.
nginx_main_conf() {
    local d="$1"
    cat <<EOF
daemon off;
worker_processes ${NGINX_WORKERS:-2};
pid $d/nginx.pid;
error_log $d/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $d/body;
    proxy_temp_path $d/proxy;
    fastcgi_temp_path $d/fastcgi;
    uwsgi_temp_path $d/uwsgi;
    scgi_temp_path $d/scgi;
$2
}
EOF
}

# start_nginx DIR PORT → NGINX_PID; DIR holds nginx.conf (written by the caller).
# NGINX_PREFIX: a command to run nginx under (e.g. "taskset -c 0").
start_nginx() {
    local d="$1" port="$2" prefix=()
    read -r -a prefix <<<"${NGINX_PREFIX:-}"
    chmod 755 "$d"
    "${prefix[@]}" nginx -p "$d" -c "$d/nginx.conf" -e "$d/error.log" &
    NGINX_PID=$!
    PIDS+=("$NGINX_PID")
    wait_port "$port" || { cat "$d/error.log" >&2; die "nginx did not start in $d"; }
}

# start_lb NAME ADDR... → LB_PORT, NGINX_PID: nginx with the shipped round-robin config
# (docker/nginx/mcp-runtime.conf, unchanged) over the given replica addresses; the server
# parameters come from docker/nginx/mcp-upstream.compose.conf.
start_lb() {
    local name="$1"; shift
    local d="$WORK/$name" params addr
    mkdir -p "$d"
    LB_PORT=$(free_port)
    params=$(sed -n 's/^server [^ ]* \(.*\);$/\1/p' "$ROOT/docker/nginx/mcp-upstream.compose.conf" | head -1)
    : >"$d/mcp-upstream.conf"
    for addr in "$@"; do echo "server $addr $params;" >>"$d/mcp-upstream.conf"; done
    echo "listen 127.0.0.1:$LB_PORT;" >"$d/mcp-listen.conf"
    nginx_main_conf "$d" "    include $ROOT/docker/nginx/mcp-runtime.conf;" >"$d/nginx.conf"
    start_nginx "$d" "$LB_PORT"
}

# start_static_upstream NAME → UPSTREAM_PORT: nginx answering GET /status with fixed JSON
# (the REST adapter's upstream in run.sh).
start_static_upstream() {
    local d="$WORK/$1"
    mkdir -p "$d"
    UPSTREAM_PORT=$(free_port)
    NGINX_WORKERS=1 nginx_main_conf "$d" "    server {
        listen 127.0.0.1:$UPSTREAM_PORT;
        location = /status { default_type application/json; return 200 '{\"status\":\"ok\",\"source\":\"loopback upstream\"}'; }
    }" >"$d/nginx.conf"
    start_nginx "$d" "$UPSTREAM_PORT"
}

# rss_kb PID [FIELD]: VmRSS (default) or VmHWM (peak) of a process, in kB.
rss_kb() {
    awk -v f="${2:-VmRSS}:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}

# settled COMMAND [ARG...] → COMMAND's output once it stops changing (read every 0.1 s, up to
# 10 s): a server's CPU time once it has done what wrk left it (a slow server's queued
# requests, the call-records writer's last drains), so that it neither takes the next
# round's CPU nor hides its own.
settled() {
    local last now
    last=$("$@")
    for _ in $(seq 100); do
        sleep 0.1
        now=$("$@")
        [[ "$now" == "$last" ]] && break
        last=$now
    done
    echo "$last"
}

# build_note BINARY: a line for a run's results when BINARY is not built as the image builds
# it (build_release: profile-guided, `--version` says so), with how its code is laid out
# (service/runtime/link-order.txt, the layout of a build without the profile; the list goes
# stale when a dependency or feature changes): its speed figures then understate the image's
# by 15-20 % (loadtest/RESULTS.md § Profile-guided). Nothing when it is.
build_note() {
    local said
    [[ "$("$1" --version 2>/dev/null)" == *"(profile-guided)" ]] && return 0
    said=$(python3 "$ROOT/loadtest/lib/link_order.py" --check "$1" "$ROOT/service/runtime/link-order.txt" 2>&1) || true
    echo "> **Build:** $1 is not profile-guided (\`--version\`; the image's build is: loadtest/lib/procs.sh build_release), so its figures understate the image's. Its code layout: ${said//$'\n'/: }."
}
