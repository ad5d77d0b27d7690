#!/usr/bin/env python3
"""IP reassembly in `scaleup dump` and `scaleup stats`, on fragments that scapy writes.

usage: ip_reassembly_test.py SCALEUP_BINARY CASE

SUE PDUs of 4000 payload bytes go over UDP in IPv4 (scapy's `fragment`, 1480 bytes a fragment)
or IPv6 (`fragment6`, 1280 bytes a packet) datagrams; the fragments of all of them are shuffled
together, one is sent twice, and each gets a time stamp in the order written. Expected values
come from the PDUs built here and from the order the fragments were written in, never from the
dissector.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_test  # the scaleup command's runner and the RH packed by hand
from cli_test import check, jsonl, rcrc, rh_bytes, run

PORT = 50001  # not a port the tool takes for SUE by default: named with --udp-port
PDUS = 3


def pdu(i):
    head = rh_bytes(op=2, xpuid=5, npsn=100 + i, vc=1, partition=3)
    body = head + bytes((i * 7 + k) & 0xFF for k in range(4000))
    return head, body + rcrc(body)


def capture(v6):
    """Writes the capture; returns its path and, per PDU, the frame numbers of its fragments
    in offset order and the number of the frame that completes it."""
    sys.path.insert(0, "/usr/lib/python3/dist-packages")
    from scapy.all import (IP, UDP, Ether, IPv6, IPv6ExtHdrFragment, Raw, fragment,
                           fragment6, wrpcap)
    pieces = []  # (pdu index, offset, frame)
    for i in range(PDUS):
        _, p = pdu(i)
        if v6:
            dgram = (IPv6(src="fd00::1", dst="fd00::2") / IPv6ExtHdrFragment(id=0x5000 + i) /
                     UDP(sport=PORT, dport=PORT) / Raw(p))
            frags = fragment6(dgram, 1280)
            offsets = [f[IPv6ExtHdrFragment].offset for f in frags]
        else:
            dgram = IP(src="10.0.0.1", dst="10.0.0.2", id=0x100 + i) / UDP(
                sport=PORT, dport=PORT) / Raw(p)
            frags = fragment(dgram, fragsize=1480)
            offsets = [f[IP].frag for f in frags]
        check(len(frags) >= 3, f"scapy cut PDU {i} into {len(frags)} fragments")
        for off, f in zip(offsets, frags):
            pieces.append((i, off, Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / f))
    rng = random.Random(17)
    rng.shuffle(pieces)
    pieces.insert(4, pieces[1])  # a duplicate: ignored
    frames = []
    for n, (_, _, f) in enumerate(pieces):
        f.time = 1700000000 + n * 0.000001
        frames.append(f)
    path = os.path.join(cli_test.TMP, "frag6.pcap" if v6 else "frag4.pcap")
    wrpcap(path, frames)
    by_pdu = {}
    completes = {}
    for n, (i, off, _) in enumerate(pieces, start=1):
        if n == 5:
            continue  # the duplicate of frame 2
        by_pdu.setdefault(i, []).append((off, n))
        completes[i] = n  # the last of its fragments to arrive
    refs = {i: [n for _, n in sorted(v)] for i, v in by_pdu.items()}
    # Frame 5 repeats frame 2: a duplicate while its datagram is pending, else the start of a
    # new one (that never completes).
    dup_note = "duplicate" if completes[pieces[1][0]] > 5 else "held for reassembly"
    return path, refs, completes, dup_note


def check_dump(path, refs, completes, dup_note, v6):
    ip = "ipv6" if v6 else "ip"
    frames = jsonl(run("dump", "--json", "--profile", "none", "--udp-port", str(PORT),
                       path).stdout)
    check(len(frames) == sum(len(r) for r in refs.values()) + 1, f"{len(frames)} frames")
    done = {f["frame"]: f for f in frames if "sue.rh.npsn" in f}
    check(sorted(done) == sorted(completes.values()),
          f"PDUs dissected in frames {sorted(done)}, wanted {sorted(completes.values())}")
    for i, n in completes.items():
        f = done[n]
        head, p = pdu(i)
        check(f["encap"] == ("udp6" if v6 else "udp4"), f"frame {n}: encap {f['encap']}")
        check(f["sue.rh.npsn"] == 100 + i and f["sue.rh.xpuid"] == 5 and f["sue.rh.vc"] == 1 and
              f["sue.rh.partition"] == 3 and f["sue.rh.op"] == 2, f"frame {n}: RH {f}")
        check(f["sue.payload.len"] == 4000, f"frame {n}: payload {f['sue.payload.len']}")
        check(f["sue.rcrc.status"] == "good", f"frame {n}: R-CRC {f['sue.rcrc.status']}")
        check(f["udp.length"] == 8 + len(p), f"frame {n}: UDP length {f['udp.length']}")
        check(f[ip + ".fragment"] == refs[i],
              f"frame {n}: fragments {f[ip + '.fragment']}, wanted {refs[i]}")
        check(f[ip + ".fragment.count"] == len(refs[i]), f"frame {n}: fragment count")
        hdr = 40 if v6 else 20
        check(f[ip + ".reassembled.length"] == hdr + 8 + len(p), f"frame {n}: length")
        check(not [e for e in f["errors"] if e["level"] == "error"], f"frame {n}: {f['errors']}")
    for f in frames:
        if f["frame"] in done:
            continue
        notes = [e["what"] for e in f["errors"]]
        check(len(notes) == 1, f"frame {f['frame']}: {f['errors']}")
        want = dup_note if f["frame"] == 5 else "held for reassembly"
        check(want in notes[0], f"frame {f['frame']}: {notes[0]!r}, wanted {want!r}")
    # Text and verbose output: the PDU on its completing frame, its layers in the datagram.
    text = run("dump", "--profile", "none", "--udp-port", str(PORT), path).stdout.splitlines()
    for n in completes.values():
        check(f"npsn=" in text[n - 1] and "rcrc=good" in text[n - 1], text[n - 1])
    verbose = run("dump", "-v", "--profile", "none", "--udp-port", str(PORT), path).stdout
    check(("Reassembled IPv6 packet" if v6 else "Reassembled IPv4 datagram") in verbose, verbose)


def check_stats(path):
    s = jsonl(run("stats", "--json", "--profile", "none", "--udp-port", str(PORT),
                  path).stdout)[0]
    check(s["analysed"] == PDUS and s["left_out"] == 0, f"stats: {s}")
    check(s["pdus"] == PDUS and s["retransmissions"] == 0 and s["gaps"] == 0, f"stats: {s}")


def case_ipv4():
    path, refs, completes, dup_note = capture(False)
    check_dump(path, refs, completes, dup_note, False)
    check_stats(path)


def case_ipv6():
    path, refs, completes, dup_note = capture(True)
    check_dump(path, refs, completes, dup_note, True)
    check_stats(path)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    cli_test.SCALEUP = os.path.abspath(sys.argv[1])
    return cli_test.run_case(globals(), sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
