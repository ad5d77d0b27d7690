#!/usr/bin/env python3
"""No header includes a layer above its own, nor another layer of the same rank; the compiled
parts beside the library keep to theirs.

usage: layering_test.py ROOT            check ROOT against ROOT/docs/architecture.md
       layering_test.py --self-test     the check must reject what it exists to reject

The layer order is read from docs/architecture.md, the one place it is written: the line
"Layer order, lowest first: a < b, c < d", where "<" separates ranks and "," separates layers
of one rank. Every directory under include/scaleup must be in it, and every
`#include "scaleup/<layer>/..."` (quotes or angle brackets) must name the header's own layer or
a layer of a lower rank.

Beside the library, the application layer (app/) is what the tools and the Wireshark plugin
share: the library includes nothing of it ("app/..."), and neither app/ nor wireshark/ includes
anything from tools/ (nor app/ from wireshark/). A quoted include is found as the compiler finds
it: beside the file, under include/, or under the project's root.
"""
import os
import re
import sys
import tempfile

ORDER_LINE = re.compile(r"^Layer order, lowest first:\s*(.+?)\s*$", re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]scaleup/([^/">]+)/([^">]+)[">]', re.M)


def layer_order(doc_path):
    """{layer: rank} from the order line of the page at doc_path."""
    with open(doc_path, encoding="utf-8") as f:
        m = ORDER_LINE.search(f.read())
    if not m:
        raise SystemExit(f"{doc_path}: no line 'Layer order, lowest first: ...'")
    rank = {}
    for i, group in enumerate(m.group(1).split("<")):
        for name in group.split(","):
            name = name.strip().strip("`")
            if not name or name in rank:
                raise SystemExit(f"{doc_path}: the layer order is malformed: {m.group(1)}")
            rank[name] = i
    return rank


# The C ABI's header (include/scaleup/scaleup.h, compiled into libscaleup_c from capi/) sits
# beside the layers, in none of them: C cannot include the C++ headers, so it includes no layer
# at all, which is all this check asks of it.
C_HEADERS = ("scaleup.h",)


def violations(include_root, rank):
    """(file, line, message) for every header or include that breaks the order."""
    found = []
    for layer in sorted(os.listdir(include_root)):
        layer_dir = os.path.join(include_root, layer)
        if layer in C_HEADERS and os.path.isfile(layer_dir):
            with open(layer_dir, encoding="utf-8") as f:
                text = f.read()
            for m in INCLUDE.finditer(text):
                found.append((layer, text.count("\n", 0, m.start()) + 1,
                              f"the C header includes layer '{m.group(1)}'"))
            continue
        if not os.path.isdir(layer_dir):
            found.append((layer, 0, "a header outside any layer directory"))
            continue
        if layer not in rank:
            found.append((layer, 0, f"layer '{layer}' is not in the documented order"))
            continue
        for dirpath, _, files in os.walk(layer_dir):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, include_root)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for m in INCLUDE.finditer(text):
                    target = m.group(1)
                    line = text.count("\n", 0, m.start()) + 1
                    if target == layer:
                        continue
                    if target not in rank:
                        found.append((rel, line, f"includes unknown layer '{target}'"))
                    elif rank[target] > rank[layer]:
                        found.append((rel, line, f"{layer} includes {target}, a layer above it"))
                    elif rank[target] == rank[layer]:
                        found.append((rel, line, f"{layer} includes {target}, a layer of its rank"))
    return found


QUOTED = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
APP_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]app/', re.M)
# What each compiled part may not reach into.
FORBIDDEN = {"app": ("tools", "wireshark"), "wireshark": ("tools",)}


def compiled_violations(root):
    """(file, line, message) for the library including app/, or app/ and wireshark/ including
    what they may not (FORBIDDEN)."""
    found = []
    lib = os.path.join(root, "include", "scaleup")
    for dirpath, _, files in os.walk(lib):
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for m in APP_INCLUDE.finditer(text):
                found.append((os.path.relpath(path, root), text.count("\n", 0, m.start()) + 1,
                              "the library includes the application layer"))
    for part, banned in FORBIDDEN.items():
        top = os.path.join(root, part)
        if not os.path.isdir(top):
            continue
        for dirpath, _, files in os.walk(top):
            for name in sorted(files):
                if not name.endswith((".hpp", ".cpp", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for m in QUOTED.finditer(text):
                    target = None
                    for base in (dirpath, os.path.join(root, "include"), root):
                        candidate = os.path.normpath(os.path.join(base, m.group(1)))
                        if os.path.isfile(candidate):
                            target = os.path.relpath(candidate, root)
                            break
                    if target and target.split(os.sep)[0] in banned:
                        found.append((os.path.relpath(path, root),
                                      text.count("\n", 0, m.start()) + 1,
                                      f"{part}/ includes {target}"))
    return found


def check(root):
    rank = layer_order(os.path.join(root, "docs", "architecture.md"))
    bad = [(f"include/scaleup/{rel}", line, msg)
           for rel, line, msg in violations(os.path.join(root, "include", "scaleup"), rank)]
    bad += compiled_violations(root)
    for rel, line, msg in bad:
        print(f"{rel}:{line}: {msg}")
    print(f"{len(bad)} layering violation(s)")
    return 1 if bad else 0


def compiled_self_test(tmp):
    """The checks of the compiled parts, over scratch trees: failures as text."""
    clean = {
        "include/scaleup/wire/a.hpp": "#pragma once\n",
        "app/s.hpp": '#include "scaleup/wire/a.hpp"\n#include "app/t.hpp"\n',
        "app/t.hpp": "#pragma once\n",
        "tools/c.hpp": '#include "app/s.hpp"\n',
        "tools/d.cpp": '#include "c.hpp"\n',
        "wireshark/p.cpp": '#include "app/s.hpp"\n#include "r.hpp"\n',
        "wireshark/r.hpp": "#pragma once\n",
    }
    cases = {
        "plugin includes a tool header": ("wireshark/q.cpp", '#include "../tools/c.hpp"\n',
                                          "wireshark/ includes tools"),
        "app includes a tool header": ("app/u.cpp", '#include "tools/c.hpp"\n',
                                       "app/ includes tools"),
        "app includes the plugin": ("app/v.cpp", '#include "../wireshark/r.hpp"\n',
                                    "app/ includes wireshark"),
        "library includes app": ("include/scaleup/wire/b.hpp", "#include <app/s.hpp>\n",
                                 "includes the application layer"),
    }
    failures = []

    def tree(base, files):
        for rel, text in files.items():
            path = os.path.join(base, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        return compiled_violations(base)

    got = tree(os.path.join(tmp, "compiled-clean"), clean)
    if got:
        failures.append(f"a clean tree of compiled parts was rejected: {got}")
    for i, (what, (where, text, expect)) in enumerate(cases.items()):
        got = tree(os.path.join(tmp, f"compiled{i}"), {**clean, where: text})
        if len(got) != 1 or expect not in got[0][2]:
            failures.append(f"{what}: expected one '{expect}', got {got}")
    return failures


def make_tree(base, order, headers):
    """A scratch project: docs/architecture.md with `order`, and the given headers."""
    os.makedirs(os.path.join(base, "docs"))
    with open(os.path.join(base, "docs", "architecture.md"), "w") as f:
        f.write(f"# layers\n\nLayer order, lowest first: {order}\n")
    for rel, text in headers.items():
        path = os.path.join(base, "include", "scaleup", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return violations(os.path.join(base, "include", "scaleup"),
                      layer_order(os.path.join(base, "docs", "architecture.md")))


def self_test():
    order = "wire < pack < tofu, rdma < sim"
    clean = {
        "wire/a.hpp": "#pragma once\n",
        "pack/b.hpp": '#include "scaleup/wire/a.hpp"\n#include "scaleup/pack/c.hpp"\n',
        "pack/c.hpp": "#include <scaleup/wire/a.hpp>\n",
        "tofu/t.hpp": '#include "scaleup/pack/b.hpp"\n',
        "rdma/r.hpp": '#include "scaleup/wire/a.hpp"\n',
        "sim/d.hpp": '#include "scaleup/tofu/t.hpp"\n  #  include "scaleup/rdma/r.hpp"\n',
        "scaleup.h": "#include <stdint.h>\n",
    }
    cases = {
        "upward": ('#include "scaleup/pack/b.hpp"\n', "wire/e.hpp", "a layer above"),
        "upward, angle brackets": ("#include <scaleup/sim/d.hpp>\n", "pack/e.hpp", "a layer above"),
        "sideways": ('#include "scaleup/rdma/r.hpp"\n', "tofu/e.hpp", "a layer of its rank"),
        "sideways, the other way": ('#include "scaleup/tofu/t.hpp"\n', "rdma/e.hpp",
                                    "a layer of its rank"),
        "unknown target": ('#include "scaleup/gone/x.hpp"\n', "pack/e.hpp", "unknown layer"),
        "undocumented layer": ("#pragma once\n", "extra/e.hpp", "not in the documented order"),
        "outside any layer": ("#pragma once\n", "loose.hpp", "outside any layer"),
        "C header includes a layer": ('#include "scaleup/wire/a.hpp"\n', "scaleup.h",
                                      "the C header includes layer 'wire'"),
    }
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        got = make_tree(os.path.join(tmp, "clean"), order, clean)
        if got:
            failures.append(f"a clean tree was rejected: {got}")
        for i, (what, (text, where, expect)) in enumerate(cases.items()):
            got = make_tree(os.path.join(tmp, f"case{i}"), order, {**clean, where: text})
            if len(got) != 1 or expect not in got[0][2]:
                failures.append(f"{what}: expected one '{expect}', got {got}")
        failures += compiled_self_test(tmp)
        for bad_order in ("no order line", "Layer order, lowest first: a < a",
                          "Layer order, lowest first: a <  < b"):
            path = os.path.join(tmp, "order.md")
            with open(path, "w") as f:
                f.write(bad_order + "\n")
            try:
                layer_order(path)
                failures.append(f"accepted a malformed page: {bad_order!r}")
            except SystemExit:
                pass
    for f in failures:
        print("FAIL:", f)
    print("self-test:", "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(check(sys.argv[1]))
