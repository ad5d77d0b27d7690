#!/usr/bin/env python3
"""`scaleup check` end to end: conformant captures pass, each rule's violation is caught.

usage: check_test.py SCALEUP_BINARY PYTHON_DIR CASE

conformant  the captures of `gen session` (every fault mix, several encapsulations),
            `gen traffic` (every pattern, SUE Lite included) and the ns-3 example (when
            built) are conformant: exit 0, no violation, and the rules examined frames.
violations  for every rule a capture that breaks it exactly once, built here frame by frame
            (with the scapy module generated from the field tables) or by `gen session
            --misbehave RULE`: exit 3, that rule fires once at the right frame, no other does.
options     --rules, --json's shape, the text report, exit statuses 1 and 2.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_test  # noqa: E402  (its helpers: one copy of fail, check and run)
from cli_test import check, fail, run  # noqa: E402,F401

SCALEUP = cli_test.SCALEUP = os.path.abspath(sys.argv[1])
sys.path.insert(0, sys.argv[2])
sys.path.insert(0, "/usr/lib/python3/dist-packages")
CASE = sys.argv[3]
TMP = tempfile.mkdtemp(prefix="scaleup-check-")

try:
    from scapy.contrib.mac_control import MACControlClassBasedFlowControl as PFC  # noqa: E402
    from scapy.layers.l2 import Dot1Q, Ether  # noqa: E402
    from scapy.packet import Raw  # noqa: E402
    from scaleup_scapy import AFH2C, AFH2Type, SUE  # noqa: E402
except ImportError as e:
    fail(f"scapy and the scaleup module are needed ({e})")


def write_pcap(path, frames):
    """A nanosecond pcap on the Ethernet link, written here (not by the library), one frame a
    microsecond; frames below the 60-byte minimum are padded with zeros as a NIC would."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for i, b in enumerate(frames):
            b = bytes(b)
            if len(b) < 60:
                b += bytes(60 - len(b))
            f.write(struct.pack("<IIII", 1_700_000_000, (i + 1) * 1000, len(b), len(b)))
            f.write(b)


# A read command of the default profile (docs/wire-format.md, "Command profile default"):
# type 0x0A, dlen, tag, 64-bit address: 12 bytes, no data.
READ = bytes([0x0A, 63, 0x00, 0x02]) + bytes(8)


def pdu(psn, src=1, dst=2, tc=0, payload=READ, **rh):
    """A data PDU from XPU src to XPU dst on AFH Gen 2 compressed (which names both XPUs)."""
    return bytes(AFH2C(src_xpu=src, dst_xpu=dst, tc=tc, **({"m": rh.pop("m")} if "m" in rh
                                                          else {})) /
                 AFH2Type() / SUE(op=2, xpuid=src, npsn=psn, **rh) / Raw(payload))


def ack(apsn, op=0, src=2, dst=1):
    """A stand-alone ACK (op 0) or NACK (op 1) from XPU src about the PDUs it received."""
    return bytes(AFH2C(src_xpu=src, dst_xpu=dst) / AFH2Type() /
                 SUE(op=op, xpuid=src, npsn=7, apsn=apsn))


def nack(apsn):
    return ack(apsn, op=1)


def mac(xpu):
    """The AFH Gen 1 address of an XPU: the default prefix "BSUE", then its id (R2 3.5.1)."""
    return f"42:53:55:45:00:{xpu:02x}"


def tagged_pdu(psn, prio, src=1, dst=2):
    """A data PDU on AFH Gen 1 with an 802.1Q tag whose PCP is the priority."""
    return bytes(Ether(src=mac(src), dst=mac(dst)) / Dot1Q(prio=prio, vlan=1) /
                 SUE(op=2, xpuid=src, npsn=psn) / Raw(READ))


def pfc(station, **times):
    """An 802.1Qbb PFC frame built by scapy's own MAC Control layer (not the library's):
    times={priority: quanta}."""
    fields = {}
    for p, q in times.items():
        fields[f"c{p[1:]}_enabled"] = 1
        fields[f"c{p[1:]}_pause_time"] = q
    return bytes(Ether(src=station, dst="01:80:c2:00:00:01") / PFC(**fields))


def check_json(path, *opts, expect=None):
    p = run("check", "--json", *opts, path, expect=expect)
    return p.returncode, json.loads(p.stdout)


def rules_of(report):
    return {r["id"]: r for r in report["rules"]}


def conformant(path, *opts, must_examine=()):
    rc, rep = check_json(path, *opts, expect=None)
    bad = {r["id"]: r["first"] for r in rep["rules"] if r["violations"]}
    check(rc == 0 and rep["conformant"] and not bad,
          f"{path} {' '.join(opts)}: exit {rc}, violations {json.dumps(bad)[:3000]}")
    rules = rules_of(rep)
    for r in must_examine:
        check(rules[r]["examined"] > 0, f"{path}: {r} examined nothing: {rules[r]}")
    return rep


TRANSPORT = ("psn.next", "gbn.resend", "nack.once", "ack.past_gap", "ack.monotonic",
             "ack.unsent")
PDU = ("rcrc.good", "pad.after_rcrc", "reserved.zero", "rh.version", "pdu.size", "vc.range",
       "pdu.one_dst", "cmd.profile")


def case_conformant():
    cap = os.path.join(TMP, "s.pcap")
    mixes = [
        [],
        ["--loss", "0.05", "--corrupt", "0.05"],
        ["--loss", "0.02", "--duplicate", "0.02", "--reorder", "0.02"],
        ["--loss", "0.1", "--corrupt", "0.02", "--duplicate", "0.02", "--reorder", "0.05"],
        ["--fail-link", "2:0:2000:30000", "--loss", "0.01"],
    ]
    for i, mix in enumerate(mixes):
        for encap in ("udp4", "afh2c") if i else ("udp4", "udp6", "afh1", "afh1-vlan-shim",
                                                  "afh2", "afh2c"):
            run("gen", "session", "-o", cap, "--xpus", "6", "--commands", "3000", "--seed",
                str(5 + i), "--encap", encap, *mix)
            rep = conformant(cap, must_examine=("psn.next", "ack.monotonic", "ack.unsent") +
                             PDU[:4])
            if "--loss" in mix:  # losses: NACKs and go-back-N resends to judge
                check(rules_of(rep)["nack.once"]["examined"] > 0, f"{mix}: no NACK examined")
                check(rules_of(rep)["gbn.resend"]["examined"] > 0, f"{mix}: no resend examined")
    # Several ports: the pcap does not say which port a frame crossed, so with --ports the
    # transport rules are not examinable, and the PDU rules still are.
    for mix in (["--ports", "2", "--fail-link", "1:0:2000:40000", "--load", "0.9"],
                ["--ports", "4", "--unordered", "--loss", "0.02"]):
        run("gen", "session", "-o", cap, "--commands", "3000", *mix)
        rep = conformant(cap, "--ports", mix[1], must_examine=PDU[:4])
        check(rules_of(rep)["psn.next"]["not_examinable"] > 0, "ports: transport not examinable")
    # gen traffic: every pattern, every encapsulation, SUE Lite included.
    for pattern in ("uniform", "incast", "fig21"):
        run("gen", "traffic", "-o", cap, "--pattern", pattern, "--encap", "all")
        rep = conformant(cap, must_examine=("lite.size", "lite.no_rh", "cmd.profile"))
        check(rep["lite_frames"] > 0 and rep["pdus"] > 0, f"{pattern}: {rep['pdus']} PDUs")
    # gen basic: frames of every encapsulation with random RH values, no session: the frame
    # rules hold, the transport ones are not its business.
    run("gen", "basic", "-o", cap, "--encap", "all")
    frame_rules = PDU + ("lite.no_rh", "lite.size")
    conformant(cap, "--rules", ",".join(frame_rules), must_examine=frame_rules[:4])
    # The ns-3 module's pcaps (ns3/, built with libns3-dev): each XPU port's, behind lossy links.
    example = os.path.join(os.path.dirname(os.path.dirname(SCALEUP)), "ns3", "sue-fabric")
    if os.path.exists(example):
        for encap in ("udp4", "afh1", "afh1-shim"):
            d = os.path.join(TMP, "ns3-" + encap)
            os.makedirs(d, exist_ok=True)
            subprocess.run([example, f"--encap={encap}", "--xpus=3", "--ports=1",
                            "--commands=100", "--loss=0.02", "--seed=1", f"--pcap={d}"],
                           check=True, capture_output=True)
            for n in range(3):
                conformant(os.path.join(d, f"xpu-{n}-0.pcap"), must_examine=PDU[:4])
    else:
        print("ns3/ not built (no libns3-dev): its captures not checked")


def caught(name, frames, rule, frame, *opts):
    path = os.path.join(TMP, name + ".pcap")
    write_pcap(path, frames)
    rc, rep = check_json(path, *opts, expect=None)
    fired = {r["id"]: r for r in rep["rules"] if r["violations"]}
    check(rc == 3, f"{name}: exit {rc}, wanted 3")
    check(set(fired) == {rule}, f"{name}: {sorted(fired)} fired, wanted only {rule}: "
                                f"{json.dumps(fired)[:2000]}")
    r = fired[rule]
    check(r["violations"] == 1 and r["first"][0]["frame"] == frame,
          f"{name}: {r['violations']} violations, first {r['first']}, wanted frame {frame}")
    check(r["first"][0]["expected"] and r["first"][0]["seen"], f"{name}: {r['first']}")
    return r["first"][0]


def case_violations():
    four = [pdu(s) for s in (1, 2, 3, 4)]
    v = caught("psn_next", [pdu(1), pdu(2), pdu(4)], "psn.next", 3)
    check(v["expected"] == "npsn 3 sent" and v["seen"] == "npsn 3 never sent", f"{v}")
    # A capture behind a lossy link misses PSNs that show up later: no skip.
    write_pcap(os.path.join(TMP, "missed.pcap"), [pdu(1), pdu(2), pdu(5), nack(3), pdu(3),
                                                   pdu(4), pdu(5), ack(5)])
    check_json(os.path.join(TMP, "missed.pcap"), expect=0)
    caught("gbn_resend", four + [nack(2), pdu(2), pdu(4)], "gbn.resend", 7)
    caught("nack_once", four + [nack(2), nack(2)], "nack.once", 6)
    caught("ack_past_gap", four + [nack(2), ack(3)], "ack.past_gap", 6, "--rto", "2500")
    caught("ack_monotonic", four + [ack(3), ack(2)], "ack.monotonic", 6)
    caught("ack_unsent", [pdu(1), pdu(2), ack(3)], "ack.unsent", 3)
    caught("pdu_one_dst", [pdu(1), pdu(2, m=1)], "pdu.one_dst", 2)
    caught("pdu_one_vc", [pdu(1, tc=3), pdu(2, tc=3), pdu(3, tc=4)], "pdu.one_vc", 3)
    caught("cmd_profile", [pdu(1), pdu(2, payload=bytes([0xEE, 1, 2, 3, 4, 5]))],
           "cmd.profile", 2)
    big = READ * 200  # 2400 bytes: within SUE's 4096, beyond the spec's 2K example
    caught("pdu_size", [pdu(1), pdu(2, payload=big)], "pdu.size", 2, "--max-pdu", "2048")
    caught("vc_range", [pdu(1, vc=1), pdu(1, vc=2)], "vc.range", 2, "--vcs", "2")
    bad = bytearray(pdu(2, payload=READ * 4))
    bad[8 + 8 + 6] ^= 1  # a bit of the first command's address
    caught("rcrc_good", [pdu(1), bad], "rcrc.good", 2)
    caught("pad_before_rcrc", [pdu(1), pdu(2, payload=READ + bytes(8))], "pad.after_rcrc", 2)
    long_pad = pdu(2) + bytes(40)  # 76 bytes: zeros after the R-CRC beyond the minimum
    caught("pad_past_minimum", [pdu(1), long_pad], "pad.after_rcrc", 2)
    caught("reserved_zero", [pdu(1), pdu(2, rsvd=3)], "reserved.zero", 2)
    caught("rh_version", [pdu(1), pdu(2, ver=1)], "rh.version", 2)
    parts = os.path.join(TMP, "partitions.txt")
    with open(parts, "w") as f:
        f.write("# XPU 1 may use partition 5 only\n1 5\n")
    caught("partition", [pdu(1, partition=5), ack(1), pdu(2, partition=6), ack(2)],
           "partition.allowed", 4, "--partitions", parts)
    lite_pdu = bytes(AFH2C(src_xpu=1, dst_xpu=2)) + bytes(SUE(op=2, xpuid=1, npsn=1) / Raw(READ))
    lite_ok = bytes(AFH2C(src_xpu=1, dst_xpu=2)) + READ
    caught("lite_no_rh", [lite_ok, lite_pdu], "lite.no_rh", 2)
    caught("lite_size", [lite_ok, bytes(AFH2C(src_xpu=1, dst_xpu=2)) + READ * 90], "lite.size", 2)
    # PFC on one link: the receiver's port pauses priority 3 for 1000 quanta (5.12 us at 100
    # Gb/s) at 2 us, in force 0.5 us later; the sender's PDU at 3 us breaks it, XON at 4 us
    # ends it. The stand-alone ACK rides priority 4.
    port = "02:aa:00:00:00:02"
    ack_tagged = bytes(Ether(src=mac(2), dst=mac(1)) / Dot1Q(prio=4, vlan=1) /
                       SUE(op=0, xpuid=2, npsn=7, apsn=3))
    link = [tagged_pdu(1, 3), pfc(port, p3=1000), tagged_pdu(2, 3), pfc(port, p3=0),
            tagged_pdu(3, 3), ack_tagged]
    v = caught("pfc_paused", link, "pfc.paused", 3, "--pfc-reaction", "500")
    check("priority 3" in v["expected"] and "1000 quanta" in v["expected"], f"{v}")
    # The same at 400 Gb/s: the pause lasts 1.28 us, from 2.5 to 3.78 us: still caught; with
    # the default reaction time (10 us) the PDU at 3 us is within it: conformant.
    caught("pfc_paused_400g", link, "pfc.paused", 3, "--pfc-reaction", "500",
           "--link-gbps", "400")
    rc, rep = check_json(os.path.join(TMP, "pfc_paused.pcap"), expect=0)
    check(rules_of(rep)["pfc.paused"]["examined"] == 3, f"{rules_of(rep)['pfc.paused']}")
    # dump shows the PFC frame by the library's table: scapy's bytes, our fields.
    d = json.loads(run("dump", "--json", os.path.join(TMP, "pfc_paused.pcap"))
                   .stdout.splitlines()[1])
    check(d.get("pfc.time3") == 1000 and d.get("pfc.cev") in (8, "0x08"), f"{d}")
    # From the fabric: an endpoint that misbehaves once.
    for rule, opts in MISBEHAVE:
        cap = os.path.join(TMP, "mis.pcap")
        run("gen", "session", "-o", cap, "--xpus", "4", "--commands", "2000", "--misbehave", rule,
            *opts)
        rc, rep = check_json(cap, expect=None)
        fired = {r["id"]: r for r in rep["rules"] if r["violations"]}
        check(rc == 3 and set(fired) == {rule} and fired[rule]["violations"] == 1,
              f"--misbehave {rule}: exit {rc}, {json.dumps(fired)[:2000]}")
        # The frame named is the misbehaving one: its RH says what the rule saw.
        frame = fired[rule]["first"][0]["frame"]
        dumped = [json.loads(l) for l in run("dump", "--json", cap).stdout.splitlines()]
        check(dumped[frame - 1]["frame"] == frame, f"--misbehave {rule}: frame {frame}")


# Rules the fabric harness can break on purpose (gen session --misbehave RULE).
MISBEHAVE = [("ack.unsent", []), ("ack.monotonic", []), ("nack.once", ["--loss", "0.05"]),
             ("gbn.resend", ["--loss", "0.05"])]


def case_options():
    path = os.path.join(TMP, "opt.pcap")
    write_pcap(path, [pdu(1), pdu(2), pdu(4), ack(9)])
    # Text: the table names every rule, then the violations with their frames.
    text = run("check", path, expect=3).stdout
    check("psn.next" in text and "frame 3: expected npsn 3 sent; seen npsn 3 never sent" in text,
          text)
    check("ack.unsent" in text and "frame 4" in text, text)
    # --rules: only the rules named, a family by prefix.
    rc, rep = check_json(path, "--rules", "psn.next", expect=3)
    check([r["id"] for r in rep["rules"]] == ["psn.next"], f"{rep['rules']}")
    rc, rep = check_json(path, "--rules", "ack.", expect=3)
    check(all(r["id"].startswith("ack.") for r in rep["rules"]) and len(rep["rules"]) == 3,
          f"{[r['id'] for r in rep['rules']]}")
    rc, rep = check_json(path, "--rules", "rcrc.good,pdu.size", expect=0)
    check(rep["conformant"] and rep["frames"] == 4 and rep["pdus"] == 4, f"{rep}")
    for r in rep["rules"]:
        for k in ("id", "seed", "sentence", "examined", "not_examinable", "violations", "first"):
            check(k in r, f"key {k} in {r}")
    # ACKs that go backwards, checked as one port: the report says a capture of several ports
    # would do that by itself; with --ports 2 the rules do not examine it, and say nothing.
    mixed = os.path.join(TMP, "mixed.pcap")
    write_pcap(mixed, [pdu(1), pdu(2), ack(2), ack(1)])
    text = run("check", mixed, expect=3).stdout
    check("note: checked as one port" in text and "--ports 2 or 4" in text, text)
    rc, rep = check_json(mixed, expect=3)
    check(rep["ports_may_mix"] is True, f"{rep}")
    rc, rep = check_json(mixed, "--ports", "2", expect=0)
    check(rep["ports_may_mix"] is False, f"{rep}")
    check("note:" not in run("check", mixed, "--ports", "2").stdout, "no note with --ports 2")
    rc, rep = check_json(path, "--rules", "rcrc.good", expect=0)
    check(rep["ports_may_mix"] is False, f"{rep}")
    # Exit statuses: 2 for usage, 1 for input that cannot be read.
    for bad in (["--rules", "no.such"], ["--vcs", "5"], ["--max-pdu", "0"], ["--bogus"], [],
                ["--ports", "3"]):
        run("check", *bad, *([path] if bad else []), expect=2)
    run("check", path, path, expect=2)
    run("check", "--partitions", os.path.join(TMP, "no-such-table"), path, expect=1)
    with open(os.path.join(TMP, "bad-table"), "w") as f:
        f.write("1 5000\n")  # no partition 5000: the field has 10 bits
    run("check", "--partitions", os.path.join(TMP, "bad-table"), path, expect=2)
    run("check", os.path.join(TMP, "missing.pcap"), expect=1)
    with open(os.path.join(TMP, "junk.pcap"), "wb") as f:
        f.write(b"not a capture")
    run("check", os.path.join(TMP, "junk.pcap"), expect=1)
    # A capture cut by the snapshot length: the R-CRC not examinable, never a violation.
    cut = os.path.join(TMP, "cut.pcap")
    with open(cut, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 40, 1))
        for i, b in enumerate([pdu(1, payload=READ * 8), pdu(2, payload=READ * 8)]):
            f.write(struct.pack("<IIII", 1_700_000_000, i * 1000, 40, len(b)) + b[:40])
    rc, rep = check_json(cut, "--udp-port", "61793", expect=0)
    check(rules_of(rep)["rcrc.good"]["not_examinable"] == 2, f"{rules_of(rep)['rcrc.good']}")
    # Cut datagrams on a port nobody named, before the whole ones that show the flow SUE: the
    # file is read a second time with what the first reading learned, as `stats` does.
    from scapy.layers.inet import IP, UDP  # noqa: E402
    late = os.path.join(TMP, "late.pcap")
    with open(late, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for i in range(4):
            b = bytes(Ether(src=mac(1), dst=mac(2)) / IP(src="10.0.0.1", dst="10.0.0.2") /
                      UDP(sport=50000, dport=50000) / SUE(op=2, xpuid=1, npsn=i + 1) /
                      Raw(READ * 8))
            kept = b[:80] if i < 2 else b  # the first two cut by the snapshot length
            f.write(struct.pack("<IIII", 1_700_000_000, (i + 1) * 1000, len(kept), len(b)) + kept)
    rc, rep = check_json(late, expect=0)
    check(rep["pdus"] == 4 and rules_of(rep)["rcrc.good"]["not_examinable"] == 2,
          f"{rep['pdus']} PDUs, {rules_of(rep)['rcrc.good']}")
    check(rules_of(rep)["psn.next"]["examined"] >= 3, f"{rules_of(rep)['psn.next']}")


if __name__ == "__main__":
    try:
        {"conformant": case_conformant, "violations": case_violations,
         "options": case_options}[CASE]()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("ok")
