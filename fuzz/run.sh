#!/usr/bin/env bash
# Builds every fuzz target and runs each for SECONDS (default 60) from its committed seeds
# plus a working corpus (fuzz/corpus/<target>/, not committed). Exits non-zero if any target
# crashes, leaks, times out or runs out of memory, and prints the artifact that reproduces it.
#
#   fuzz/run.sh            # 60 s per target
#   fuzz/run.sh 10         # a quick pass (CI)
#   WEFT_FUZZ_TARGETS="catalog canonical" fuzz/run.sh 300
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`).
set -euo pipefail
cd "$(dirname "$0")"

seconds="${1:-60}"
toolchain="${WEFT_FUZZ_TOOLCHAIN:-nightly}"
# AddressSanitizer by default; `none` builds much faster (weft forbids unsafe code, so a
# panic is what a short run looks for) and is what CI uses.
sanitizer="${WEFT_FUZZ_SANITIZER:-address}"
read -r -a targets <<<"${WEFT_FUZZ_TARGETS:-descriptor descriptor_toml canonical catalog caller_frame managed_line remote_message}"

# Longest input per target: room for realistic documents, small enough that libFuzzer
# spends its time on structure rather than on size.
max_len() {
    case "$1" in
        descriptor | descriptor_toml | catalog) echo 16384 ;;
        canonical | managed_line) echo 8192 ;;
        caller_frame | remote_message) echo 4096 ;;
        *) echo 4096 ;;
    esac
}

# Optimized, with debug assertions and overflow checks.
cargo "+$toolchain" fuzz build --sanitizer "$sanitizer"

failed=()
summary=()
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target" "artifacts/$target"
    log="artifacts/$target/last-run.log"
    echo "== $target: ${seconds}s, -max_len=$(max_len "$target")"
    status=0
    cargo "+$toolchain" fuzz run --sanitizer "$sanitizer" "$target" "corpus/$target" "seeds/$target" -- \
        -max_total_time="$seconds" \
        -max_len="$(max_len "$target")" \
        -rss_limit_mb=2048 \
        -timeout=10 \
        -print_final_stats=1 \
        >"$log" 2>&1 || status=$?
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    if [ -z "$execs" ]; then
        # The final stats can be cut off at exit; the last status line has the count too.
        execs="$(sed -n 's/^#\([0-9][0-9]*\)[[:space:]].*/\1/p' "$log" | tail -n 1)"
    fi
    summary+=("$target: ${execs:-?} execs in ${seconds}s, exit $status")
    if [ "$status" -ne 0 ]; then
        tail -n 40 "$log" >&2
        artifact="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)"
        echo "!! $target failed (exit $status); artifact: ${artifact:-none written}; log: fuzz/$log" >&2
        echo "   reproduce: cargo +$toolchain fuzz run $target ${artifact:-<artifact>}" >&2
        failed+=("$target")
    fi
done

echo "== summary"
printf '%s\n' "${summary[@]}"
if [ "${#failed[@]}" -ne 0 ]; then
    echo "FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "all ${#targets[@]} targets ran without a crash"
