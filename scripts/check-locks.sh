#!/usr/bin/env bash
# The thread sanitizer can't see a contended `Synchronization.Mutex` hand-over on Linux (the lock
# is passed on inside the uninstrumented runtime and the kernel), so a raw `Mutex` produces false
# race reports in step 2 of .ci/run under load. The library's one lock is `Locked`
# (Internal/Locked.swift), which adds the edges TSan needs; tests use `RelLock` (pthread-based,
# Tests/ObservationTokensTests/Support/RelSupport.swift). This check keeps it that way.
set -euo pipefail
cd "$(dirname "$0")/.."
hits=$(grep -rnE '\bMutex(<|\()' Sources/ObservationTokens Tests/ObservationTokensTests --include='*.swift' \
    | grep -v '^Sources/ObservationTokens/Internal/Locked.swift:' \
    | grep -vE '^[^:]+:[0-9]+:\s*///?' || true)
if [ -n "$hits" ]; then
    echo "check-locks: use Locked (library) or RelLock (tests) instead of a raw Mutex:" >&2
    echo "$hits" >&2
    exit 1
fi
echo "check-locks: no raw Mutex outside Locked"
