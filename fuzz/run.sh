#!/usr/bin/env bash
# Long fuzz runs: every target (or those named) under libFuzzer via cargo-fuzz,
# coverage-guided, for RUNS executions each; prints executions and crashes per target.
#   fuzz/run.sh [RUNS (default 1000000)] [TARGET...]
# Uses the nightly toolchain when rustup has one (with AddressSanitizer), else the stable
# one with RUSTC_BOOTSTRAP=1 and no sanitizer. New corpus entries go to
# target/fuzz/corpus/<target> (the committed seeds in fuzz/corpus stay as they are); crashes
# to target/fuzz/artifacts/<target>/. Exits 1 when any target crashed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${1:-1000000}
shift || true
TARGETS=("$@")
(( ${#TARGETS[@]} )) || TARGETS=(envelope request_state session_id cli_argv cli_paths rest_template schema_validation config)

CARGO_FUZZ_VERSION=0.13.2
CF="$ROOT/target/tools/cargo-fuzz/bin/cargo-fuzz"
if ! "$CF" --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
    cargo install --locked "cargo-fuzz@$CARGO_FUZZ_VERSION" --root "$ROOT/target/tools/cargo-fuzz"
fi
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    run() { cargo +nightly "$@"; }
    SANITIZER=address
else
    run() { RUSTC_BOOTSTRAP=1 cargo "$@"; }
    SANITIZER=none
fi
export PATH="$ROOT/target/tools/cargo-fuzz/bin:$PATH"
FUZZ_DIR=fuzz/libfuzzer
export CARGO_TARGET_DIR="$ROOT/target/fuzz/build"

run fuzz build --fuzz-dir "$FUZZ_DIR" --sanitizer "$SANITIZER"

failed=0
printf '%-18s %14s %10s %8s\n' target executions 'exec/s' crashes
for t in "${TARGETS[@]}"; do
    corpus="$ROOT/target/fuzz/corpus/$t" artifacts="$ROOT/target/fuzz/artifacts/$t"
    mkdir -p "$corpus" "$artifacts"
    log="$ROOT/target/fuzz/$t.log"
    status=0
    run fuzz run --fuzz-dir "$FUZZ_DIR" --sanitizer "$SANITIZER" "$t" "$corpus" "fuzz/corpus/$t" -- \
        -runs="$RUNS" -max_len=65536 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" >"$log" 2>&1 || status=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    crashes=$(find "$artifacts" -type f | wc -l)
    printf '%-18s %14s %10s %8s\n' "$t" "${execs:-?}" "${rate:-?}" "$crashes"
    if (( status != 0 || crashes > 0 )); then
        failed=1
        echo "  $t failed (exit $status): see $log and $artifacts/" >&2
    fi
done
exit "$failed"
