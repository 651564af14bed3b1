#!/usr/bin/env python3
"""Generates the DocC catalog's articles from docs/*.md, so each article has one source.

docs/<Name>.md is the source of ObservationTokens.docc/<Name>.md for every name in ARTICLES.
Links are rewritten for DocC: a link to another article becomes `<doc:Name>`, a link to a
document that is not in the catalog becomes its repository path (`docs/Performance.md`).
The landing page (ObservationTokens.md) is written by hand and not touched.

  scripts/sync-docc-articles.py          rewrite the catalog's articles
  scripts/sync-docc-articles.py --check  exit 1 if any article differs from its generated form
                                         (run in .ci/run: edit docs/, then run the script)
"""
import re
import sys

ARTICLES = ["Bindings", "Coalescing", "Collections", "Concurrency", "Debugging", "KeyPaths", "Lifecycle", "Synthetic", "Tracking"]
CATALOG = "Sources/ObservationTokens/ObservationTokens.docc"
LINK = re.compile(r"\[([^\]]+)\]\(([A-Za-z]+)\.md(#[^)]*)?\)")
CODE_PATH = re.compile(r"`docs/([A-Za-z]+)\.md`")


def link(match):
    text, name = match.group(1), match.group(2)
    if name in ARTICLES:
        target = f"<doc:{name}>"
    else:
        target = f"`docs/{name}.md`"
    if text == f"{name}.md":
        return target
    return f"{text} ({target})"


def code_path(match):
    name = match.group(1)
    return f"<doc:{name}>" if name in ARTICLES else match.group(0)


def generate(name):
    text = open(f"docs/{name}.md", encoding="utf-8").read()
    out = []
    fenced = False
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            line = CODE_PATH.sub(code_path, LINK.sub(link, line))
        out.append(line)
    body = "\n".join(out).rstrip("\n")
    return (body + f"\n\n<!-- Generated from docs/{name}.md by scripts/sync-docc-articles.py: "
            "edit that file, then run the script. -->\n")


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for name in ARTICLES:
        path = f"{CATALOG}/{name}.md"
        wanted = generate(name)
        try:
            current = open(path, encoding="utf-8").read()
        except FileNotFoundError:
            current = None
        if current != wanted:
            stale.append(path)
            if not check:
                open(path, "w", encoding="utf-8").write(wanted)
    if check and stale:
        for path in stale:
            print(f"{path}: differs from its source in docs/; run scripts/sync-docc-articles.py")
        return 1
    print(f"DocC articles: {len(ARTICLES) - len(stale) if check else len(ARTICLES)} of {len(ARTICLES)} in sync"
          if check else f"DocC articles: {len(stale)} rewritten from docs/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
