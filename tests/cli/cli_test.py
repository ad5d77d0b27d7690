#!/usr/bin/env python3
"""End-to-end tests of the `scaleup` command, cross-checked against independent tools.

usage: cli_test.py SCALEUP_BINARY CASE

Expected values come from what `gen --json` says it wrote, from frames that scapy and
text2pcap build, and from bits packed here by hand; never from the dissector itself.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

SCALEUP = None
TMP = None


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def run(*args, expect=0):
    p = subprocess.run([SCALEUP, *args], capture_output=True, text=True)
    if expect is not None and p.returncode != expect:
        fail(f"scaleup {' '.join(args)}: exit {p.returncode}, wanted {expect}\n"
             f"stdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}")
    return p


def jsonl(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


# What `dump` says of a frame's place in its capture rather than of the frame: the times (a
# copy of a capture may shift them) and the interface (pcapng only).
FRAME_META = ("frame.time_epoch", "frame.time_relative", "frame.time_delta", "frame.interface_id")


def dissection(frames):
    """dump --json's objects without FRAME_META: what two captures of one frame must share."""
    return [{k: v for k, v in f.items() if k not in FRAME_META} for f in frames]


def dissection_text(text):
    """dump -v's text without FRAME_META's lines."""
    return [line for line in text.splitlines() if not any("{" + k + "}" in line
                                                          for k in FRAME_META)]


def rh_bytes(ver=0, op=2, rsv=0, xpuid=0, npsn=0, vc=0, rsvd=0, partition=0, apsn=0):
    """The 8-byte RH packed here from R2 Table 5, independently of the library."""
    w0 = (ver << 30) | (op << 28) | (rsv << 26) | (xpuid << 16) | npsn
    w1 = (vc << 30) | (rsvd << 26) | (partition << 16) | apsn
    return struct.pack(">II", w0, w1)


def rcrc(data):
    return struct.pack(">I", zlib.crc32(data) & 0xFFFFFFFF)


SRC_KEYS = {
    "udp4": None, "udp6": None,
    "afh1": ("afh1.src_xpu", "afh1.dst_xpu"), "afh1-vlan": ("afh1.src_xpu", "afh1.dst_xpu"),
    "afh1-shim": ("afh1.shim.src_xpu", "afh1.shim.dst_xpu"),
    "afh1-vlan-shim": ("afh1.shim.src_xpu", "afh1.shim.dst_xpu"),
    "afh2": ("afh2.src_xpu", "afh2.dst_xpu"), "afh2c": ("afh2c.src_xpu", "afh2c.dst_xpu"),
    "lite": ("afh2c.src_xpu", "afh2c.dst_xpu"),
}


def compare_gen_and_dump(gen_args, count_expected=None, scenario="basic"):
    cap = os.path.join(TMP, "gen.pcap")
    made = jsonl(run("gen", scenario, "-o", cap, "--json", *gen_args).stdout)
    seen = jsonl(run("dump", "--json", cap).stdout)
    check(len(made) == len(seen), f"gen wrote {len(made)} frames, dump shows {len(seen)}")
    if count_expected is not None:
        check(len(made) == count_expected, f"{len(made)} frames, wanted {count_expected}")
    for m, d in zip(made, seen):
        where = f"frame {m['frame']} ({m['encap']})"
        check(d["frame"] == m["frame"], f"{where}: frame number {d['frame']}")
        check(d["encap"] == m["encap"], f"{where}: encap {d['encap']}")
        check(d["errors"] == [], f"{where}: errors {d['errors']}")
        for k, v in m.items():
            if k in ("frame", "encap", "src_xpu", "dst_xpu", "tc", "sue.cmds"):
                continue
            check(d.get(k) == v, f"{where}: {k} = {d.get(k)!r}, generated {v!r}")
        # Every packed command, in order, with its type and lengths.
        got = d.get("sue.cmds", [])
        check(len(got) == len(m["sue.cmds"]),
              f"{where}: {len(got)} commands dissected, {len(m['sue.cmds'])} generated")
        for i, (mc, dc) in enumerate(zip(m["sue.cmds"], got)):
            for k, v in mc.items():
                check(dc.get(k) == v, f"{where}: command {i + 1} {k} = {dc.get(k)!r}, wanted {v!r}")
            check("sue.cmd.name" in dc, f"{where}: command {i + 1} has a name")
        keys = SRC_KEYS[m["encap"]]
        if keys:
            check(d[keys[0]] == m["src_xpu"] and d[keys[1]] == m["dst_xpu"],
                  f"{where}: xpu addresses {d[keys[0]]}->{d[keys[1]]}")
        elif m["encap"] == "udp4":
            check(d["ip.src"] == f"10.0.{m['src_xpu'] >> 8}.{m['src_xpu'] & 255}",
                  f"{where}: ip.src {d['ip.src']}")
        if "sue.rh.ver" in m:
            # The RH fields are exactly these, and numbers.
            rh_keys = sorted(k for k in d if k.startswith("sue.rh."))
            check(rh_keys == sorted(["sue.rh.ver", "sue.rh.op", "sue.rh.xpuid", "sue.rh.npsn",
                                     "sue.rh.vc", "sue.rh.partition", "sue.rh.apsn"]),
                  f"{where}: RH keys {rh_keys}")
            check(all(isinstance(d[k], int) for k in rh_keys), f"{where}: RH values not numbers")
    return made, seen


def case_roundtrip_all():
    made, _ = compare_gen_and_dump(["--count", "8", "--seed", "7"], 9 * 8)
    check({m["encap"] for m in made} == set(SRC_KEYS), "not every encapsulation generated")
    ops = {m.get("sue.rh.op") for m in made}
    check({0, 1, 2} <= ops, f"ACK, NACK and no-ack PDUs all present: {ops}")
    check(any(m.get("sue.payload.len") == 0 and m.get("sue.rh.op") == 1 for m in made),
          "an RH-only NACK")


def case_roundtrip_each():
    for e in SRC_KEYS:
        for seed in ("1", "99"):
            compare_gen_and_dump(["--encap", e, "--count", "5", "--seed", seed], 5)
    compare_gen_and_dump(["--encap", "udp4,lite", "--count", "3"], 6)


def case_roundtrip_afh2_link():
    made, seen = compare_gen_and_dump(["--link", "afh2", "--count", "6"], 18)
    check({m["encap"] for m in made} == {"afh2", "afh2c", "lite"}, "afh2 family only")
    p = run("gen", "basic", "-o", os.path.join(TMP, "x.pcap"), "--link", "afh2", "--encap",
            "udp4", expect=2)
    check("afh2" in p.stderr, "clear message for udp4 on the afh2 link")


def case_traffic():
    """gen traffic: packed commands come back out of dump, command for command."""
    for pattern in ("uniform", "incast"):
        for encap in ("udp4", "udp6", "afh1-vlan-shim", "afh2", "afh2c", "lite"):
            made, seen = compare_gen_and_dump(
                ["--pattern", pattern, "--encap", encap, "--count", "120", "--vcs", "4",
                 "--destinations", "5", "--seed", "3"], scenario="traffic")
            total = sum(len(m["sue.cmds"]) for m in made)
            check(total == 120, f"{pattern}/{encap}: {total} commands, wanted 120")
            limit = 1024 if encap == "lite" else 4096
            key = "sue_lite.len" if encap == "lite" else "sue.payload.len"
            check(all(m[key] <= limit for m in made), f"{pattern}/{encap}: over the limit")
            check(any(len(m["sue.cmds"]) > 1 for m in made), f"{pattern}/{encap}: packing happened")
            if pattern == "incast":
                check({m["dst_xpu"] for m in made} == {0} and len({m["src_xpu"] for m in made}) > 1,
                      "incast: many sources, one destination")
            else:
                check({m["src_xpu"] for m in made} == {0} and len({m["dst_xpu"] for m in made}) > 1,
                      "uniform: one source, many destinations")
    made, seen = compare_gen_and_dump(["--link", "afh2", "--encap", "lite,afh2c", "--count", "30"],
                                      scenario="traffic")
    check({m["encap"] for m in made} == {"lite", "afh2c"}, "bare AFH Gen 2 link")
    # SUE Lite: the payload's first byte is the first octet of the source MAC a switch reads
    # (R2 3.4, Fig. 10); its bit 0, the I/G bit, must never make the source a group address.
    cap = os.path.join(TMP, "lite.pcap")
    run("gen", "traffic", "-o", cap, "--encap", "lite", "--count", "200", "--seed", "5")
    _, _, _, link, records = read_pcap(cap)
    check(link == 1 and len(records) > 10, f"{len(records)} SUE Lite frames")
    group = [i for i, r in enumerate(records) if r[3][6] & 1]
    check(not group, f"SUE Lite frames whose source MAC is a group address: {group}")


def case_traffic_fig21():
    """R2 Fig. 21: A..E queued, C and E to one destination: PDUs A, B, C+E, D."""
    for encap in ("udp4", "lite"):
        made, seen = compare_gen_and_dump(["--pattern", "fig21", "--encap", encap], 4,
                                          scenario="traffic")
        check([len(m["sue.cmds"]) for m in made] == [1, 1, 2, 1], f"{encap}: {made}")
        check([m["dst_xpu"] for m in made] == [1, 2, 3, 4], f"{encap}: destinations")
    p = run("gen", "traffic", "-o", os.path.join(TMP, "f.pcap"), "--pattern", "fig21",
            "--encap", "udp4")
    text = run("dump", os.path.join(TMP, "f.pcap")).stdout
    check(text.count("cmd ") == 5 and "cmds=2" in text, text)


def case_profile_option():
    cap = os.path.join(TMP, "p.pcap")
    run("gen", "traffic", "-o", cap, "--profile", "default", "--count", "10")
    opaque = jsonl(run("dump", "--json", "--profile", "none", cap).stdout)
    check(all("sue.cmds" not in f and f["errors"] == [] for f in opaque), "opaque payloads")
    check(any(f.get("sue.payload.len", 0) > 0 for f in opaque), "payload still measured")
    run("dump", "--profile", "nosuch", cap, expect=2)
    run("gen", "traffic", "-o", cap, "--profile", "nosuch", expect=2)
    for bad in (["--pattern", "zigzag"], ["--vcs", "5"], ["--destinations", "0"],
                ["--destinations", "1024"], ["--count", "0"]):
        run("gen", "traffic", "-o", cap, *bad, expect=2)


def case_session():
    """gen session: a lossy fabric delivers every command once and in order; the capture of
    the wire (retransmissions included) dissects cleanly."""
    cap = os.path.join(TMP, "s.pcap")
    p = run("gen", "session", "-o", cap, "--xpus", "6", "--loss", "0.05", "--corrupt", "0.05",
            "--commands", "4000", "--seed", "4", "--json")
    s = json.loads(p.stdout)
    for k in ("offered", "delivered", "duplicates", "out_of_order", "retransmissions", "nacks",
              "goodput_gbps"):
        check(k in s, f"key {k}: {s}")
    check(s["offered"] == s["delivered"] == 4000, f"{s}")
    check(s["duplicates"] == 0 and s["out_of_order"] == 0, f"{s}")
    check(s["retransmissions"] > 0 and s["nacks"] > 0 and s["goodput_gbps"] > 0, f"{s}")
    frames = jsonl(run("dump", "--json", cap).stdout)
    check(len(frames) == s["frames"], f"{len(frames)} frames captured, {s['frames']} sent")
    check(all(f["errors"] == [] and f["encap"] == "udp4" for f in frames), "clean capture")
    # The same PSN more than once on a connection: retransmissions are in the capture.
    seen, again = set(), 0
    for f in frames:
        if f.get("sue.payload.len", 0) == 0:
            continue
        k = (f["ip.src"], f["ip.dst"], f["sue.rh.vc"], f["sue.rh.npsn"])
        again += k in seen
        seen.add(k)
    check(again > 0, "retransmitted PDUs appear in the capture")
    text = run("gen", "session", "-o", cap, "--ports", "2", "--fail-link", "1:0:2000:40000",
               "--commands", "20000", "--load", "0.9").stdout
    check("duplicates            0" in text and "out of order          0" in text, text)
    check("failovers             0 " not in text, text)
    # The specification's largest fabric: 1024 XPUs with 4 ports each.
    big = json.loads(run("gen", "session", "-o", cap, "--xpus", "1024", "--ports", "4",
                         "--loss", "0.01", "--commands", "3000", "--json").stdout)
    check(big["offered"] == big["delivered"] == 3000 and big["duplicates"] == 0, f"{big}")
    for bad in (["--ports", "3"], ["--loss", "2"], ["--loss", "x"], ["--xpus", "1"],
                ["--xpus", "1025"],
                ["--encap", "lite"], ["--fail-link", "9:0:100"], ["--fail-link", "1:x"],
                ["--commands", "0"], ["--unordered"], ["--unordered", "--ports", "1"]):
        run("gen", "session", "-o", cap, *bad, expect=2)
    # Unordered with ports to spread over says so; refused above with one.
    text = run("gen", "session", "-o", cap, "--ports", "2", "--unordered",
               "--commands", "500").stdout
    check("(unordered)" in text or "unordered" in text.split("\n")[0], text)


def session_json(cap, *opts):
    return json.loads(run("gen", "session", "-o", cap, "--json", *opts).stdout)


def case_session_modes():
    """gen session with CBFC, LLR, both, and R1's keying: every command exactly once and in order,
    the capture conformant; with --corrupt, LLR repairs the damage hop by hop (replays, no
    end-to-end retransmission), without it go-back-N does (retransmissions, no replay)."""
    cap = os.path.join(TMP, "modes.pcap")
    base = ["--xpus", "6", "--commands", "3000", "--seed", "3"]
    modes = [
        ("cbfc", ["--cbfc", "130"]),
        ("llr", ["--llr"]),
        ("corrupt", ["--corrupt", "0.05"]),
        # LLR replays from the first frame not acknowledged: one damaged frame in a hundred
        # leaves most replays of a full link whole (at 0.05 a replay of ~250 frames almost never
        # is, and the end-to-end timer resends too: --llr's help says so).
        ("llr_corrupt", ["--llr", "--corrupt", "0.01"]),
        ("llr_loss", ["--llr", "--corrupt", "0.05", "--loss", "0.02"]),
        ("cbfc_llr_loss", ["--cbfc", "130", "--llr", "--loss", "0.02", "--corrupt", "0.02"]),
        ("two_ports", ["--ports", "2", "--cbfc", "200", "--llr", "--corrupt", "0.02"]),
        ("port_destination", ["--keying", "port-destination", "--loss", "0.02"]),
    ]
    for name, opts in modes:
        # Two ports: a pcapng with an interface per port, whose connections check tells apart.
        cap = os.path.join(TMP, "modes.pcapng" if name == "two_ports" else "modes.pcap")
        s = session_json(cap, *base, *opts)
        for k in ("llr_replays", "llr_links_down", "credit_stalls", "failed",
                  "peers_unreachable", "unreachable"):
            check(k in s, f"{name}: key {k}: {s}")
        check(s["offered"] == s["delivered"] == 3000, f"{name}: {s}")
        check(s["duplicates"] == 0 and s["out_of_order"] == 0 and s["failed"] == 0,
              f"{name}: {s}")
        # The run ends with its work (CBFC's credit refresh once kept it to its give-up time).
        check(s["duration_ns"] < 1_000_000, f"{name}: {s}")
        if name == "cbfc":
            check(s["credit_stalls"] > 0, f"{name}: the senders waited for credits: {s}")
        if name == "corrupt":
            check(s["retransmissions"] > 0 and s["llr_replays"] == 0, f"{name}: {s}")
        if name == "llr_corrupt":
            check(s["llr_replays"] > 0 and s["retransmissions"] == 0, f"{name}: {s}")
        keying = ["--keying", "port-destination"] if name == "port_destination" else []
        ports = ["--port-by-interface"] if name == "two_ports" else []
        p = run("check", cap, "--json", *keying, *ports, expect=None)
        check(p.returncode == 0, f"{name}: scaleup check exit {p.returncode}: {p.stdout[-1500:]}")
        check(rule_counts(p.stdout, "psn.next")[0] > 100,
              f"{name}: the PSN rule judged few frames: {p.stdout[-1500:]}")
        if name == "port_destination":
            # One PSN space per {port, peer} across the VCs: checked per {source, VC} (the
            # default), each VC's PSNs skip the other's.
            p = run("check", cap, "--json", "--rules", "psn.next", expect=3)
            check(json.loads(p.stdout)["rules"][0]["violations"] > 0, p.stdout[-800:])
    for bad in (["--cbfc", "10"], ["--cbfc", "200", "--loss", "0.01"], ["--cbfc", "0"],
                ["--llr", "--reorder", "0.1"], ["--keying", "vc"]):
        run("gen", "session", "-o", cap, *bad, expect=2)


def rule_counts(report, rule):
    """(examined, not examinable, violations) of one rule in a `check --json` report."""
    r = next(r for r in json.loads(report)["rules"] if r["id"] == rule)
    return r["examined"], r["not_examinable"], r["violations"]


def case_session_planes():
    """gen session with 4 ports writes a pcapng whose interfaces are its planes (port0-port3);
    `check --port-by-interface` tells their connections apart and judges every transport rule,
    finds a misbehaving endpoint, and judges as much of the same frames split by tshark and
    joined again by mergecap. Without it a capture of 4 ports leaves those rules unjudged."""
    cap = os.path.join(TMP, "planes.pcapng")
    base = ["--xpus", "8", "--ports", "4", "--commands", "3000", "--seed", "4"]
    for opts in (["--loss", "0.01"], ["--unordered", "--loss", "0.01"],
                 ["--llr", "--cbfc", "200", "--corrupt", "0.02"],
                 ["--fail-link", "1:0:2000:9000", "--loss", "0.01"]):
        s = session_json(cap, *base, *opts)
        check(s["delivered"] == 3000 and s["duplicates"] == 0 and s["out_of_order"] == 0,
              f"{opts}: {s}")
        p = run("check", cap, "--json", "--port-by-interface")
        for rule in ("psn.next", "ack.unsent", "ack.monotonic"):
            examined, _, violations = rule_counts(p.stdout, rule)
            check(examined > 200 and violations == 0, f"{opts}: {rule}: {p.stdout[-1500:]}")
        p = run("check", cap, "--json", "--ports", "4")
        check(rule_counts(p.stdout, "psn.next")[0] == 0, f"{opts}: judged without the ports")
    for rule in ("ack.unsent", "gbn.resend"):
        session_json(cap, *base, "--loss", "0.02", "--misbehave", rule)
        p = run("check", cap, "--json", "--port-by-interface", expect=3)
        check(rule_counts(p.stdout, rule)[2] == 1, f"{rule}: {p.stdout[-1500:]}")

    # Wireshark's tools: tshark sees the four interfaces by name, splits the capture by them into
    # four pcaps, and mergecap joins those into a pcapng with an interface per file. Unordered:
    # each {source, destination, VC} on every plane, a PSN space on each, which taken as one
    # port break the rules by themselves.
    session_json(cap, *base, "--loss", "0.01", "--unordered")
    ours = run("check", cap, "--json", "--port-by-interface").stdout
    check(json.loads(run("check", cap, "--json", expect=3).stdout)["ports_may_mix"],
          "planes taken as one port")
    # dump's analysis and rules (-Y) key the same way.
    judged = ["-Y", "sue.check.gbn.resend || sue.check.ack.monotonic", "-T", "fields", "-e",
              "frame.number"]
    check(len(run("dump", cap, *judged).stdout.split()) > 100, "dump -Y: planes as one port")
    check(run("dump", cap, "--port-by-interface", *judged).stdout == "", "dump -Y: planes apart")
    if not (shutil.which("tshark") and shutil.which("mergecap")):
        fail("tshark or mergecap is not installed (Debian: tshark, wireshark-common)")
    names = [row[0] for row in tshark_fields(cap, "frame.interface_name")]
    counts = {n: names.count(n) for n in sorted(set(names))}
    check(sorted(counts) == ["port0", "port1", "port2", "port3"] and min(counts.values()) > 100,
          f"{counts}")
    parts = []
    for i in range(4):
        part = os.path.join(TMP, f"plane{i}.pcap")
        subprocess.run(["tshark", "-n", "-r", cap, "-Y", f"frame.interface_id == {i}", "-F",
                        "pcap", "-w", part], check=True, capture_output=True)
        parts.append(part)
    merged = os.path.join(TMP, "merged.pcapng")
    # -I none: mergecap would otherwise make one interface of the four alike.
    subprocess.run(["mergecap", "-I", "none", "-F", "pcapng", "-w", merged, *parts], check=True,
                   capture_output=True)
    theirs = run("check", merged, "--json", "--port-by-interface").stdout
    for rule in ("psn.next", "ack.unsent", "ack.monotonic", "gbn.resend"):
        check(rule_counts(theirs, rule) == rule_counts(ours, rule),
              f"{rule}: merged {rule_counts(theirs, rule)}, written {rule_counts(ours, rule)}")
    # stats keys its connections by the interface too.
    st = json.loads(run("stats", "--json", "--port-by-interface", merged).stdout)
    ports = sorted({c["port"] for c in st["connections"]})
    check(ports == [0, 1, 2, 3], f"stats keyed ports {ports}")


def case_gen_pcapng():
    """Every generator writes pcapng to a name ending in .pcapng: the same frames as its pcap
    (dump reads them alike, but for the interface a pcapng names), a file Wireshark's capinfos
    calls pcapng."""
    for gen in (["basic", "--encap", "all"], ["traffic"], ["tofu", "--frames", "50"],
                ["rdma", "--transfers", "5"], ["session", "--commands", "200", "--ports", "2"]):
        pcap, pcapng = (os.path.join(TMP, gen[0] + ext) for ext in (".pcap", ".pcapng"))
        run("gen", *gen, "-o", pcap)
        run("gen", *gen, "-o", pcapng)
        with open(pcapng, "rb") as f:
            check(f.read(4) == b"\x0a\x0d\x0d\x0a", f"{gen[0]}: not a pcapng section header")
        plain = jsonl(run("dump", "--json", pcap).stdout)
        ng = jsonl(run("dump", "--json", pcapng).stdout)
        check(len(ng) > 0 and all("frame.interface_id" in f for f in ng), f"{gen[0]}: {ng[:1]}")
        for f in ng:
            del f["frame.interface_id"]
        check(ng == plain, f"{gen[0]}: the pcapng's frames differ from the pcap's")
        if shutil.which("capinfos"):
            info = subprocess.run(["capinfos", "-t", pcapng], capture_output=True, text=True)
            check("pcapng" in info.stdout, f"{gen[0]}: {info.stdout}")


def case_session_unreachable():
    """A missing route (a link that never comes back, one port) is an answer, not a loop: the
    peer is declared unreachable, its commands fail, the resends are bounded and the run ends."""
    cap = os.path.join(TMP, "unreachable.pcap")
    # XPU 2's only link is down from the start: nothing reaches it, so every command for it
    # fails and every other is delivered; none is lost.
    s = session_json(cap, "--xpus", "4", "--ports", "1", "--fail-link", "2:0:0",
                     "--commands", "2000", "--seed", "5")
    check(s["peers_unreachable"] > 0 and s["failed"] > 0, f"{s}")
    check(s["delivered"] + s["failed"] == s["offered"] == 2000, f"{s}")
    check(s["duplicates"] == 0 and s["out_of_order"] == 0, f"{s}")
    # Each connection to the lost XPU goes back at most max_retries times (7) before the plane is
    # given up, and nothing is resent after that.
    check(s["retransmissions"] < 7 * 2000, f"{s}")
    check(s["duration_ns"] < 10_000_000, f"the run ended: {s}")
    # The failover requests that probed the lost XPU are their own layer, not NACKs.
    run("check", cap)
    p = run("dump", cap, "-Y", "sue.failover.type == 1", "-T", "fields", "-e", "sue.failover.xpuid")
    check(0 < len(p.stdout.split()) < 2000, p.stdout[-500:])
    # A link lost after the run began: what was delivered and then not acknowledged also fails
    # (the XPU cannot know it landed); still none is lost.
    s = session_json(cap, "--xpus", "4", "--ports", "1", "--fail-link", "2:0:200",
                     "--commands", "2000", "--seed", "5")
    check(s["failed"] > 0 and s["delivered"] + s["failed"] >= 2000, f"{s}")
    check(s["delivered"] <= 2000 and s["duplicates"] == 0, f"{s}")
    run("check", cap)


def case_tofu():
    """gen tofu: adaptive slicing loses nothing; dump shows slices and reassembled frames."""
    cap = os.path.join(TMP, "t.pcap")
    s = json.loads(run("gen", "tofu", "-o", cap, "--error-rate", "2e-5", "--frames", "400",
                       "--seed", "2", "--json").stdout)
    for k in ("frames", "delivered", "lost", "split_frames", "duplicate_frames", "mode_switches"):
        check(k in s, f"key {k}: {s}")
    check(s["frames"] == s["delivered"] == 400 and s["lost"] == 0, f"{s}")
    check(s["split_frames"] > 0 and s["duplicate_frames"] > 0 and s["mode_switches"] > 0, f"{s}")
    d = jsonl(run("dump", "--json", cap).stdout)
    slices = [f for f in d if f["encap"] == "tofu"]
    frames = [f for f in d if f["encap"] == "tofu.frame"]
    check(len(slices) == s["slices"], f"{len(slices)} slices dumped, {s['slices']} written")
    check(all(f["tofu.slice.lane"] in (0, 1) for f in slices), "lanes")
    bad = [f for f in slices if f["tofu.slice.fcs.status"] != "good"]
    check(len(bad) == s["failed_slices"] and bad, f"{len(bad)} bad slices, {s['failed_slices']}")
    check(all(any(e["code"] == "bad_checksum" for e in f["errors"]) for f in bad), "FCS errors")
    good = [f for f in frames if not f["errors"]]
    check(len(good) >= 400, f"{len(good)} frames reassembled")
    check(all(f["tofu.tlp.len"] == 32 * (f["tofu.rh.len"] + 1) for f in good), "TLP = 32(LEN+1)")
    failed = [f for f in frames if f["errors"]]
    check(all(f["errors"][0]["index"] in (1, 2) for f in failed), "failed lane named (lane + 1)")
    for bad_args in (["--mode", "triple"], ["--error-rate", "2"], ["--frames", "0"]):
        run("gen", "tofu", "-o", cap, *bad_args, expect=2)


def case_rdma():
    """gen rdma: every transfer completes exactly once under loss; every packet dissects."""
    cap = os.path.join(TMP, "r.pcap")
    s = json.loads(run("gen", "rdma", "-o", cap, "--transfers", "24", "--loss", "0.005",
                       "--seed", "5", "--json").stdout)
    check(s["transfers"] == s["completed_exactly_once"] == 24, f"{s}")
    check(s["reissues"] > 0 and s["data_lost"] > 0, f"{s}")
    d = jsonl(run("dump", "--json", cap).stdout)
    check(len(d) == s["data_packets"] + s["acks"] + s["nacks"] + s["control_packets"],
          f"{len(d)} packets dumped, {s}")
    check(all(f["encap"] == "rdma" and f["errors"] == [] for f in d), "clean packets")
    check(all(f["rdma.ftr.crc.status"] == "good" for f in d), "CRCs good")
    types = {v for f in d for k, v in f.items() if k.startswith("rdma.") and k.endswith(".type")}
    check({0, 2, 3, 4} <= types, f"data, ACK, NACK and control packets: {types}")
    for bad in (["--transfers", "0"], ["--transfers", "65"], ["--loss", "1"]):
        run("gen", "rdma", "-o", cap, *bad, expect=2)


def case_deterministic():
    a, b = os.path.join(TMP, "a.pcap"), os.path.join(TMP, "b.pcap")
    run("gen", "basic", "-o", a, "--seed", "5")
    run("gen", "basic", "-o", b, "--seed", "5")
    check(open(a, "rb").read() == open(b, "rb").read(), "same seed, same file")
    run("gen", "basic", "-o", b, "--seed", "6")
    check(open(a, "rb").read() != open(b, "rb").read(), "another seed, another file")


def case_scapy_rh_only():
    """Frames built by scapy: RH-only payloads on a port named SUE's (--udp-port 4793) have no
    R-CRC ("missing"); without the port named they are UDP (no R-CRC to tell SUE by)."""
    sys.path.insert(0, "/usr/lib/python3/dist-packages")
    try:
        from scapy.all import Ether, IP, IPv6, UDP, Raw, Dot1Q, wrpcap  # noqa: F401
    except ImportError:
        fail("scapy is not installed (Debian: python3-scapy)")
    frames, want = [], []
    for i, (op, xpuid, npsn, vc, part, apsn) in enumerate(
            [(0, 1, 100, 0, 0, 99), (1, 1023, 0xFFFF, 3, 1023, 0x1234), (2, 512, 7, 2, 5, 0)]):
        rh = rh_bytes(op=op, xpuid=xpuid, npsn=npsn, vc=vc, partition=part, apsn=apsn)
        ip = IP(src="192.0.2.1", dst="192.0.2.2") if i != 1 else IPv6(src="2001:db8::1",
                                                                       dst="2001:db8::2")
        frames.append(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / ip /
                      UDP(sport=50000, dport=4793) / Raw(rh))
        want.append(dict(op=op, xpuid=xpuid, npsn=npsn, vc=vc, partition=part, apsn=apsn))
    # One full PDU with a good R-CRC, one with a bad one, one on another port (heuristic).
    pdu = rh_bytes(op=0, xpuid=9, npsn=10, apsn=8) + b"\x01\x02\x03\x04\x05"
    frames.append(Ether() / IP() / UDP(sport=4793, dport=4793) / Raw(pdu + rcrc(pdu)))
    frames.append(Ether() / IP() / UDP(sport=4793, dport=4793) /
                  Raw(pdu + struct.pack(">I", zlib.crc32(pdu) ^ 1)))
    frames.append(Ether() / IP() / UDP(sport=1234, dport=5678) / Raw(pdu + rcrc(pdu)))
    frames.append(Ether() / IP() / UDP(sport=1235, dport=5678) / Raw(b"not a sue pdu at all"))
    # The flow the heuristic found SUE on (1234 <-> 5678), the other way round: SUE whatever it
    # holds (a damaged PDU: bad R-CRC).
    frames.append(Ether() / IP() / UDP(sport=5678, dport=1234) /
                  Raw(pdu + struct.pack(">I", zlib.crc32(pdu) ^ 1)))
    cap = os.path.join(TMP, "scapy.pcap")
    wrpcap(cap, frames)
    plain = jsonl(run("dump", "--json", cap).stdout)
    # 4793 is no port of SUE's: the RH-only frames are UDP; the good PDU is found by the
    # heuristic, and the damaged one after it is SUE by its flow (the same ports and hosts).
    check([f["encap"] for f in plain[:5]] == ["ipv4/udp", "ipv6/udp", "ipv4/udp", "udp4",
                                              "udp4"], f"no port is SUE's: {plain}")
    check(plain[7]["encap"] == "udp4" and plain[7]["sue.rcrc.status"] == "bad", "a bound flow")
    d = jsonl(run("dump", "--json", "--udp-port", "4793", cap).stdout)
    check(len(d) == 8, f"8 frames, got {len(d)}")
    for i, w in enumerate(want):
        f = d[i]
        check(f["encap"] == ("udp6" if i == 1 else "udp4"), f"frame {i+1} encap {f['encap']}")
        for k, v in w.items():
            check(f[f"sue.rh.{k}"] == v, f"frame {i+1}: sue.rh.{k} = {f.get('sue.rh.' + k)}, want {v}")
        check(f["sue.rh.ver"] == 0, "ver")
        check(f["sue.rcrc.status"] == "missing", f"frame {i+1}: {f['sue.rcrc.status']}")
        check(f["errors"] == [], f"frame {i+1}: errors {f['errors']}")
        check(f["udp.dstport"] == 4793 and f["udp.srcport"] == 50000, "ports")
    check(d[0]["ip.src"] == "192.0.2.1" and d[1]["ipv6.src"] == "2001:db8::1", "addresses")
    check(d[3]["sue.rcrc.status"] == "good" and d[3]["sue.payload.len"] == 5, "good R-CRC")
    check(d[3]["sue.rcrc"] == zlib.crc32(pdu), "R-CRC value")
    check(d[4]["sue.rcrc.status"] == "bad", "bad R-CRC")
    check(any(e["code"] == "bad_checksum" and e["layer"] == "sue.rcrc" for e in d[4]["errors"]),
          f"bad R-CRC reported: {d[4]['errors']}")
    check(d[5]["encap"] == "udp4" and d[5]["sue.rh.xpuid"] == 9, "heuristic finds SUE")
    check(d[6]["encap"] == "ipv4/udp" and "sue.rh.ver" not in d[6], "not SUE: still listed")
    check(d[7]["encap"] == "udp4" and d[7]["sue.rcrc.status"] == "bad", "the bound flow")
    # The payload 01 02 03 04 05 is no command of the default profile: opaque bytes, with a
    # warning naming the command and where the parse stopped; with --profile none it reads clean.
    check([(e["layer"], e["severity"], e.get("index"), e["offset"]) for e in d[3]["errors"]] ==
          [("sue.opaque", "warning", 1, 50)],
          f"unparsed commands reported with their index: {d[3]['errors']}")
    d = jsonl(run("dump", "--json", "--profile", "none", cap).stdout)
    check(d[3]["errors"] == [], f"--profile none: {d[3]['errors']}")
    nh = jsonl(run("dump", "--json", "--no-heuristics", cap).stdout)
    check(nh[5]["encap"] == "ipv4/udp", "--no-heuristics")
    check(nh[7]["encap"] == "ipv4/udp", "--no-heuristics binds no flow")
    port = jsonl(run("dump", "--json", "--no-heuristics", "--udp-port", "5678", cap).stdout)
    check(port[5]["encap"] == "udp4" and port[6]["encap"] == "udp4", "--udp-port")
    check(port[6]["sue.rcrc.status"] == "bad", "a non-SUE payload forced onto the port")


def case_text2pcap():
    """text2pcap builds Ethernet, IPv4 and UDP around a hex RH written here by hand."""
    if not shutil.which("text2pcap"):
        fail("text2pcap is not installed (Debian: wireshark-common)")
    # RH: ver 0, op NACK, xpuid 0x2A5, npsn 0xBEEF; vc 2, partition 0x155, apsn 0xBEEE.
    # 00 01 00 10 1010 0101 = 0x12 0xA5 | BE EF | 10 0000 01 0101 0101 = 0x81 0x55 | BE EE
    hexdump = os.path.join(TMP, "rh.txt")
    with open(hexdump, "w") as f:
        f.write("0000  12 a5 be ef 81 55 be ee\n")
    cap = os.path.join(TMP, "t2p.pcap")
    subprocess.run(["text2pcap", "-q", "-F", "pcap", "-4", "10.1.2.3,10.1.2.4", "-u", "4793,4793",
                    hexdump, cap], check=True, capture_output=True)
    (f,) = jsonl(run("dump", "--json", "--udp-port", "4793", cap).stdout)
    want = {"sue.rh.ver": 0, "sue.rh.op": 1, "sue.rh.xpuid": 0x2A5, "sue.rh.npsn": 0xBEEF,
            "sue.rh.vc": 2, "sue.rh.partition": 0x155, "sue.rh.apsn": 0xBEEE,
            "sue.rcrc.status": "missing", "ip.src": "10.1.2.3", "udp.dstport": 4793}
    for k, v in want.items():
        check(f.get(k) == v, f"{k} = {f.get(k)!r}, want {v!r}")
    check(f["encap"] == "udp4" and f["errors"] == [], f"{f['encap']} {f['errors']}")
    # pcapng from text2pcap's default output format reads the same.
    capng = os.path.join(TMP, "t2p.pcapng")
    subprocess.run(["text2pcap", "-q", "-4", "10.1.2.3,10.1.2.4", "-u", "4793,4793", hexdump,
                    capng], check=True, capture_output=True)
    (g,) = jsonl(run("dump", "--json", "--udp-port", "4793", capng).stdout)
    check(dissection([g]) == dissection([f]), "pcapng and pcap dissect alike")
    check(g["frame.interface_id"] == 0 and "frame.interface_id" not in f, "pcapng names it")


def case_tshark_agrees():
    """tshark checks the IPv4, UDP and 802.1Q headers that gen writes."""
    if not shutil.which("tshark"):
        fail("tshark is not installed")
    cap = os.path.join(TMP, "ts.pcap")
    run("gen", "basic", "-o", cap, "--encap", "udp4,udp6,afh1-vlan", "--count", "4")
    ours = jsonl(run("dump", "--json", "--check-checksums", cap).stdout)
    names = {"0": "bad", "1": "good", "2": "unverified", "3": "not_present"}
    fields = ["frame.number", "ip.src", "ip.dst", "ip.len", "ip.checksum.status", "udp.length",
              "udp.checksum.status", "ipv6.src", "ipv6.plen", "vlan.id", "vlan.priority",
              "vlan.etype"]
    cmd = ["tshark", "-n", "-r", cap, "-o", "ip.check_checksum:TRUE",
           "-o", "udp.check_checksum:TRUE", "-T", "fields", "-E", "separator=/t"]
    for fl in fields:
        cmd += ["-e", fl]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    check(len(rows) == len(ours) == 12, f"{len(rows)} tshark rows, {len(ours)} ours")
    for r, o in zip(rows, ours):
        t = dict(zip(fields, r))
        n = o["frame"]
        if o["encap"] in ("udp4", "udp6"):  # checked as tshark checks them, same verdict
            for key in ("ip.checksum.status", "udp.checksum.status"):
                check(o.get(key) == names.get(t[key]), f"frame {n}: {key} {o.get(key)}, {t}")
        if o["encap"] == "udp4":
            check(t["ip.checksum.status"] == "1", f"frame {n}: tshark IPv4 checksum {t}")
            check(t["udp.checksum.status"] == "1", f"frame {n}: tshark UDP checksum {t}")
            check(t["ip.src"] == o["ip.src"] and t["ip.dst"] == o["ip.dst"], f"frame {n} ip")
            check(int(t["ip.len"]) == o["ip.len"] and int(t["udp.length"]) == o["udp.length"],
                  f"frame {n} lengths")
        elif o["encap"] == "udp6":
            check(t["udp.checksum.status"] == "1", f"frame {n}: tshark UDP/IPv6 checksum {t}")
            check(t["ipv6.src"] == o["ipv6.src"] and int(t["ipv6.plen"]) == o["ipv6.plen"],
                  f"frame {n} ipv6")
        else:
            check(int(t["vlan.id"]) == o["vlan.id"] and int(t["vlan.priority"]) ==
                  o["vlan.priority"], f"frame {n} vlan {t}")
            check(int(t["vlan.etype"], 16) == o["vlan.etype"] == 0x88B5, f"frame {n} vlan.etype {t}")


def case_exit_codes():
    p = run("dump", os.path.join(TMP, "does-not-exist.pcap"), expect=1)
    check("No such file" in p.stderr and "does-not-exist.pcap" in p.stderr, p.stderr)
    txt = os.path.join(TMP, "notes.txt")
    with open(txt, "w") as f:
        f.write("this is not a capture\n" * 10)
    p = run("dump", txt, expect=1)
    check("not a pcap or pcapng" in p.stderr, p.stderr)
    empty = os.path.join(TMP, "empty.pcap")
    open(empty, "wb").close()
    run("dump", empty, expect=1)
    # A capture cut in the middle of its third frame: two frames dissected, then the message.
    cap = os.path.join(TMP, "cut.pcap")
    run("gen", "basic", "-o", cap, "--encap", "udp4", "--count", "3")
    data = open(cap, "rb").read()
    first = 24 + 16 + struct.unpack("<I", data[24 + 8:24 + 12])[0]
    second = first + 16 + struct.unpack("<I", data[first + 8:first + 12])[0]
    with open(cap, "wb") as f:
        f.write(data[:second + 16 + 20])
    p = run("dump", "--json", cap, expect=1)
    check(len(jsonl(p.stdout)) == 2, f"frames before the damage: {p.stdout}")
    check("packet 3" in p.stderr and "truncated" in p.stderr, p.stderr)
    for args in ([], ["frobnicate"], ["gen"], ["gen", "basic"], ["gen", "weird", "-o", cap],
                 ["gen", "basic", "-o", cap, "--encap", "udp5"],
                 ["gen", "basic", "-o", cap, "--count", "0"],
                 ["gen", "basic", "-o", cap, "--seed", "x"], ["dump"],
                 ["dump", cap, "--udp-port", "0"], ["dump", cap, "--udp-port", "70000"],
                 ["dump", cap, "--fcs", "maybe"], ["dump", cap, "--bogus"], ["dump", cap, cap]):
        p = run(*args, expect=2)
        check(p.stderr.startswith("scaleup: ") and "usage:" in p.stderr, f"{args}: {p.stderr}")
    run("gen", "basic", "-o", os.path.join(TMP, "no", "such", "dir.pcap"), expect=1)
    check("usage:" in run("--help").stdout, "help")


def case_truncated_frames():
    """A frame cut by the snapshot length is read against its length on the wire: what was
    captured is decoded, the rest marked not captured with one note, and no error."""
    sys.path.insert(0, "/usr/lib/python3/dist-packages")
    from scapy.all import Ether, IP, UDP, Raw, wrpcap
    barriers = b"".join(bytes([0x12, 0, 0, i]) for i in range(10))  # 10 commands, 40 bytes
    pdu = rh_bytes(op=0, xpuid=3, npsn=4, apsn=2) + barriers
    frame = Ether() / IP() / UDP(sport=4793, dport=4793) / Raw(pdu + rcrc(pdu))
    cap = os.path.join(TMP, "snap.pcap")
    wrpcap(cap, [frame])  # whole frame; cut below to a 56-byte snapshot
    data = bytearray(open(cap, "rb").read())
    incl = struct.unpack("<I", data[24 + 8:24 + 12])[0]
    struct.pack_into("<I", data, 24 + 8, 56)  # caplen 56, len stays the frame length
    data = data[:24 + 16 + 56]
    open(cap, "wb").write(data)
    check(incl == 14 + 20 + 8 + len(pdu) + 4, "the frame really was cut")
    # A cut PDU has no R-CRC to be found by: the port is named.
    (f,) = jsonl(run("dump", "--json", "--udp-port", "4793", cap).stdout)
    check(f["sue.rh.xpuid"] == 3 and f["sue.rh.npsn"] == 4, "the RH that was captured")
    check(f["frame.len"] == incl and f["frame.cap_len"] == 56,
          f"lengths {f['frame.len']}, {f.get('frame.cap_len')}")
    check(f["sue.rcrc.status"] == "not_captured", f["sue.rcrc.status"])
    check(f["sue.payload.len"] == 40, "the payload's length on the wire")
    # One whole command captured (50-54), the next cut by the snapshot: no warning for it.
    check(len(f["sue.cmds"]) == 1, f"{f['sue.cmds']}")
    check([(e["layer"], e["code"], e["severity"], e["needed"], e["available"])
           for e in f["errors"]] == [("frame", "not_captured", "note", incl, 56)],
          f"{f['errors']}")
    p = run("dump", "-v", "--udp-port", "4793", cap)
    check("note: frame" in p.stdout and "snapshot length" in p.stdout, p.stdout)
    check("error:" not in p.stdout, p.stdout)
    s = json.loads(run("stats", "--json", "--udp-port", "4793", cap).stdout)
    check(s["analysed"] == 1 and s["left_out"] == 0, f"{s}")


def stats_figures(s):
    """What `stats --json` says of a capture, without the file's name."""
    return {k: v for k, v in s.items() if k != "file"}


def case_snapshot_minimum_frames():
    """Layer 2 frames of the minimum size cut anywhere by the snapshot length (editcap -s): their
    PDU ends at an R-CRC found before the padding, past the capture, so what the commands' walk
    meets in the bytes kept is no fault of the frame; and an AFH Gen 2 frame cut before the
    bytes that tell a PDU from SUE Lite is neither. check finds them conformant, dump warns of
    nothing: the capture's limit is a note."""
    need_wireshark_tools()
    # The bytes that name the encapsulation: Ethernet's and the tag's Ethertypes, AFH Gen 2's
    # header (the normal one ends in its Ethertype).
    named_by = {"afh1": 14, "afh1-vlan": 18, "afh2": 14, "afh2c": 6}
    for encap in ("afh1", "afh1-vlan", "afh2", "afh2c"):
        cap = os.path.join(TMP, encap + ".pcap")
        run("gen", "session", "--encap", encap, "--commands", "40", "-o", cap)
        run("check", cap)
        frames = jsonl(run("dump", "--json", cap).stdout)
        small = [f["frame"] for f in frames if f["frame.len"] <= 60]
        check(len(small) >= 5, f"{encap}: {len(small)} minimum-size frames")
        # Inside the AFH Gen 2 header and its Ethertype, the VLAN tag, the RH, and the payload
        # of a minimum-size frame up to its last bytes.
        for snap in (6, 7, 10, 14, 17, 22, 27, 34, 45, 57):
            cut = os.path.join(TMP, f"{encap}-{snap}.pcap")
            subprocess.run(["editcap", "-s", str(snap), cap, cut], check=True, capture_output=True)
            p = subprocess.run([SCALEUP, "check", cut], capture_output=True, text=True)
            check(p.returncode == 0, f"{encap} -s {snap}: check exit {p.returncode}\n{p.stdout}")
            check(" 0 SUE Lite frames" in p.stdout, f"{encap} -s {snap}: {p.stdout}")
            for f in jsonl(run("dump", "--json", cut).stdout):
                worse = [e for e in f["errors"] if e["severity"] != "note"]
                check(not worse, f"{encap} -s {snap} frame {f['frame']}: {worse}")
                check(snap < named_by[encap] or f["encap"] == encap,
                      f"{encap} -s {snap} frame {f['frame']}: {f['encap']}")


def case_snapshot_stats():
    """The same lossy session capture cut to 64, 80 and 128 bytes a record (editcap -s) gives
    the same `stats --json` figures as the whole file: every PDU whose RH was captured counts,
    with its length on the wire. (No --corrupt: a cut capture cannot tell a corrupted PDU.)"""
    need_wireshark_tools()
    cap = os.path.join(TMP, "session.pcap")
    run("gen", "session", "-o", cap, "--loss", "0.03", "--duplicate", "0.01", "--reorder", "0.01",
        "--commands", "3000", "--seed", "11")
    # A cut PDU has no R-CRC for the heuristic to find SUE by: the port gen writes is named.
    port = ("--udp-port", "61793")
    whole = json.loads(run("stats", "--json", *port, cap).stdout)
    check(whole["left_out"] == 0 and whole["analysed"] > 2000, f"{stats_figures(whole)}")
    for key in ("retransmissions", "nacks", "duplicates"):
        check(whole[key] > 0, f"the session shows {key}: {whole[key]}")
    # The harness captures what the switch receives: every PSN sent, so no gap in the whole
    # file; a cut capture used to show gaps and missing PSNs for PDUs that were on the wire.
    check(whole["gaps"] == whole["missing"] == 0, f"{stats_figures(whole)}")
    check(whole["ack_rtt_ns"]["count"] > 100, f"{whole['ack_rtt_ns']}")
    for snap in (64, 80, 128):
        cut = os.path.join(TMP, f"s{snap}.pcap")
        subprocess.run(["editcap", "-F", "nsecpcap", "-s", str(snap), cap, cut], check=True,
                       capture_output=True)
        sizes = [len(r[3]) for r in read_pcap(cut)[4]]
        check(max(sizes) == snap, f"editcap -s {snap}: records of {max(sizes)} bytes")
        got = json.loads(run("stats", "--json", *port, cut).stdout)
        check(stats_figures(got) == stats_figures(whole),
              f"-s {snap}: {stats_figures(got)}\nwhole: {stats_figures(whole)}")
        frames = jsonl(run("dump", "--json", *port, cut).stdout)
        bad = [f for f in frames if any(e["severity"] == "error" for e in f["errors"])]
        check(not bad, f"-s {snap}: errors {bad[:2]}")
        # Without the port: the whole datagrams (ACKs, short PDUs) show the flows SUE, and the
        # frames before are held until they do, so the figures are still the same: from a file,
        # through a pipe (read once), and with nothing held (--hold 0), when a file is read a
        # second time with what the first reading learned.
        plain = json.loads(run("stats", "--json", cut).stdout)
        check(stats_figures(plain) == stats_figures(whole),
              f"-s {snap}, no port named: {stats_figures(plain)}")
        with open(cut, "rb") as f:
            piped = subprocess.run([SCALEUP, "stats", "--json", "-"], stdin=f,
                                   capture_output=True, text=True, check=True)
        check(stats_figures(json.loads(piped.stdout)) == stats_figures(whole),
              f"-s {snap}, through a pipe: {stats_figures(json.loads(piped.stdout))}")
        for threads in ("1", "2"):
            twice = json.loads(run("stats", "--json", "--hold", "0", "--threads", threads,
                                   cut).stdout)
            check(stats_figures(twice) == stats_figures(whole),
                  f"-s {snap}, --hold 0 --threads {threads}: {stats_figures(twice)}")
        # Nothing held and read once (a pipe): cut to 64 bytes, the first datagrams of the
        # capture are cut and stay UDP until the first whole one of their flow or port, so
        # fewer PDUs are analysed: what holding is for. (Cut to 128, the first one is whole.)
        with open(cut, "rb") as f:
            once = subprocess.run([SCALEUP, "stats", "--json", "--hold", "0", "-"], stdin=f,
                                  capture_output=True, text=True, check=True)
        once = json.loads(once.stdout)
        fewer = once["analysed"] < whole["analysed"] if snap == 64 else True
        check(0 < once["analysed"] <= whole["analysed"] and fewer,
              f"-s {snap}, --hold 0, a pipe: {once['analysed']} of {whole['analysed']} analysed")
        # check holds the same frames: the same report from the file, a pipe and a second
        # reading.
        reports = []
        for args, stdin in ((["check", "--json", cut], None), (["check", "--json", "-"], cut),
                            (["check", "--json", "--hold", "0", cut], None)):
            with open(stdin or os.devnull, "rb") as f:
                p = subprocess.run([SCALEUP, *args], stdin=f, capture_output=True, text=True)
            check(p.returncode == 0, f"-s {snap}: {' '.join(args)}: exit {p.returncode} {p.stderr}")
            r = json.loads(p.stdout)
            r.pop("file", None)
            reports.append(r)
        check(reports[0] == reports[1] == reports[2], f"-s {snap}: check reports differ")
        # dump reads once: a cut datagram before its flow was seen SUE stays UDP, with a note
        # naming why, never silently.
        for f in jsonl(run("dump", "--json", cut).stdout):
            if f["encap"] in ("udp4", "udp6"):
                continue
            notes = [e["what"] for e in f["errors"] if e["layer"] == "udp"]
            check(len(notes) == 1 and "not confirmed" in notes[0], f"-s {snap}: {f}")


def offload_capture(path, count, check_sum=0x1234):
    """`count` PDUs from XPU 1 to 10.0.0.2 on UDP 4793 with the UDP checksum a sending host's
    capture holds (left to the NIC): not the datagram's."""
    sys.path.insert(0, "/usr/lib/python3/dist-packages")
    from scapy.all import Ether, IP, UDP, Raw, wrpcap
    frames = []
    for psn in range(count):
        pdu = rh_bytes(op=2, xpuid=1, npsn=psn) + bytes([0x12, 0, 0, psn & 0xFF])  # a barrier
        frames.append(Ether() / IP(src="10.0.0.1", dst="10.0.0.2") /
                      UDP(sport=4793, dport=4793, chksum=check_sum) / Raw(pdu + rcrc(pdu)))
    wrpcap(path, frames)


def case_offload_checksums():
    """IP and UDP checksums are checked only when asked, and then a mismatch is a warning:
    every PDU of a capture with offloaded checksums is analysed."""
    cap = os.path.join(TMP, "offload.pcap")
    offload_capture(cap, 12)
    frames = jsonl(run("dump", "--json", "--udp-port", "4793", cap).stdout)
    check(len(frames) == 12, f"{len(frames)} frames")
    for f in frames:
        check(f["errors"] == [], f"frame {f['frame']}: {f['errors']}")
        check(f["udp.checksum"] == 0x1234 and f["udp.checksum.status"] == "unverified", f"{f}")
        check(f["ip.checksum.status"] == "unverified", f"{f}")
        check(f["sue.rcrc.status"] == "good", f"{f}")
    s = json.loads(run("stats", "--json", cap).stdout)
    check(s["analysed"] == 12 and s["left_out"] == 0 and s["pdus"] == 12, f"{s}")
    frames = jsonl(run("dump", "--json", "--check-checksums", cap).stdout)
    for f in frames:
        check([(e["layer"], e["code"], e["severity"]) for e in f["errors"]] ==
              [("udp", "bad_checksum", "warning")], f"frame {f['frame']}: {f['errors']}")
        check(f["udp.checksum.status"] == "bad" and f["ip.checksum.status"] == "good", f"{f}")
    s = json.loads(run("stats", "--json", "--check-checksums", cap).stdout)
    check(s["analysed"] == 12 and s["left_out"] == 0, f"{s}")
    # A good checksum checked: good.
    good = os.path.join(TMP, "good.pcap")
    offload_capture(good, 2, check_sum=None)
    for f in jsonl(run("dump", "--json", "--check-checksums", good).stdout):
        check(f["errors"] == [] and f["udp.checksum.status"] == "good", f"{f}")


def case_opaque_payloads():
    """A payload the command profile cannot parse is opaque bytes with a warning, and the PDU
    stays in the analysis; --profile none leaves it opaque without one."""
    sys.path.insert(0, "/usr/lib/python3/dist-packages")
    from scapy.all import Ether, IP, UDP, Raw, wrpcap
    frames = []
    for psn in range(20):
        pdu = rh_bytes(op=2, xpuid=4, npsn=psn) + bytes([0xF3, 0x5A, psn, 0xC4, 0, 1, 2, 3])
        frames.append(Ether() / IP(src="10.0.0.4", dst="10.0.0.5") /
                      UDP(sport=4793, dport=4793) / Raw(pdu + rcrc(pdu)))
    cap = os.path.join(TMP, "opaque.pcap")
    wrpcap(cap, frames)
    for f in jsonl(run("dump", "--json", "--udp-port", "4793", cap).stdout):
        errs = f["errors"]
        check(len(errs) == 1 and errs[0]["layer"] == "sue.opaque" and
              errs[0]["severity"] == "warning" and errs[0]["offset"] == 50 and
              errs[0]["what"] == "command type not in the profile", f"{errs}")
        check(f["sue.payload.len"] == 8 and f["sue.rcrc.status"] == "good", f"{f}")
    p = run("dump", "-v", "--udp-port", "4793", cap)
    check("Opaque bytes" in p.stdout and "warning: sue.opaque" in p.stdout, p.stdout[:3000])
    s = json.loads(run("stats", "--json", cap).stdout)
    check(s["analysed"] == 20 and s["left_out"] == 0 and s["pdus"] == 20, f"{s}")
    check(s["gaps"] == 0 and s["retransmissions"] == 0, f"{s}")
    for f in jsonl(run("dump", "--json", "--profile", "none", cap).stdout):
        check(f["errors"] == [], f"{f['errors']}")
    s = json.loads(run("stats", "--json", "--profile", "none", cap).stdout)
    check(s["analysed"] == 20, f"{s}")


# ---- capture files as tshark reads them -------------------------------------------------------

def read_pcap(path):
    """(byte order, nanoseconds?, snaplen, link, [(sec, frac, orig, bytes)]) of a pcap file,
    parsed here from draft-ietf-opsawg-pcap independently of the tool."""
    data = open(path, "rb").read()
    for order in "<>":
        magic = struct.unpack(order + "I", data[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            break
    else:
        fail(f"{path}: not a pcap")
    _, _, _, _, _, snaplen, link = struct.unpack(order + "IHHiIII", data[:24])
    records, at = [], 24
    while at + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(order + "IIII", data[at:at + 16])
        records.append((sec, frac, orig, data[at + 16:at + 16 + incl]))
        at += 16 + incl
    return order, magic == 0xA1B23C4D, snaplen, link, records


def write_pcap(path, order, nsec, snaplen, link, records):
    with open(path, "wb") as f:
        f.write(struct.pack(order + "IHHiIII", 0xA1B23C4D if nsec else 0xA1B2C3D4, 2, 4, 0, 0,
                            snaplen, link))
        for sec, frac, orig, data in records:
            f.write(struct.pack(order + "IIII", sec, frac, len(data), orig) + data)


def tshark_fields(path, *fields):
    cmd = ["tshark", "-n", "-r", path, "-T", "fields"]
    for fl in fields:
        cmd += ["-e", fl]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def epoch_ns(text):
    """tshark's frame.time_epoch (seconds and nine digits) in nanoseconds."""
    sec, frac = text.split(".")
    return int(sec) * 10**9 + int(frac.ljust(9, "0"))


def gzip_copy(src, dst):
    subprocess.run(["gzip", "-k", "-f", src], check=True)
    shutil.move(src + ".gz", dst)


def need_wireshark_tools():
    for tool in ("tshark", "editcap", "mergecap", "text2pcap", "gzip"):
        if not shutil.which(tool):
            fail(f"{tool} is not installed (Debian: tshark, wireshark-common, gzip)")


def case_capture_formats():
    """One capture as nanosecond and microsecond pcap in both byte orders, as pcapng (editcap)
    and gzip-compressed (gzip -k, with and without the .gz name): dump shows the same frames
    from each, as many as tshark reads; each file holds the times tshark reads."""
    need_wireshark_tools()
    cap = os.path.join(TMP, "orig.pcap")
    run("gen", "basic", "-o", cap, "--count", "3", "--seed", "2")
    order, nsec, snaplen, link, records = read_pcap(cap)
    check(order == "<" and nsec, "gen writes nanosecond pcap (magic a1b23c4d)")
    # Times that need nanoseconds: 1 ms apart plus i ns.
    records = [(sec, frac + i, orig, data) for i, (sec, frac, orig, data) in enumerate(records)]
    want_ns = [sec * 10**9 + frac for sec, frac, _, _ in records]
    want_us = [sec * 10**9 + frac // 1000 * 1000 for sec, frac, _, _ in records]
    files = {}
    for name, o, ns in (("ns-le", "<", True), ("ns-be", ">", True), ("us-le", "<", False),
                        ("us-be", ">", False)):
        path = os.path.join(TMP, name + ".pcap")
        recs = records if ns else [(s, f // 1000, n, d) for s, f, n, d in records]
        write_pcap(path, o, ns, snaplen, link, recs)
        files[name] = (path, want_ns if ns else want_us)
    ng = os.path.join(TMP, "ns.pcapng")
    subprocess.run(["editcap", "-F", "pcapng", files["ns-be"][0], ng], check=True,
                   capture_output=True)
    files["pcapng"] = (ng, want_ns)
    gz, gzng = os.path.join(TMP, "ns.pcap.gz"), os.path.join(TMP, "ns.pcapng.gz")
    gzip_copy(files["ns-le"][0], gz)
    gzip_copy(ng, gzng)
    files["gzip pcap"] = (gz, want_ns)
    files["gzip pcapng"] = (gzng, want_ns)
    unnamed = os.path.join(TMP, "compressed.pcap")  # gzip inside, told by the content
    shutil.copy(gz, unnamed)
    files["gzip, no .gz"] = (unnamed, want_ns)

    ref = jsonl(run("dump", "--json", cap).stdout)
    ref_text = dissection_text(run("dump", "-v", cap).stdout)
    check(len(ref) == len(records) == 27, f"{len(ref)} frames")
    for name, (path, want) in files.items():
        got = jsonl(run("dump", "--json", path).stdout)
        check(dissection(got) == dissection(ref), f"{name}: dump --json differs from the original's")
        check([epoch_ns(f["frame.time_epoch"]) for f in got] == want,
              f"{name}: dump's times differ from those written")
        check(all(("frame.interface_id" in f) == ("pcapng" in name) for f in got),
              f"{name}: frame.interface_id for pcapng only")
        check(dissection_text(run("dump", "-v", path).stdout) == ref_text,
              f"{name}: dump -v differs")
        times = [epoch_ns(r[0]) for r in tshark_fields(path, "frame.time_epoch")]
        check(len(times) == len(records), f"{name}: tshark reads {len(times)} frames")
        check(times == want, f"{name}: tshark's times {times[:3]}..., written {want[:3]}...")
        s = json.loads(run("stats", "--json", path).stdout)
        check(s["frames"] == len(records), f"{name}: stats saw {s['frames']} frames")
        check(s["time_precision"] == (6 if name.startswith("us") else 9),
              f"{name}: time precision {s['time_precision']}")


def case_mixed_link_types():
    """A pcapng whose interfaces differ in link type (mergecap of an Ethernet capture and a
    Linux cooked one, LINKTYPE 113): every frame is read, each on its own link type, the cooked
    ones too (a SUE PDU over UDP, and an ARP frame that is not SUE), and the file does not fail."""
    need_wireshark_tools()
    eth = os.path.join(TMP, "eth.pcap")
    run("gen", "basic", "-o", eth, "--encap", "udp4,afh1", "--count", "3", "--seed", "4")
    # 127.0.0.1 -> 127.0.0.1, UDP 40000 -> 50001 (found by its RH), no UDP checksum; the PDU
    # packed here.
    body = rh_bytes(op=1, xpuid=77, npsn=5, apsn=4)  # no payload: nothing for a profile to parse
    pdu = body + rcrc(body)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(pdu), 1, 0x4000, 64, 17, 0,
                     bytes([127, 0, 0, 1]), bytes([127, 0, 0, 1]))
    words = sum(struct.unpack(">10H", ip))
    while words >> 16:
        words = (words & 0xFFFF) + (words >> 16)
    ip = ip[:10] + struct.pack(">H", ~words & 0xFFFF) + ip[12:]
    udp = struct.pack(">HHHH", 40000, 50001, 8 + len(pdu), 0)
    sll_ip = bytes.fromhex("0000000100060200000000010000") + b"\x08\x00" + ip + udp + pdu
    sll_arp = bytes.fromhex("00040001000602000000000200000806")
    sll = os.path.join(TMP, "sll.pcap")
    # Between gen's frames (1 ms apart from 1700000000.001).
    write_pcap(sll, "<", False, 65535, 113, [(1700000000, 1500, len(sll_ip), sll_ip),
                                             (1700000000, 4500, len(sll_arp), sll_arp)])
    merged = os.path.join(TMP, "merged.pcapng")
    subprocess.run(["mergecap", "-F", "pcapng", "-w", merged, eth, sll], check=True,
                   capture_output=True)
    rows = tshark_fields(merged, "frame.interface_id", "frame.protocols")
    check(len(rows) == 8, f"tshark reads {len(rows)} frames of the merge")
    ours = jsonl(run("dump", "--json", merged).stdout)
    check(len(ours) == len(rows), f"dump shows {len(ours)} frames, tshark {len(rows)}")
    original = jsonl(run("dump", "--json", eth).stdout)
    k, cooked = 0, []
    for n, (row, d) in enumerate(zip(rows, ours), 1):
        check(d["frame"] == n, f"frame {n} numbered {d['frame']}")
        if row[1].startswith("sll"):
            cooked.append(d)
        else:
            o = dict(original[k], frame=n)
            check(dissection([d]) == dissection([o]),
                  f"frame {n}: dissected unlike frame {k + 1} of the Ethernet capture")
            k += 1
    check(k == 6, f"{k} Ethernet frames")
    check(len(cooked) == 2, f"{len(cooked)} cooked frames")
    sue, arp = cooked
    check(sue["encap"] == "udp4" and sue["sue.rh.xpuid"] == 77 and sue["sue.rh.op"] == 1 and
          sue["sll.pkttype"] == 0 and sue["sll.etype"] == 0x0800 and sue["errors"] == [],
          f"the cooked SUE frame: {sue}")
    check(arp["encap"] == "sll" and arp["sll.pkttype"] == 4 and arp["sll.etype"] == 0x0806 and
          arp["errors"] == [], f"the cooked ARP frame: {arp}")
    s = json.loads(run("stats", "--json", merged).stdout)
    check(s["frames"] == 8 and s["analysed"] == 7, f"stats: {s['frames']} frames, "
          f"{s['analysed']} analysed")
    # -w saves them whole as pcapng (each frame with its interface, its link type and name, as
    # tshark reads them); a pcap has one link type, and says so.
    saved = os.path.join(TMP, "saved.pcapng")
    run("dump", "-q", "-w", saved, merged)
    fields = ["frame.interface_id", "frame.interface_name", "frame.time_epoch", "frame.len",
              "frame.cap_len", "frame.protocols"]
    check(tshark_fields(saved, *fields) == tshark_fields(merged, *fields),
          f"saved:\n{tshark_fields(saved, *fields)}\nmerged:\n{tshark_fields(merged, *fields)}")
    p = run("dump", "-q", "-w", os.path.join(TMP, "saved.pcap"), merged, expect=1)
    check("one link type" in p.stderr, p.stderr)


def case_damaged_captures():
    """Files that cannot be read (wholly or from some point on) get a message that says why;
    the frames before the damage are still shown."""
    need_wireshark_tools()
    cap = os.path.join(TMP, "good.pcap")
    run("gen", "basic", "-o", cap, "--encap", "udp4", "--count", "4")
    data = open(cap, "rb").read()
    _, _, _, _, records = read_pcap(cap)
    third = 24 + sum(16 + len(r[3]) for r in records[:2])

    def expect(name, content, pattern, before):
        path = os.path.join(TMP, name)
        with open(path, "wb") as f:
            f.write(content)
        for cmd in (["dump", "--json", path], ["stats", path]):
            p = run(*cmd, expect=1)
            check(p.stderr.startswith("scaleup: " + path), f"{name}: {p.stderr!r}")
            check(all(x in p.stderr for x in pattern), f"{name}: {p.stderr!r} lacks {pattern}")
        shown = jsonl(run("dump", "--json", path, expect=1).stdout)
        check(len(shown) == before, f"{name}: {len(shown)} frames before the damage")

    expect("cut.pcap", data[:third + 16 + 30], ["packet 3", f"offset {third}", "truncated"], 2)
    expect("absurd.pcap", data[:third + 8] + struct.pack("<I", 0x7FFFFFFF) + data[third + 12:],
           ["packet 3", "captured length 2147483647 is absurd"], 2)
    expect("text.pcap", b"no capture here\n" * 4, ["not a pcap or pcapng capture"], 0)
    expect("x.pcap.xz", bytes([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) + bytes(40),
           ["xz-compressed", "decompress it first"], 0)
    # gzip: cut short, corrupted, and a compressed text file.
    gz = os.path.join(TMP, "g.pcap.gz")
    gzip_copy(cap, gz)
    z = open(gz, "rb").read()
    cut = z[:len(z) - 30]
    # The frames whose every byte comes out of what is left of the stream.
    plain, whole, at = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(cut), 0, 24
    while at + 16 <= len(plain):
        end = at + 16 + struct.unpack("<I", plain[at + 8:at + 12])[0]
        if end > len(plain):
            break
        whole, at = whole + 1, end
    check(0 < whole < 4, f"{whole} frames in the cut gzip stream")
    expect("cut.pcap.gz", cut, ["gzip", "truncated"], whole)
    bad = bytearray(z)
    bad[len(z) // 2] ^= 0xFF
    path = os.path.join(TMP, "bad.pcap.gz")
    open(path, "wb").write(bytes(bad))
    p = run("dump", "--json", path, expect=1)
    check("gzip: " in p.stderr, f"corrupt gzip: {p.stderr!r}")
    txt = os.path.join(TMP, "notes.txt")
    open(txt, "w").write("not a capture\n" * 10)
    gzip_copy(txt, os.path.join(TMP, "notes.gz"))
    expect("notes2.gz", open(os.path.join(TMP, "notes.gz"), "rb").read(),
           ["not a pcap or pcapng capture"], 0)
    # pcapng: a damaged block length.
    ng = os.path.join(TMP, "good.pcapng")
    subprocess.run(["editcap", "-F", "pcapng", cap, ng], check=True, capture_output=True)
    b = bytearray(open(ng, "rb").read())
    at, blocks = 0, []
    while at + 8 <= len(b):
        btype, blen = struct.unpack("<II", b[at:at + 8])
        blocks.append((at, btype, blen))
        at += blen
    epbs = [(a, n) for a, t, n in blocks if t == 6]
    check(len(epbs) == 4, f"editcap wrote {len(epbs)} packet blocks")
    a, n = epbs[2]
    b[a + n - 4] ^= 0x08  # the third packet's trailing length
    expect("damaged.pcapng", bytes(b), ["packet 3", f"block at offset {a}",
                                        "damaged block length"], 2)
    check(subprocess.run(["tshark", "-r", os.path.join(TMP, "damaged.pcapng")],
                         capture_output=True).returncode != 0, "tshark refuses it too")


def case_stats_precision():
    """Captures the tool writes hold nanoseconds; stats prints times with the precision of the
    file: nanoseconds from a nanosecond capture, whole microseconds from a microsecond one."""
    need_wireshark_tools()
    cap = os.path.join(TMP, "s.pcap")
    run("gen", "session", "-o", cap, "--commands", "3000", "--seed", "3")
    times = [epoch_ns(r[0]) for r in tshark_fields(cap, "frame.time_epoch")]
    check(len(set(times)) * 4 > len(times),
          f"{len(times)} frames on only {len(set(times))} distinct times")
    check(any(t % 1000 for t in times), "times finer than a microsecond")
    s = json.loads(run("stats", "--json", cap).stdout)
    check(s["time_precision"] == 9, f"time precision {s['time_precision']}")
    ns, us = s["ack_rtt_ns"], s["ack_rtt_us"]
    check(ns["count"] > 100 and us["count"] == ns["count"], f"{ns}")
    for key in ("min", "p50", "p90", "p99", "max"):
        check(isinstance(ns[key], int) and us[key] == round(ns[key] / 1000, 3),
              f"{key}: {ns[key]} ns, {us[key]} us")
    check(any(ns[k] % 1000 for k in ("min", "p50", "p90", "p99", "max")),
          f"nanosecond RTTs: {ns}")
    for c in s["connections"]:
        check(c["first_us"] == round(c["first_ns"] / 1000, 3), f"first time {c}")
    text = run("stats", cap).stdout
    row = [line for line in text.splitlines() if line.strip().startswith("all")][0]
    want = "/".join(f"{us[k]:.3f}" for k in ("p50", "p90", "p99"))
    check(row.endswith(want), f"text row {row!r}, wanted {want}")

    # The same capture with microseconds (editcap -F pcap writes them).
    cap_us = os.path.join(TMP, "s-us.pcap")
    subprocess.run(["editcap", "-F", "pcap", cap, cap_us], check=True, capture_output=True)
    u = json.loads(run("stats", "--json", cap_us).stdout)
    check(u["time_precision"] == 6, f"time precision {u['time_precision']}")
    for key in ("min", "p50", "p90", "p99", "max"):
        check(u["ack_rtt_ns"][key] % 1000 == 0 and isinstance(u["ack_rtt_us"][key], int),
              f"{key}: {u['ack_rtt_ns'][key]} ns, {u['ack_rtt_us'][key]} us")
    row = [line for line in run("stats", cap_us).stdout.splitlines()
           if line.strip().startswith("all")][0]
    want = "/".join(str(u["ack_rtt_us"][k]) for k in ("p50", "p90", "p99"))
    check(row.endswith(" " + want), f"text row {row!r}, wanted {want}")


def uet_pds(ptype, next_header, psn, data=bytes(range(0x40, 0x50))):
    """An Ultra Ethernet Transport packet as Wireshark's packet-uet.c reads it (UE 1.0): the PDS
    prologue type(5) next header(4) flags(7); a RUD/ROD request's clear PSN offset, PSN, source
    and destination PDC ids; with next header 3 a standard SES request header of 44 bytes (UET_WRITE,
    SOM and EOM, message id 7, request length 16); then data."""
    prologue = struct.pack(">H", ptype << 11 | next_header << 7)
    pds = struct.pack(">hIHH", 0, psn, 0x11, 0x22)
    ses = struct.pack(">BBHB3sHHQIQQI", 0x01, 0x03, 7, 0, b"\0\0\0", 0, 0, 0, 0, 0, 0, len(data))
    return prologue + pds + ses + data


def case_udp_ports():
    """No UDP port is SUE's: gen writes to 61793, dump finds SUE on any port by a plausible RH,
    binds its flow, decodes a named port without the test (an RH of version 1 with a warning),
    and never takes Ultra Ethernet Transport on 4793 (packet-uet.c's port) for SUE."""
    sys.path.insert(0, "/usr/lib/python3/dist-packages")
    from scapy.all import Ether, IP, UDP, Raw, wrpcap
    cap = os.path.join(TMP, "gen.pcap")
    run("gen", "basic", "-o", cap, "--encap", "udp4,udp6", "--count", "3")
    d = jsonl(run("dump", "--json", cap).stdout)
    check(d and all(f["encap"] in ("udp4", "udp6") for f in d), f"{[f['encap'] for f in d]}")
    check({f["udp.dstport"] for f in d} == {61793} == {f["udp.srcport"] for f in d},
          "gen writes SUE to port 61793")
    # UET: requests of each kind, both directions; the first reads as RH version 0 with its
    # reserved bits zero (RUD request, next header 3, PSN 0x1000): the R-CRC tells.
    uet = [uet_pds(2, 3, 0x1000), uet_pds(3, 3, 0x1000), uet_pds(7, 0, 5), uet_pds(2, 3, 77)]
    check(uet[0][0] == 0x11 and uet[0][1] == 0x80 and (uet[0][4] & 0x3C) == 0, "the lookalike")
    frames = []
    for i, p in enumerate(uet):
        frames.append(Ether() / IP(src="192.168.1.10", dst="192.168.1.20") /
                      UDP(sport=50000 + i, dport=4793) / Raw(p))
        frames.append(Ether() / IP(src="192.168.1.20", dst="192.168.1.10") /
                      UDP(sport=4793, dport=50000 + i) / Raw(p))
    uet_cap = os.path.join(TMP, "uet.pcap")
    wrpcap(uet_cap, frames)
    d = jsonl(run("dump", "--json", uet_cap).stdout)
    check(len(d) == 8 and all(f["encap"] == "ipv4/udp" and "sue.rh.ver" not in f for f in d),
          f"UET is not SUE: {[f['encap'] for f in d]}")
    s = json.loads(run("stats", "--json", uet_cap).stdout)
    check(s["analysed"] == 0 and s["left_out"] == 0 and s["pdus"] == 0, f"stats: {s}")
    # A flow found SUE stays SUE: good PDUs on 40000 -> 50000, then a damaged one.
    pdu = rh_bytes(op=2, xpuid=7, npsn=1) + b"\xaa"
    bad = pdu + struct.pack(">I", zlib.crc32(pdu) ^ 1)
    flow = [Ether() / IP(src="192.168.1.10", dst="192.168.1.20") / UDP(sport=40000, dport=50000)]
    frames = [flow[0] / Raw(bad), flow[0] / Raw(pdu + rcrc(pdu)), flow[0] / Raw(bad)]
    flow_cap = os.path.join(TMP, "flow.pcap")
    wrpcap(flow_cap, frames)
    d = jsonl(run("dump", "--json", "--profile", "none", flow_cap).stdout)
    check([f["encap"] for f in d] == ["ipv4/udp", "udp4", "udp4"], f"{[f['encap'] for f in d]}")
    check(d[2]["sue.rcrc.status"] == "bad", "the damaged PDU of a known flow: a bad R-CRC")
    s = json.loads(run("stats", "--json", "--profile", "none", flow_cap).stdout)
    check(s["analysed"] == 1 and s["left_out"] == 1, f"stats: {s}")
    # A named port: SUE without the test; version 1 decoded with a warning.
    v1 = rh_bytes(ver=1, op=2, xpuid=7, npsn=2) + b"\xaa"
    v1_cap = os.path.join(TMP, "v1.pcap")
    wrpcap(v1_cap, [flow[0] / Raw(v1 + rcrc(v1))])
    (f,) = jsonl(run("dump", "--json", "--profile", "none", v1_cap).stdout)
    check(f["encap"] == "ipv4/udp", "version 1: not by the heuristic")
    (f,) = jsonl(run("dump", "--json", "--profile", "none", "--udp-port", "50000", v1_cap).stdout)
    check(f["encap"] == "udp4" and f["sue.rh.ver"] == 1 and f["sue.rcrc.status"] == "good", f"{f}")
    check([(e["layer"], e["field"], e["severity"]) for e in f["errors"]] ==
          [("sue.rh", "sue.rh.ver", "warning")], f"{f['errors']}")


def case_xpu_map():
    """Endpoints as the frame carries them: over IP the addresses, the RH's xpuid as the source
    XPU, a destination XPU only from --xpu-map (lines ADDRESS XPU)."""
    sys.path.insert(0, "/usr/lib/python3/dist-packages")
    from scapy.all import Ether, IP, UDP, Raw, wrpcap
    a, b = "192.168.1.10", "192.168.1.20"  # XPU 7 and XPU 20, in no addressing plan

    def sue(src, dst, rh, data=b"\xaa"):
        pdu = rh + data
        return Ether() / IP(src=src, dst=dst) / UDP(sport=50000, dport=50001) / Raw(pdu + rcrc(pdu))

    frames = [sue(a, b, rh_bytes(op=2, xpuid=7, npsn=n)) for n in (1, 2, 3)]
    frames.append(sue(b, a, rh_bytes(op=0, xpuid=20, npsn=9, apsn=3), b""))  # RH-only ACK
    cap = os.path.join(TMP, "ordinary.pcap")
    wrpcap(cap, frames)
    none = ("--profile", "none")  # the payloads are opaque bytes
    d = jsonl(run("dump", "--json", *none, cap).stdout)
    check(all(f["encap"] == "udp4" and "sue.dst_xpu" not in f for f in d), f"{d}")
    text = run("dump", "-v", *none, cap).stdout
    check("65556" not in text and "dst_xpu" not in text, "no destination XPU made up")
    s = json.loads(run("stats", "--json", *none, cap).stdout)
    check(s["analysed"] == 4 and s["connection_count"] == 1, f"{s}")
    (c,) = s["connections"]
    check(c["src"] == a and c["dst"] == b and c["src_ip"] == a and c["dst_ip"] == b, f"{c}")
    check(c["src_xpu"] == 7 and "dst_xpu" not in c, f"the RH's source XPU only: {c}")
    check(c["pdus"] == 3 and c["acks"] == 1 and c["ack_rtt_ns"]["count"] == 1, f"{c}")
    check("65556" not in run("stats", *none, cap).stdout, "no made-up XPU in the table")
    # With the map: XPU ids.
    xmap = os.path.join(TMP, "xpus.txt")
    with open(xmap, "w") as f:
        f.write(f"# the lab's XPUs\n{a} 7\n{b}  0x14   # XPU 20\n")
    d = jsonl(run("dump", "--json", *none, "--xpu-map", xmap, cap).stdout)
    check([f.get("sue.dst_xpu") for f in d] == [20, 20, 20, 7], f"{d}")
    s = json.loads(run("stats", "--json", *none, "--xpu-map", xmap, cap).stdout)
    (c,) = s["connections"]
    check(c["src"] == "XPU 7" and c["dst"] == "XPU 20" and c["src_xpu"] == 7 and
          c["dst_xpu"] == 20 and "src_ip" not in c, f"{c}")
    check(c["acks"] == 1 and c["ack_rtt_ns"]["count"] == 1, f"the ACK still found: {c}")
    # Errors name the file and the line.
    with open(xmap, "w") as f:
        f.write(f"{a} 7\n{b} XPU20\n")
    for cmd in ("dump", "stats"):
        p = run(cmd, "--xpu-map", xmap, cap, expect=2)
        check(f"{xmap}:2: XPU id is not a number" in p.stderr, p.stderr)
    p = run("stats", "--xpu-map", os.path.join(TMP, "none.txt"), cap, expect=2)
    check("cannot open the file" in p.stderr, p.stderr)


def run_case(cases, name):
    """Runs case_NAME of `cases` (a test script's globals) with TMP a fresh directory."""
    global TMP
    case = cases.get("case_" + name)
    if not case:
        print("unknown case", name)
        return 2
    with tempfile.TemporaryDirectory() as d:
        TMP = d
        case()
    print("1 passed, 0 failed")
    return 0


def started(cmd, stdout, markers=("listening on", "Capturing on"), seconds=10):
    """Starts a capturing command; returns (process, what it said on stderr) once it says one of
    `markers` there, or (None, what it said) when it ends or stays silent first."""
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE)
    seen = b""
    deadline = time.time() + seconds
    os.set_blocking(p.stderr.fileno(), False)
    while time.time() < deadline:
        seen += p.stderr.read() or b""
        text = seen.decode(errors="replace")
        if any(m in text for m in markers):
            time.sleep(0.2)
            return p, text
        if p.poll() is not None:
            return None, (seen + (p.stderr.read() or b"")).decode(errors="replace")
        time.sleep(0.05)
    p.kill()
    return None, seen.decode(errors="replace")


def script_main(cases, doc, skip=77):
    """The main of a test script run as `SCRIPT SCALEUP_BINARY CASE`: runs case_CASE of `cases`
    (the script's globals) in a fresh TMP; a case returning `skip` is reported skipped."""
    global SCALEUP, TMP
    if len(sys.argv) != 3:
        print(doc)
        return 2
    SCALEUP = os.path.abspath(sys.argv[1])
    case = cases.get("case_" + sys.argv[2])
    if not case:
        print("unknown case", sys.argv[2])
        return 2
    with tempfile.TemporaryDirectory() as d:
        TMP = d
        if case() == skip:
            print("0 passed, 0 failed, 1 skipped")
            return skip
    print("1 passed, 0 failed")
    return 0


def main():
    global SCALEUP
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    SCALEUP = os.path.abspath(sys.argv[1])
    return run_case(globals(), sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
