#!/usr/bin/env bash
# Builds the DocC catalog and fails on any warning, or on a public symbol without a doc comment.
#
#   scripts/build-docc.sh [output-dir]     (default: .build-docc/ObservationTokens.doccarchive)
#
# Steps: the library's symbol graph from a build in its own scratch directory (.build-docc), then
# `docc convert` of Sources/ObservationTokens/ObservationTokens.docc with that graph. DocC warns
# about undocumented parameters, broken links and ambiguous references; it does not warn about
# a symbol that has no doc comment at all, so the symbol graph is checked for those here.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=.build-docc
graphs="$scratch/symbol-graphs"
output="${1:-$scratch/ObservationTokens.doccarchive}"
# Not emptied between runs: a build with nothing to recompile writes no new graph.
mkdir -p "$graphs"

swift build --target ObservationTokens --scratch-path "$scratch" \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs"

log="$scratch/docc.log"
docc convert Sources/ObservationTokens/ObservationTokens.docc \
    --additional-symbol-graph-dir "$graphs" --output-path "$output" \
    --fallback-display-name ObservationTokens --fallback-bundle-identifier ObservationTokens \
    >"$log" 2>&1 || { cat "$log"; echo "docc: convert failed"; exit 1; }

status=0
if grep -q "warning:" "$log"; then
    cat "$log"
    echo "docc: $(grep -c "warning:" "$log") warning(s); the catalog must build with none"
    status=1
fi

# Public symbols declared in this module's sources without a doc comment. Symbols without a
# source location (synthesized, or inherited from standard-library protocol extensions) carry
# the standard library's documentation and are skipped.
python3 - "$graphs/ObservationTokens.symbols.json" <<'PY' || status=1
import json, sys
graph = json.load(open(sys.argv[1]))
missing = []
for s in graph["symbols"]:
    if s.get("accessLevel") not in ("public", "open"):
        continue
    if s.get("docComment"):
        continue
    loc = s.get("location")
    if loc is None:
        continue
    missing.append(f"{loc['uri'].split('/Sources/')[-1]}:{loc.get('position', {}).get('line', 0) + 1}: "
                   f"public {s['kind']['displayName'].lower()} {'.'.join(s['pathComponents'])} has no doc comment")
for m in sorted(missing):
    print(m)
if missing:
    print(f"docc: {len(missing)} public symbol(s) without a doc comment")
    sys.exit(1)
PY

[ "$status" -eq 0 ] && echo "docc: catalog built with no warnings; every public symbol documented"
exit "$status"
