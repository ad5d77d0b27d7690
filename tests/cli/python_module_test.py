"""The scaleup Python module against `scaleup dump`, whose output is its contract.

  python_module_test.py SCALEUP MODULE_DIR CASE
  read     list(scaleup.read(p)) == the objects of `dump --json p`, on `gen basic --encap all`,
           `gen session` and a capture scapy writes (802.1ad and 802.1Q tags, SUE over UDP on a
           port not SUE's, found by its RH).
  columns  columns() == the values of `dump -T fields -E separator=/t`, for frame, RH, address,
           label and command fields, a field no frame has, and with occurrence=; the errors.
"""
import atexit
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import cli_test
from cli_test import check, rcrc, rh_bytes

SCALEUP = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.abspath(sys.argv[2]))
import scaleup  # noqa: E402  (built beside the tests)

TMP = tempfile.mkdtemp(prefix="scaleup-py-")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)
cli_test.SCALEUP, cli_test.TMP = SCALEUP, TMP


def tool(*args):
    return subprocess.run([SCALEUP, *args], check=True, capture_output=True, text=True).stdout


def captures():
    basic, session = os.path.join(TMP, "basic.pcap"), os.path.join(TMP, "session.pcap")
    tool("gen", "basic", "--encap", "all", "-o", basic)
    tool("gen", "session", "--commands", "300", "-o", session)
    from scapy.all import IP, UDP, Dot1AD, Dot1Q, Ether, Raw, wrpcap
    frames = []
    for i in range(3):
        body = rh_bytes(op=2, xpuid=100 + i, npsn=1000 + i, vc=i % 4, partition=7, apsn=999 + i)
        body += bytes(range(1, i + 2))
        frames.append(Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:0b") /
                      Dot1AD(vlan=100) / Dot1Q(vlan=200 + i) /
                      IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=40000 + i, dport=47931) /
                      Raw(body + rcrc(body)))
    tagged = os.path.join(TMP, "tagged.pcap")
    wrpcap(tagged, frames)
    return basic, session, tagged


def case_read():
    for p in captures():
        want = [json.loads(line) for line in tool("dump", "--json", p).splitlines()]
        got = list(scaleup.read(p))
        check(got == want, f"{os.path.basename(p)}: read() differs from dump --json")
        check(len(got) > 0, f"{p}: no frames")
    # One thread and the others give the same frames; a generator left early stops.
    check(list(scaleup.read(p, threads=1)) == want, "threads=1 differs")
    it = scaleup.read(captures()[1])
    next(it)
    it.close()


FIELDS = ["frame.number", "frame.time_relative", "encap", "ip.src", "vlan.id", "sue.rh.npsn",
          "sue.rcrc.status", "sue.cmd.type", "afh1.dst_xpu"]


def as_text(v):
    """A column value as -T fields prints it (hex fields aside: compared as numbers)."""
    return "" if v is None else str(v)


def missing(col, i):
    """The convention: masked in a numeric column, None in an object one."""
    return bool(col.mask[i]) if hasattr(col, "mask") else col[i] is None


def case_columns():
    for p in captures():
        rows = [line.split("\t") for line in
                tool("dump", "-T", "fields", "-E", "separator=/t",
                     *[a for f in FIELDS for a in ("-e", f)], p).splitlines()]
        cols = scaleup.columns(p, FIELDS)
        check(list(cols) == FIELDS, "columns are not in the order asked")
        first = scaleup.columns(p, FIELDS, occurrence=1)
        for k, name in enumerate(FIELDS):
            col, want = cols[name], [r[k] for r in rows]
            check(len(col) == len(want), f"{name}: {len(col)} frames, dump {len(want)}")
            for i, text in enumerate(want):
                values = text.split(",") if text else []
                v = col[i]
                got = list(v) if isinstance(v, tuple) else [] if missing(col, i) else [v]
                check(len(got) == len(values), f"{p} {name} frame {i + 1}: {got} vs '{text}'")
                for g, t in zip(got, values):
                    if t.startswith("0x"):
                        ok = int(g) == int(t, 16)
                    elif isinstance(g, float):
                        ok = g == float(t) and not math.isnan(g)
                    else:
                        ok = as_text(g) == t
                    check(ok, f"{p} {name} frame {i + 1}: {g!r} vs '{t}'")
                check(missing(first[name], i) == (not values),
                      f"{name} frame {i + 1}: occurrence=1 missing differs")
        check(str(cols["sue.rh.npsn"].dtype) == "uint64", "sue.rh.npsn is not uint64")
        check(bool(cols["afh1.dst_xpu"].mask.all()) if os.path.basename(p) != "basic.pcap"
              else True, "a field no frame has is not masked")
    try:
        scaleup.columns(os.path.join(TMP, "absent.pcap"), ["sue.rh.npsn"])
        check(False, "a missing file raised nothing")
    except OSError as e:
        check("absent.pcap: No such file or directory" in str(e), str(e))
    try:
        scaleup.columns(p, ["sue.nope"])
        check(False, "an unknown field raised nothing")
    except ValueError as e:
        check(str(e) == "-e: no field is named 'sue.nope'", str(e))
    try:
        list(scaleup.read(__file__))
        check(False, "a file not a capture raised nothing")
    except OSError as e:
        check("not a pcap or pcapng capture" in str(e), str(e))


if __name__ == "__main__":
    globals()["case_" + sys.argv[3]]()
    print("ok")
