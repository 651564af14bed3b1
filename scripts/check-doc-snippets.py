#!/usr/bin/env python3
"""Checks that every ```swift block of README.md, docs/*.md and the DocC catalog appears in a test.

A block matches when its lines, compared without indentation and with runs of spaces collapsed,
appear one after another in a single Swift file under Tests/ or Sources/TokenDemo/ (blank lines
and a block's `import` lines are ignored). In a documentation line, `…` stands for any text, so a block may elide a closure body that
the test spells out. A block preceded by `<!-- doc-snippet: skip (reason) -->` is not checked
(only for text that is not Swift source, such as a Package.swift fragment); the reason is required.

Exit status 1 lists every block that no test contains, with its file and line. Run from the
repository root: `scripts/check-doc-snippets.py`.
"""
import glob
import re
import sys

DOCS = ["README.md"] + sorted(glob.glob("docs/*.md")) + sorted(
    glob.glob("Sources/ObservationTokens/ObservationTokens.docc/*.md"))
# Tests, and TokenDemo (a self-checking program built by `swift build`).
TESTS = sorted(glob.glob("Tests/**/*.swift", recursive=True)) + sorted(
    glob.glob("Sources/TokenDemo/**/*.swift", recursive=True))
SKIP = re.compile(r"<!--\s*doc-snippet:\s*skip\s*\((.+)\)\s*-->")


def normalize(line):
    return re.sub(r"\s+", " ", line.strip())


def blocks(path):
    """Yields (first line number, lines) for each ```swift block that is not marked skip."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith("```swift"):
            skipped = i > 0 and SKIP.search(lines[i - 1]) is not None
            start = i + 1
            j = start
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            if not skipped:
                yield start + 1, [l for l in lines[start:j]]
            i = j + 1
        else:
            i += 1


def pattern(line):
    parts = [re.escape(p) for p in normalize(line).split("…")]
    return re.compile("^" + ".*".join(parts) + "$")


def contains(haystack, needle):
    if not needle:
        return True
    first = needle[0]
    for start in range(len(haystack) - len(needle) + 1):
        if first.match(haystack[start]) and all(
                p.match(haystack[start + k]) for k, p in enumerate(needle)):
            return True
    return False


def main():
    sources = []
    for path in TESTS:
        text = [normalize(l) for l in open(path, encoding="utf-8").read().split("\n")]
        sources.append((path, [l for l in text if l]))
    missing = 0
    total = 0
    for doc in DOCS:
        for line_no, lines in blocks(doc):
            total += 1
            # `import` lines are left out: a test file has its imports at its top.
            needle = [pattern(l) for l in lines if normalize(l) and not normalize(l).startswith("import ")]
            if not any(contains(text, needle) for _, text in sources):
                missing += 1
                print(f"{doc}:{line_no}: this ```swift block appears in no test under Tests/ "
                      "(copy it verbatim into Tests/ObservationTokensTests/DocSnippets/, or fix the drift)")
    print(f"doc snippets: {total - missing} of {total} blocks found in tests")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
