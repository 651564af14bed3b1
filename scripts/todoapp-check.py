#!/usr/bin/env python3
"""Builds and runs the to-do app of Examples/TodoApp in each variant and compares them.

Every variant must print exactly the expected renders (one per change that alters the summary,
none for a change that doesn't), so the outputs are also identical. Then it counts each
variant's lines (non-blank, non-comment) per file and prints the Markdown table that README.md
holds between the `todoapp-table` markers.

    scripts/todoapp-check.py            build, run, compare, print the table
    scripts/todoapp-check.py --check    the same, and fail if README.md's table is not this one (CI)
    scripts/todoapp-check.py --update   the same, and write the table into README.md

Exits non-zero when a build fails or warns, when a variant's renders differ from the expected
ones, when the sources are not formatted by `swift format` with the repository's settings (the
line counts are compared, so the formatter decides the line breaks), or (--check) when the
README table is stale.
"""

import difflib
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "Examples" / "TodoApp"
README = ROOT / "README.md"
BEGIN = "<!-- todoapp-table:begin (scripts/todoapp-check.py --update) -->"
END = "<!-- todoapp-table:end -->"

# (name in the table, executable target)
VARIANTS = [
    ("ObservationTokens", "TodoTokens"),
    ("Observation (`withObservationTracking`)", "TodoObservation"),
    ("OpenCombine 0.14", "TodoCombine"),
]

# The file roles, in table order; each variant has the same three files.
FILES = [("Models", "TodoList.swift"), ("View model", "TodoViewModel.swift"), ("Driver", "main.swift")]

# What the driver's script must produce: the first render, then one per change that alters the
# summary. Its two other changes (the filter it already has, a title the filter hides) render
# nothing.
EXPECTED = [
    "all: 0 left — []",
    "all: 1 left — [write]",
    "all: 2 left — [write, test]",
    "all: 3 left — [write, test, ship]",
    "all: 2 left — [write, test, ship]",
    "active: 2 left — [test, ship]",
    "active: 2 left — [review, ship]",
    "active: 1 left — [review]",
    "done: 1 left — [write, ship]",
    "done: 1 left — [ship]",
    "all: 1 left — [proofread, ship]",
]


def fail(message):
    print(f"todoapp-check: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run(command, **kwargs):
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, **kwargs)


def build():
    # One product at a time: a plain `swift build` would also build the library's TokenDemo.
    output = ""
    for _, target in VARIANTS:
        result = run(["swift", "build", "--package-path", str(PACKAGE), "--product", target])
        output += result.stdout + result.stderr
        if result.returncode != 0:
            print(output, file=sys.stderr)
            fail(f"swift build --product {target} failed")
    warnings = sorted({line for line in output.splitlines() if "warning:" in line})
    if warnings:
        print("\n".join(warnings), file=sys.stderr)
        fail(f"{len(warnings)} warning(s) building Examples/TodoApp")
    result = run(["swift", "build", "--package-path", str(PACKAGE), "--show-bin-path"])
    return pathlib.Path(result.stdout.strip())


def check_format():
    sources = PACKAGE / "Sources"
    result = run(["swift", "format", "lint", "--strict", "--recursive", str(sources)])
    if result.returncode != 0:
        print(result.stdout + result.stderr, file=sys.stderr)
        fail(f"run `swift format --in-place --recursive {sources.relative_to(ROOT)}` (the line counts assume it)")


def renders(binary):
    try:
        result = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        fail(f"{binary.name} did not finish in 60 s")
    if result.returncode != 0:
        print(result.stdout + result.stderr, file=sys.stderr)
        fail(f"{binary.name} exited with {result.returncode}")
    return result.stdout.splitlines()


def compare(target, lines):
    """Fails with a diff and a list of duplicated/missing renders unless `lines` == EXPECTED."""
    if lines == EXPECTED:
        return
    diff = "\n".join(difflib.unified_diff(EXPECTED, lines, "expected", target, lineterm=""))
    problems = []
    for render in dict.fromkeys(EXPECTED + lines):
        want, got = EXPECTED.count(render), lines.count(render)
        if got > want:
            problems.append(f"rendered {got - want} time(s) too often: {render}")
        elif got < want:
            problems.append(f"missing {want - got} time(s): {render}")
    if not problems:
        problems.append("renders out of order")
    fail(f"{target} does not render as expected:\n" + "\n".join(problems) + "\n" + diff)


def count_lines(path):
    """Non-blank lines that are not only a comment (`//`, `///`, or inside `/* … */`)."""
    count = 0
    in_block = False
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if in_block:
            if "*/" in line:
                in_block = False
                line = line.split("*/", 1)[1].strip()
            else:
                continue
        if line.startswith("/*"):
            if "*/" not in line:
                in_block = True
                continue
            line = line.split("*/", 1)[1].strip()
        if line and not line.startswith("//"):
            count += 1
    return count


def table(results):
    header = "| Variant | " + " | ".join(role for role, _ in FILES) + " | Total | Renders |"
    rows = [header, "|---|" + "---:|" * (len(FILES) + 1) + "---|"]
    for name, target, counts, lines in results:
        link = f"[{name}](Examples/TodoApp/Sources/{target})"
        cells = [str(counts[file]) for _, file in FILES] + [f"**{sum(counts.values())}**"]
        rows.append(f"| {link} | " + " | ".join(cells) + f" | {len(lines)}, as expected |")
    return "\n".join(rows)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else None
    if mode not in (None, "--check", "--update"):
        fail(f"unknown argument {mode}; use --check or --update")
    check_format()
    bin_path = build()
    results = []
    for name, target in VARIANTS:
        sources = PACKAGE / "Sources" / target
        present = sorted(path.name for path in sources.glob("*.swift"))
        if present != sorted(file for _, file in FILES):
            fail(f"{target} must have exactly {', '.join(file for _, file in FILES)}; it has {', '.join(present)}")
        lines = renders(bin_path / target)
        compare(target, lines)
        counts = {file: count_lines(sources / file) for _, file in FILES}
        results.append((name, target, counts, lines))
    generated = table(results)
    print(generated)

    readme = README.read_text()
    pattern = re.compile(re.escape(BEGIN) + r"\n.*?" + re.escape(END), re.S)
    if not pattern.search(readme):
        fail(f"README.md has no table between {BEGIN} and {END}")
    updated = pattern.sub(lambda _: f"{BEGIN}\n{generated}\n{END}", readme)
    if mode == "--update" and updated != readme:
        README.write_text(updated)
        print("todoapp-check: README.md table updated")
    elif mode == "--check" and updated != readme:
        fail("README.md's table is stale: run scripts/todoapp-check.py --update")
    print(f"todoapp-check: {len(VARIANTS)} variants render the same {len(EXPECTED)} lines, once each")


if __name__ == "__main__":
    main()
