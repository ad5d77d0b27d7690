#!/usr/bin/env python3
"""The shared library exports exactly the functions scaleup.h declares, and nothing else.

usage: exports_test.py NM LIBRARY HEADER

The header's prototypes are read with its comments removed: every `scaleup_name(` that follows
a return type. The library's exports are `nm -D --defined-only`'s names.
"""
import re
import subprocess
import sys

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
PROTOTYPE = re.compile(r"[\w*]\s+\**\s*(scaleup_\w+)\s*\(")


def declared(header):
    with open(header, encoding="utf-8") as f:
        text = COMMENT.sub(" ", f.read())
    # Preprocessor lines hold no prototypes (a macro's parameters would look like one).
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return set(PROTOTYPE.findall(text))


def exported(nm, library):
    out = subprocess.run([nm, "-D", "--defined-only", library], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    nm, library, header = sys.argv[1:]
    want, have = declared(header), exported(nm, library)
    for name in sorted(want - have):
        print(f"declared in scaleup.h, not exported: {name}")
    for name in sorted(have - want):
        print(f"exported, not declared in scaleup.h: {name}")
    print(f"{len(want)} declared, {len(have)} exported")
    return 0 if want == have and want else 1


if __name__ == "__main__":
    sys.exit(main())
