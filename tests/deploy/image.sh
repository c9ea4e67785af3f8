#!/usr/bin/env bash
# The shipped image, built and run as a container (podman; run by tests/run.sh):
#
#   base   gcr.io/distroless/cc-debian12:nonroot recreated from this Debian 12 host's packages
#          (distroless builds it from the same ones: libc6, libssl3, libgcc-s1, libgomp1,
#          libstdc++6, ca-certificates, tzdata, netbase; /etc/passwd with nonroot 65532; /tmp;
#          /home/nonroot; its USER, WORKDIR and ENV), imported as a local image: no registry
#          is reachable here.
#   build  docker/Dockerfile itself, unmodified, by `podman build` with two named build
#          contexts: the distroless name resolves to that local base, and the stage `build` to
#          a directory holding the binary given as /out/mcp-runtime (tests/run.sh passes the
#          release binary tests/deploy/checks.sh built with the build stage's own command), so
#          the builder stage, whose rust image cannot be pulled, is skipped. Every line of the
#          runtime stage runs as written.
#   run    the image's default command (no arguments), as the image's user, with a read-only
#          root and /tmp a tmpfs (the Helm chart's securityContext and emptyDir), the port
#          published on 127.0.0.1: the uid is 65532, /healthz and /readyz answer, the official
#          Python SDK's probe and a call of every tool of the default config go through the
#          published port, and SIGTERM ends it with status 0 within the grace period.
#
# Usage: bash tests/deploy/image.sh [path/to/mcp-runtime]   (default target/release/mcp-runtime)
# Env:   INTEROP_DIR (default target/interop): the Python SDK (tests/interop/setup.sh)
#        MCP_TEST_RUN: the run label its container carries (tests/run.sh sweeps by it)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
BIN="$(realpath -m "${1:-$ROOT/target/release/mcp-runtime}")"
INTEROP_DIR="$(realpath -m "${INTEROP_DIR:-$ROOT/target/interop}")"
T0=$(date +%s)
step() { echo "=== [image $(( $(date +%s) - T0 ))s] $*"; }
die() { echo "FAILED: $*" >&2; exit 1; }
[[ -x "$BIN" ]] || die "no runtime binary at $BIN (tests/deploy/checks.sh builds target/release/mcp-runtime)"
command -v podman >/dev/null || die "podman is not installed: eval \"\$(bash tests/containers.sh)\" installs it"
PY="$INTEROP_DIR/py/bin/python"
[[ -x "$PY" ]] || die "no Python SDK at $PY (bash tests/interop/setup.sh)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mcp-image.XXXXXX")
CID=""
IMAGE="localhost/mcp-runtime:image-test-$$"
cleanup() {
    [[ -n "$CID" ]] && podman rm -f "$CID" >/dev/null 2>&1
    podman rmi -f "$IMAGE" >/dev/null 2>&1
    rm -rf "$WORK"
}
trap cleanup EXIT

step "base: the distroless cc-debian12:nonroot layout from this host's packages"
PACKAGES=(libc6 libssl3 libgcc-s1 libgomp1 libstdc++6 ca-certificates tzdata netbase)
BASE_ROOT="$WORK/base"
mkdir -p "$BASE_ROOT"
# Every file and link of the packages (not their docs, not directories: tar makes those), at
# the paths the packages name them: /lib and /usr/lib apart, as in distroless, where this host
# merges them into /usr.
dpkg -L "${PACKAGES[@]}" | grep -vE '^/usr/share/(doc|man|info|lintian)/' | sort -u \
    | while read -r f; do [[ -d "$f" ]] || echo "${f#/}"; done >"$WORK/files"
tar -C / --no-recursion -cf - -T "$WORK/files" | tar -C "$BASE_ROOT" -xf -
# Made by update-ca-certificates, not shipped in the package.
mkdir -p "$BASE_ROOT/etc/ssl/certs" && cp /etc/ssl/certs/ca-certificates.crt "$BASE_ROOT/etc/ssl/certs/"
cp /etc/os-release "$BASE_ROOT/etc/os-release" 2>/dev/null || cp /usr/lib/os-release "$BASE_ROOT/etc/os-release"
cat >"$BASE_ROOT/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
cat >"$BASE_ROOT/etc/group" <<'EOF'
root:x:0:
nobody:x:65534:
tty:x:5:
staff:x:50:
nonroot:x:65532:
EOF
printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n' >"$BASE_ROOT/etc/nsswitch.conf"
mkdir -p -m 1777 "$BASE_ROOT/tmp"
mkdir -p -m 700 "$BASE_ROOT/root" "$BASE_ROOT/home/nonroot"
chown 65532:65532 "$BASE_ROOT/home/nonroot"
# The tag is the content's hash: the same packages make the same base, imported once.
BASE_HASH=$( (cd "$BASE_ROOT" && find . -printf '%p %m %U:%G %l\n' | sort && find . -type f -print0 | sort -z | xargs -0 sha256sum) \
    | sha256sum | cut -c1-16)
BASE="localhost/mcp-test-distroless-cc-debian12:$BASE_HASH"
if podman image exists "$BASE"; then
    echo "$BASE exists"
else
    started=$(date +%s%N)
    tar --numeric-owner -C "$BASE_ROOT" -cf "$WORK/base.tar" .
    podman import -q \
        --change 'USER 65532:65532' --change 'WORKDIR /home/nonroot' \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
        "$WORK/base.tar" "$BASE" >/dev/null
    echo "imported $BASE ($(du -sh "$BASE_ROOT" | cut -f1)) in $(( ($(date +%s%N) - started) / 1000000 )) ms"
fi

step "build: docker/Dockerfile as written, FROM that base, the build stage's /out/mcp-runtime = $BIN"
mkdir -p "$WORK/build-stage/out"
ln "$BIN" "$WORK/build-stage/out/mcp-runtime" 2>/dev/null || cp "$BIN" "$WORK/build-stage/out/mcp-runtime"
DISTROLESS=$(sed -n 's/^FROM \([^ ]*distroless[^ ]*\).*/\1/p' docker/Dockerfile)
[[ -n "$DISTROLESS" ]] || die "docker/Dockerfile: no distroless FROM line (teach this check the new base)"
started=$(date +%s%N)
podman build -q -f docker/Dockerfile -t "$IMAGE" \
    --build-context "$DISTROLESS=container-image://$BASE" \
    --build-context "build=$WORK/build-stage" \
    . >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log" >&2; die "podman build of docker/Dockerfile"; }
echo "built $IMAGE from $DISTROLESS = $BASE in $(( ($(date +%s%N) - started) / 1000000 )) ms"
podman image inspect -f 'user {{.Config.User}}, entrypoint {{json .Config.Entrypoint}}, cmd {{json .Config.Cmd}}' "$IMAGE"

step "run: the default command, read-only root, /tmp a tmpfs, 8080 published on 127.0.0.1"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
started=$(date +%s%N)
# --read-only-tmpfs=false: podman would otherwise add tmpfs mounts Docker and Kubernetes do not.
CID=$(podman run -d --name "mcp-test-image-$$" --label mcp-runtime.test=image --label "mcp-runtime.test.run=${MCP_TEST_RUN:-local}" \
    --read-only --read-only-tmpfs=false --tmpfs /tmp:rw,size=64m,mode=1777 -p "127.0.0.1:$PORT:8080" "$IMAGE")
URL="http://127.0.0.1:$PORT"
logs() { podman logs "$CID" 2>&1 | tail -n 40 >&2; }
for _ in $(seq 100); do
    curl -sf -o /dev/null "$URL/readyz" && break
    [[ "$(podman inspect -f '{{.State.Running}}' "$CID")" == true ]] || { logs; die "the container exited"; }
    sleep 0.1
done
curl -sf -o /dev/null "$URL/readyz" || { logs; die "not ready within 10 s"; }
echo "ready in $(( ($(date +%s%N) - started) / 1000000 )) ms"
PID=$(podman inspect -f '{{.State.Pid}}' "$CID")
UID_GID=$(awk '/^Uid:/ {u=$2} /^Gid:/ {g=$2} END {print u ":" g}' "/proc/$PID/status")
[[ "$UID_GID" == 65532:65532 ]] || die "the runtime runs as $UID_GID, not the image's 65532:65532"
ROOT_MOUNT=$(awk '$5 == "/" {print $6}' "/proc/$PID/mountinfo")
[[ ",$ROOT_MOUNT," == *,ro,* ]] || die "the root is mounted $ROOT_MOUNT, not read-only"
echo "process $PID: uid:gid $UID_GID, root mounted $ROOT_MOUNT"
for probe in healthz readyz; do
    code=$(curl -s -o "$WORK/$probe" -w '%{http_code}' "$URL/$probe")
    [[ "$code" == 200 ]] || { logs; die "GET /$probe answered $code"; }
    echo "GET /$probe: $code $(head -c 60 "$WORK/$probe")"
done

step "tools/call through the published port: the official Python SDK's probe, then every tool of the default config"
"$PY" tests/interop/py-client-probe.py "$URL/mcp" || { logs; die "the Python SDK probe failed against the image"; }
python3 - "$URL/mcp" <<'PY' || { logs; die "a tool of the default config failed in the image"; }
import json, sys, urllib.request
url = sys.argv[1]
def mcp(method, params, name=None):
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2026-07-28", "mcp-method": method}
    if name:
        headers["mcp-name"] = name
    with urllib.request.urlopen(urllib.request.Request(url, json.dumps(body).encode(), headers), timeout=10) as res:
        return json.loads(res.read())
tools = mcp("tools/list", {})["result"]["tools"]
for tool in tools:
    # A value of the declared type for every property (a missing optional one may ask the
    # user, and this client declares no elicitation).
    props = tool.get("inputSchema", {}).get("properties", {})
    args = {k: 1 if p.get("type") in ("number", "integer") else "Ada" for k, p in props.items()}
    answer = mcp("tools/call", {"name": tool["name"], "arguments": args}, tool["name"])
    if "error" in answer or answer.get("result", {}).get("isError"):
        sys.exit(f"{tool['name']} answered {answer}")
    print(f"  {tool['name']}: ok")
print(f"the default command serves {len(tools)} tools")
PY

# The runtime's default shutdown grace (server.shutdown_grace_ms, 25 s) + 5 s, as the chart
# computes terminationGracePeriodSeconds (without its preStop wait).
GRACE=30
step "SIGTERM: exit status 0 within the grace period (${GRACE} s)"
started=$(date +%s%N)
podman kill --signal TERM "$CID" >/dev/null
STATUS=$(timeout "$GRACE" podman wait "$CID") || { logs; die "still running ${GRACE} s after SIGTERM"; }
took=$(( ($(date +%s%N) - started) / 1000000 ))
[[ "$STATUS" == 0 ]] || { logs; die "exit status $STATUS after SIGTERM"; }
echo "exited 0, $took ms after SIGTERM; its last log line: $(podman logs "$CID" 2>&1 | tail -n 1 | cut -c1-200)"

step "the image passed"
