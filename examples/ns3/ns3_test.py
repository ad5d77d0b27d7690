#!/usr/bin/env python3
"""The ns-3 example, run and read back.

usage: ns3_test.py EXAMPLE SCALEUP

For AFH Gen 1 (bare and with the shim) and UDP over IPv4: the example delivers every command
once and in order over lossy links (exit 0); its pcaps, written by ns-3's CSMA devices, read
back with `scaleup dump` as SUE frames of that encapsulation with good R-CRCs and the packed
writes the nodes sent (the FCS ns-3 appends recognised as such); `scaleup stats` sees the
recoveries the example reports. Arguments it must refuse are refused.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

EXAMPLE, SCALEUP = sys.argv[1], sys.argv[2]
NODES, COMMANDS, LOSS = 4, 200, 0.03


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def run(cmd, expect=0):
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == expect,
          f"{' '.join(cmd)}: exit {p.returncode}, wanted {expect}\n{p.stdout}\n{p.stderr}")
    return p


def records(path):
    """Packets in a classic pcap file, counted by hand (not through libpcap)."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data)[0]
    check(magic in (0xA1B2C3D4, 0xA1B23C4D), f"{path}: not a little-endian pcap")
    link = struct.unpack_from("<I", data, 20)[0]
    check(link == 1, f"{path}: link type {link}, wanted Ethernet")
    n, at = 0, 24
    while at < len(data):
        caplen = struct.unpack_from("<I", data, at + 8)[0]
        at += 16 + caplen
        n += 1
    check(at == len(data), f"{path}: the last record is cut short")
    return n


def main():
    tmp = tempfile.mkdtemp(prefix="scaleup-ns3-")
    for encap in ("udp4", "afh1", "afh1-shim"):
        prefix = os.path.join(tmp, encap)
        out = run([EXAMPLE, f"--encap={encap}", f"--nodes={NODES}", f"--commands={COMMANDS}",
                   f"--loss={LOSS}", "--seed=3", f"--pcap={prefix}"]).stdout
        print(out, end="")
        total = NODES * COMMANDS
        check(f"{total} offered, {total} delivered, 0 duplicates, 0 out of order" in out,
              f"{encap}: not everything delivered once, in order")
        resent = int(out.split(" PDUs resent")[0].rsplit(" ", 1)[1])
        check(resent > 0, f"{encap}: a loss rate of {LOSS} and nothing resent")

        pcaps = sorted(f for f in os.listdir(tmp) if f.startswith(encap + "-")
                       and f[len(encap) + 1].isdigit())
        check(len(pcaps) == NODES, f"{encap}: {len(pcaps)} pcaps, wanted one per XPU")
        writes = retrans = 0
        for name in pcaps:
            path = os.path.join(tmp, name)
            frames = [json.loads(line) for line in
                      run([SCALEUP, "dump", "--json", path]).stdout.splitlines()]
            check(len(frames) == records(path), f"{name}: dump and the file disagree on count")
            for f in frames:
                where = f"{name} frame {f['frame']}"
                check(f["encap"] == encap, f"{where}: encapsulation {f['encap']}")
                check(not f.get("errors"), f"{where}: {f.get('errors')}")
                check(f["sue.rcrc.status"] == "good", f"{where}: R-CRC {f['sue.rcrc.status']}")
                check("eth.fcs" in f, f"{where}: ns-3's FCS not recognised")
                for c in f.get("sue.cmds", []):
                    check(c["sue.cmd.name"] == "WR_FULL" and c["sue.cmd.data_len"] == 64,
                          f"{where}: unexpected command {c}")
                    # The example's address: the source XPU, then a sequence number.
                    check(c["sue.cmd.addr"] >> 48 == f["sue.rh.xpuid"],
                          f"{where}: a command from another source")
                    writes += 1
            stats = json.loads(run([SCALEUP, "stats", "--json", path]).stdout)
            check(stats["left_out"] == 0, f"{name}: stats left frames out")
            retrans += stats["retransmissions"]
        # Each device's pcap holds what it sent and what it received: every write at least
        # twice (sender and receiver), more where it was resent.
        check(writes >= 2 * total, f"{encap}: {writes} writes in the pcaps, fewer than 2 x {total}")
        check(retrans > 0, f"{encap}: stats found no retransmission in the pcaps")

    for bad in (["--encap=afh2"], ["--encap=nonsense"], ["--nodes=1"], ["--limit=10"],
                ["--loss=1"]):
        err = run([EXAMPLE, *bad], expect=2).stderr
        check(err.strip(), f"{bad}: refused without a message")
    print("ok")


if __name__ == "__main__":
    main()
