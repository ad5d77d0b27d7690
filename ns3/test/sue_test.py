#!/usr/bin/env python3
"""The ns-3 module's examples, run and read back.

usage: sue_test.py --eight EXAMPLE --fabric EXAMPLE --scaleup SCALEUP [--mpiexec MPIEXEC]

- sue-eight-xpus (the README's script): every write delivered once and in order over lossy
  links; its pcaps are Ethernet (counted by hand here, not through libpcap), `scaleup dump`
  reads every frame as AFH Gen 1 with its shim, good R-CRCs and the example's writes, and
  `scaleup check` exits 0 on each.
- sue-fabric, 64 XPUs x 4 ports on 4 switches with loss: exactly once, and `scaleup check`
  exits 0 on each of the 256 pcaps; with LLR and CBFC on lossier links: exactly once, repaired by
  LLR replays, with credit stalls; a link dead one way given up by LLR stalls no other XPU.
- With MPI: the same fabric undivided, and under mpirun with 1 and 2 ranks, gives the same
  counts, byte-identical traces of what every XPU received and byte-identical pcaps.
- Arguments the fabric must refuse are refused.
"""
import argparse
import filecmp
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--eight", required=True)
ap.add_argument("--fabric", required=True)
ap.add_argument("--scaleup", required=True)
ap.add_argument("--mpiexec")
args = ap.parse_args()


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def run(cmd, expect=0, cwd=None):
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=300)
    check(p.returncode == expect,
          f"{' '.join(cmd)}: exit {p.returncode}, wanted {expect}\n{p.stdout}\n{p.stderr}")
    return p


def records(path):
    """Packets in a classic pcap file, counted by hand (not through libpcap)."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data)[0]
    check(magic == 0xA1B2C3D4, f"{path}: not a little-endian microsecond pcap")
    link = struct.unpack_from("<I", data, 20)[0]
    check(link == 1, f"{path}: link type {link}, wanted Ethernet (1)")
    n, at = 0, 24
    while at < len(data):
        caplen, origlen = struct.unpack_from("<II", data, at + 8)
        check(caplen == origlen, f"{path}: record {n} cut short")
        at += 16 + caplen
        n += 1
    check(at == len(data), f"{path}: the last record is cut short")
    return n


def check_all(paths):
    """`scaleup check` on each pcap: exit 0."""
    for p in paths:
        run([args.scaleup, "check", p])


FABRIC_LINE = re.compile(
    r"rank (\d+) of (\d+): offered (\d+) expected (\d+) delivered (\d+) duplicates (\d+) "
    r"out-of-order (\d+) failed (\d+); frames (\d+) pdus (\d+) retransmissions (\d+); "
    r"llr-replays (\d+) credit-stalls (\d+);")
FIELDS = ["offered", "expected", "delivered", "duplicates", "out_of_order", "failed", "frames",
          "pdus", "retransmissions", "llr_replays", "credit_stalls"]


def fabric_totals(out, ranks):
    lines = [m for m in map(FABRIC_LINE.search, out.splitlines()) if m]
    check(len(lines) == ranks, f"{len(lines)} rank lines, wanted {ranks}:\n{out}")
    tot = dict.fromkeys(FIELDS, 0)
    for m in lines:
        for k, v in zip(FIELDS, m.groups()[2:]):
            tot[k] += int(v)
    return tot


def exactly_once(tot, what):
    check(tot["offered"] == tot["expected"] == tot["delivered"] and tot["duplicates"] == 0
          and tot["out_of_order"] == 0 and tot["failed"] == 0, f"{what}: not exactly once: {tot}")


def main():
    tmp = tempfile.mkdtemp(prefix="scaleup-ns3-sue-")

    # The README's 8-XPU script.
    eight = os.path.join(tmp, "eight")
    os.mkdir(eight)
    out = run([args.eight, "--pcap=" + os.path.join(eight, "sue")]).stdout
    print(out, end="")
    check("8000 writes offered, 8000 delivered once, 0 duplicates, 0 out of order" in out,
          "eight XPUs: not every write delivered once, in order")
    pcaps = sorted(os.path.join(eight, f) for f in os.listdir(eight) if f.endswith(".pcap"))
    check(len(pcaps) == 8, f"{len(pcaps)} pcaps, wanted one per XPU port")
    writes = 0
    for path in pcaps:
        frames = [json.loads(line) for line in
                  run([args.scaleup, "dump", "--json", path]).stdout.splitlines()]
        check(len(frames) == records(path) > 0, f"{path}: dump and the file disagree on count")
        for f in frames:
            where = f"{path} frame {f['frame']}"
            check(f["encap"] == "afh1-shim", f"{where}: encapsulation {f['encap']}")
            check(not f.get("errors"), f"{where}: {f.get('errors')}")
            check(f.get("sue.rcrc.status") == "good", f"{where}: R-CRC {f.get('sue.rcrc.status')}")
            for c in f.get("sue.cmds", []):
                check(c["sue.cmd.name"] == "WR_FULL" and c["sue.cmd.data_len"] == 64,
                      f"{where}: unexpected command {c}")
                check(c["sue.cmd.addr"] >> 48 == f["sue.rh.xpuid"],
                      f"{where}: a write from another source")
                writes += 1
    # Each port's pcap is a tap on its link, before the FCS check: every write at least twice,
    # once where it left and once where it arrived, more where it was resent.
    check(writes >= 2 * 8000, f"{writes} writes in the pcaps, fewer than 2 x 8000")
    check_all(pcaps)

    # 64 XPUs x 4 ports on 4 switches, lossy links, one process.
    one = os.path.join(tmp, "one")
    os.makedirs(os.path.join(one, "pcap"))
    os.makedirs(os.path.join(one, "trace"))
    base = [args.fabric, "--xpus=64", "--ports=4", "--commands=100", "--loss=0.01"]
    out = run(base + ["--pcap=" + os.path.join(one, "pcap"),
                      "--trace=" + os.path.join(one, "trace")]).stdout
    print(out, end="")
    single = fabric_totals(out, 1)
    exactly_once(single, "64 x 4")
    check(single["offered"] == 6400 and single["retransmissions"] > 0,
          f"64 x 4: {single}: losses and no retransmission")
    pcaps = sorted(os.path.join(one, "pcap", f) for f in os.listdir(os.path.join(one, "pcap")))
    check(len(pcaps) == 256, f"64 x 4: {len(pcaps)} pcaps, wanted 256")
    for p in pcaps[:4]:
        records(p)
    check_all(pcaps)

    # LLR and CBFC: corrupted frames are replayed hop by hop; small buffers stall on credits.
    out = run([args.fabric, "--xpus=8", "--ports=2", "--commands=300", "--loss=0.01", "--llr",
               "--cbfc=80"]).stdout
    print(out, end="")
    llr = fabric_totals(out, 1)
    exactly_once(llr, "LLR + CBFC")
    check(llr["llr_replays"] > 0 and llr["credit_stalls"] > 0,
          f"LLR + CBFC: {llr}: no replay or no stall")

    # A link dead one way (XPU 3 receives every frame on its port 0 with a bad FCS), under LLR and
    # CBFC: the switch's LLR gives up on it. With one port, what XPU 3 sends and what is sent to
    # it fails; every other pair's writes arrive as in a run without the dead link, which they do
    # not if the frames waiting for the dead link keep their credits. With two ports, failover
    # delivers everything once.
    dead = os.path.join(tmp, "dead")
    small = [args.fabric, "--xpus=6", "--commands=300", "--loss=0", "--llr", "--cbfc=80"]
    received = {}
    for name, extra, status in (("whole", [], 0), ("dead", ["--dead=3"], 1)):
        d = os.path.join(dead, name)
        os.makedirs(d)
        out = run(small + ["--ports=1", "--trace=" + d] + extra, expect=status).stdout
        print(out, end="")
        got = {}
        for n in os.listdir(d):
            with open(os.path.join(d, n)) as f:
                for line in f:
                    _, src, first, count = map(int, line.split())
                    got.setdefault((int(n[4:-4]), src), set()).update(range(first, first + count))
        received[name] = got
    pairs = [k for k in received["whole"] if 3 not in k]
    check(len(pairs) == 20, f"dead link: {len(pairs)} pairs without XPU 3, wanted 20")
    short = [k for k in pairs if received["dead"].get(k) != received["whole"][k]]
    check(not short, f"dead link: writes lost between XPUs that can reach each other: {short}")
    check(fabric_totals(out, 1)["failed"] > 0, "dead link: nothing to or from XPU 3 failed")
    out = run(small + ["--ports=2", "--dead=3"]).stdout
    print(out, end="")
    exactly_once(fabric_totals(out, 1), "dead link, two ports")

    # PFC: 16 XPUs on 5 Gb/s ports, switches that pause an XPU past 1 KiB queued from it: the
    # pauses reach the XPUs' pcaps, and `scaleup check` finds every pause obeyed (pfc.paused).
    pfc = os.path.join(tmp, "pfc")
    os.mkdir(pfc)
    out = run([args.fabric, "--xpus=16", "--ports=1", "--rate=5Gbps", "--pfc=1024",
               "--commands=300", "--loss=0", "--pcap=" + pfc]).stdout
    print(out, end="")
    exactly_once(fabric_totals(out, 1), "PFC")
    pauses = examined = 0
    for name in sorted(os.listdir(pfc)):
        path = os.path.join(pfc, name)
        for line in run([args.scaleup, "dump", "--json", path]).stdout.splitlines():
            f = json.loads(line)
            if f["encap"] == "pfc" and f["pfc.cev"] & 0x08 and f["pfc.time3"] > 0:
                pauses += 1
        rep = json.loads(run([args.scaleup, "check", "--json", "--link-gbps", "5", path]).stdout)
        examined += next(r["examined"] for r in rep["rules"] if r["id"] == "pfc.paused")
    check(pauses > 0 and examined > 0, f"PFC: {pauses} pauses, {examined} frames judged by pfc.paused")

    if args.mpiexec:
        flags = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
        for ranks in (1, 2):
            d = os.path.join(tmp, f"np{ranks}")
            os.makedirs(os.path.join(d, "pcap"))
            os.makedirs(os.path.join(d, "trace"))
            out = run([args.mpiexec, *flags, "-np", str(ranks), *base, "--mpi",
                       "--pcap=" + os.path.join(d, "pcap"),
                       "--trace=" + os.path.join(d, "trace")]).stdout
            print(out, end="")
            tot = fabric_totals(out, ranks)
            check(tot == single, f"{ranks} ranks: {tot}, undivided: {single}")
            for sub in ("pcap", "trace"):
                a, b = os.path.join(one, sub), os.path.join(d, sub)
                names = sorted(os.listdir(a))
                check(names == sorted(os.listdir(b)), f"{ranks} ranks: other {sub} files")
                match, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
                check(not mismatch and not errors,
                      f"{ranks} ranks: {sub} files differ from the undivided run's: "
                      f"{(mismatch + errors)[:5]}")
        print("mpirun -np 1 and -np 2: the undivided run's counts, traces and pcaps")

    for bad in (["--xpus=1"], ["--ports=3"], ["--loss=1"], ["--cbfc=80"], ["--mpi=1", "--xpus=0"],
                ["--xpus=4", "--dead=4"]):
        err = run([args.fabric, *bad], expect=2).stderr
        check(err.strip(), f"{bad}: refused without a message")
    print("ok")


if __name__ == "__main__":
    main()
