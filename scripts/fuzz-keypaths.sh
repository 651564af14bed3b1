#!/usr/bin/env bash
# Fuzzes string key paths for SECONDS seconds (default 60) with libFuzzer.
#
# Builds Fuzz/KeyPathFuzzer.swift together with Sources/ObservationTokens as one module with
# `swiftc -sanitize=fuzzer,address` (the C target's source with clang, linked in) into
# .build-fuzz/, then runs it on the seed corpus in Fuzz/corpus (new inputs go to
# .build-fuzz/corpus). Exits non-zero on any finding (crash, AddressSanitizer report, failed
# check in the harness, or an input running longer than TIMEOUT seconds) and prints the
# offending input; the input is also saved under fuzz-artifacts/.
#
# Environment: FUZZ_SEED (libFuzzer -seed, default 1 so runs are reproducible), FUZZ_TIMEOUT
# (seconds per input, default 20), FUZZ_OPT (swiftc optimization flag, default -O).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
seed="${FUZZ_SEED:-1}"
timeout="${FUZZ_TIMEOUT:-20}"
opt="${FUZZ_OPT:--O}"
build=.build-fuzz
artifacts=fuzz-artifacts
binary="$build/fuzz-keypaths"
mkdir -p "$build/corpus" "$artifacts"

sources=()
while IFS= read -r -d '' file; do sources+=("$file"); done \
    < <(find Sources/ObservationTokens -name '*.swift' -print0 | sort -z)

echo "fuzz-keypaths: building $binary (${#sources[@]} library files + harness, $opt)"
build_start=$(date +%s)
# The linker warns about ASan's local symbols ("Cannot export local symbol"); that noise goes to
# the build log, which is printed in full if the build fails.
# The C target's one source file (its thread-local slots) is compiled apart and linked in.
if ! { clang -c -O2 -g -fsanitize=address -I Sources/CObservationTokensRuntime/include \
    Sources/CObservationTokensRuntime/CObservationTokensRuntime.c -o "$build/CObservationTokensRuntime.o" \
    && swiftc -sanitize=fuzzer,address -parse-as-library -swift-version 6 \
    -module-name ObservationTokens -package-name ObservationTokens "$opt" -g -warnings-as-errors \
    -I Sources/CObservationTokensRuntime/include \
    "${sources[@]}" Fuzz/KeyPathFuzzer.swift "$build/CObservationTokensRuntime.o" -o "$binary"; } \
    >"$build/build.log" 2>&1; then
    cat "$build/build.log"
    echo "fuzz-keypaths: build FAILED"
    exit 1
fi
echo "fuzz-keypaths: built in $(( $(date +%s) - build_start )) s; fuzzing for $seconds s (seed $seed)"

log="$build/fuzz.log"
set +e
# The Swift runtime's own crash handler would take over the crash signal before libFuzzer can
# save the input; turn it off so libFuzzer reports it.
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" \
    "$binary" -max_total_time="$seconds" -seed="$seed" -timeout="$timeout" -max_len=4096 \
    -dict=Fuzz/keypaths.dict -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "$build/corpus" Fuzz/corpus >"$log" 2>&1
status=$?
set -e

grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb|stat::new_units_added)' "$log" || true
grep -E '^#[0-9]+ +DONE' "$log" | tail -1 || true

if [ "$status" -ne 0 ]; then
    echo "fuzz-keypaths: FAILED (libFuzzer exit status $status). Last lines of $log:"
    tail -n 60 "$log"
    crash=$(grep -oE "Test unit written to [^ ]+" "$log" | tail -1 | sed 's/Test unit written to //' || true)
    if [ -n "$crash" ] && [ -f "$crash" ]; then
        echo "fuzz-keypaths: crashing input ($crash), as bytes:"
        od -An -c "$crash" | head -n 40
        echo "fuzz-keypaths: as base64: $(base64 -w0 "$crash")"
        echo "fuzz-keypaths: replay with: $binary $crash"
    fi
    exit 1
fi
echo "fuzz-keypaths: no findings"
