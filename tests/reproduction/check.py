#!/usr/bin/env python3
"""Checks docs/reproduction.md against the models.

usage: check.py [--self-test] REPRODUCE_BINARY docs/reproduction.md

Each table row whose first cell is an `id` states a seed figure, the model's figure, their ratio and
a tolerance. The binary prints `id value` for every row whose model exists. For each such row the
model figure written in the table must be what the binary computes (to the digits written), the
ratio must be model / seed, and the tolerance must hold: `±N%` (|model / seed - 1| <= N %),
`<= seed` (a limit the model must stay under), `>= seed` (one it must reach) or `= seed`. A row whose model column says `missing`
must not be computed by the binary (else the table is stale) and must say what is missing.
Exit 0 when every row holds; 1 with one line per failure otherwise.
"""
import re
import subprocess
import sys


def number(cell):
    m = re.fullmatch(r"\s*([-+]?[0-9]*\.?[0-9]+)\s*", cell)
    return float(m.group(1)) if m else None


def decimals(cell):
    cell = cell.strip()
    return len(cell.split(".")[1]) if "." in cell else 0


def check(binary, lines):
    """The failures of the table `lines` against the binary's rows, and the counts."""
    out = subprocess.run([binary], check=True, capture_output=True, text=True).stdout
    computed = {}
    for line in out.splitlines():
        k, v = line.split()
        computed[k] = float(v)
    failures, rows = [], 0
    seen = set()
    missing = 0
    for line in lines:
        m = re.match(r"\|\s*`([a-z0-9_.]+)`\s*\|", line)
        if not m:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 8:
            failures.append(f"{m.group(1)}: {len(cells)} columns, want 8")
            continue
        rid, _, _, seed_cell, model_cell, ratio_cell, tol, why = cells
        rid = rid.strip("`")
        rows += 1
        if rid in seen:
            failures.append(f"{rid}: listed twice")
        seen.add(rid)
        if model_cell.lower().startswith("missing"):
            missing += 1
            if rid in computed:
                failures.append(f"{rid}: table says missing, the models compute {computed[rid]:g}")
            if len(why) < 20:
                failures.append(f"{rid}: a missing row must say what is missing")
            continue
        if rid not in computed:
            failures.append(f"{rid}: no model computes it (write 'missing' and why)")
            continue
        got = computed[rid]
        written = number(model_cell)
        seed = number(seed_cell)
        if written is None or seed is None:
            failures.append(f"{rid}: seed and model figures must be plain numbers")
            continue
        d = decimals(model_cell)
        if abs(round(got, d) - written) > 0.5 * 10 ** -d + 1e-12:
            failures.append(f"{rid}: the table says {model_cell}, the model computes {got:.{d}f}")
        ratio = got / seed if seed else float("inf")
        r = number(ratio_cell)
        if r is None or abs(round(ratio, decimals(ratio_cell)) - r) > 0.5 * 10 ** -decimals(ratio_cell) + 1e-12:
            failures.append(f"{rid}: ratio written {ratio_cell}, model / seed is {ratio:.3f}")
        t = tol.replace(" ", "")
        if mt := re.fullmatch(r"±([0-9.]+)%", t):
            ok = abs(ratio - 1) <= float(mt.group(1)) / 100 + 1e-12
        elif t in ("<=seed", "≤seed"):
            ok = got <= seed
        elif t in (">=seed", "≥seed"):
            ok = got >= seed
        elif t == "=seed":
            ok = got == seed
        else:
            failures.append(f"{rid}: tolerance '{tol}' not understood")
            continue
        if not ok:
            failures.append(f"{rid}: model {got:g} against seed {seed:g} is outside {tol}")
    for rid in computed:
        if rid not in seen:
            failures.append(f"{rid}: computed but not in the table")
    return failures, rows, missing


def self_test(binary, lines):
    """Each damage to a good table must be caught: a stale model figure, a wrong ratio, a
    computed row marked missing, a row outside its tolerance, a row left out."""
    def damage(find, replace):
        return [l.replace(find, replace, 1) if f"`{rid}`" in l else l for l in lines]
    rid = "sue.latency.smf10"
    cases = {
        "stale model figure": damage("| 549.2 | 1.000 |", "| 549.3 | 1.000 |"),
        "wrong ratio": damage("| 549.2 | 1.000 |", "| 549.2 | 1.010 |"),
        "computed row marked missing": damage("| 549.2 | 1.000 | ±0.1% |", "| missing | | | |"),
        "outside tolerance": damage("| 549.2 | 549.2 | 1.000 |", "| 560 | 549.2 | 0.981 |"),
        "row left out": [l for l in lines if f"`{rid}`" not in l],
    }
    bad = [name for name, table in cases.items() if not check(binary, table)[0]]
    for name in bad:
        print(f"self-test: '{name}' was not caught")
    print(f"self-test: {len(cases) - len(bad)} of {len(cases)} damaged tables caught")
    return 1 if bad else 0


def main():
    args = sys.argv[1:]
    selftest = args[:1] == ["--self-test"]
    binary, doc = args[-2], args[-1]
    lines = open(doc, encoding="utf-8").read().splitlines()
    if selftest:
        return self_test(binary, lines)
    failures, rows, missing = check(binary, lines)
    for f in failures:
        print(f)
    print(f"{rows - missing} computed rows hold, {missing} rows have no model yet" if not failures
          else f"{len(failures)} problems in {rows} rows")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
