#!/usr/bin/env python3
"""Link layers of captures other tools wrote: `scaleup dump` reads SUE
behind each, and shows each lower layer with the values tshark shows under the same names.

usage: link_layers_test.py SCALEUP_BINARY CASE

  link_types     scapy writes one capture per link type (0 in both byte orders, 108, 101, 228,
                 229, 113, 276, and Ethernet with a stack of 802.1ad and 802.1Q tags), each frame
                 a SUE PDU over UDP; dump must give the RH packed here and the lower-layer fields
                 tshark reads
  capture_tools  mergecap of an Ethernet capture and a cooked one (a pcapng with two interfaces
                 of different link types), editcap -F pcapng, gzip: every frame read as SUE
  real_capture   SUE PDUs sent from a UDP socket to 127.0.0.1, captured by tcpdump (dumpcap where
                 tcpdump is not installed) on `lo` and on `any`; exit 77 (skipped) when neither
                 can capture on lo

Expected values are the ones packed here or given to scapy, and tshark's reading; never the
dissector's own.
"""
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

import cli_test  # the scaleup command's runner and the RH packed by hand
from cli_test import check, fail, jsonl, rcrc, rh_bytes, run, tshark_fields

SKIP = 77  # SKIP_RETURN_CODE in tests/cli/CMakeLists.txt
PORT = 47931  # not SUE's 4793: dump finds the PDUs by their plausible RH and good R-CRC


def tmp(name):
    return os.path.join(cli_test.TMP, name)


def pdu(i):
    """PDU i: an RH packed by hand, i + 1 payload bytes, the R-CRC."""
    rh = rh_bytes(op=2, xpuid=100 + i, npsn=1000 + i, vc=i % 4, partition=7, apsn=999 + i)
    body = rh + bytes(range(1, i + 2))
    return body + rcrc(body)


def rh_of(i):
    return {"sue.rh.op": 2, "sue.rh.xpuid": 100 + i, "sue.rh.npsn": 1000 + i,
            "sue.rh.vc": i % 4, "sue.rh.partition": 7, "sue.rh.apsn": 999 + i}


# The payloads are opaque bytes, not commands of a profile.
OPAQUE = ("--profile", "none")


def dump(path, *opts):
    return jsonl(run("dump", "--json", *OPAQUE, *opts, path).stdout)


def as_list(v):
    return v if isinstance(v, list) else [v]


def number(text):
    """A tshark field value as a number: decimal, 0x hex, or True/False."""
    if text in ("True", "False"):
        return int(text == "True")
    return int(text, 0)


def mac(v):
    """dump's value of a MAC field, as tshark prints it."""
    if isinstance(v, str):
        return v.lower()
    return ":".join(f"{(v >> s) & 0xFF:02x}" for s in range(40, -8, -8))


def check_sue(where, d, i, encap):
    check(d["encap"] == encap, f"{where}: encap {d['encap']}, wanted {encap}")
    for k, v in rh_of(i).items():
        check(d.get(k) == v, f"{where}: {k} = {d.get(k)!r}, packed {v}")
    check(d.get("sue.rcrc.status") == "good", f"{where}: R-CRC {d.get('sue.rcrc.status')}")


def check_like_tshark(where, path, frames, fields):
    """The lower-layer fields of every frame: dump's value is tshark's, repeated names (a stack
    of tags) in the same order."""
    rows = tshark_fields(path, *fields)
    check(len(rows) == len(frames), f"{where}: tshark reads {len(rows)} frames")
    for n, (row, d) in enumerate(zip(rows, frames), 1):
        for field, text in zip(fields, row + [""] * len(fields)):
            check(text != "", f"{where} frame {n}: tshark shows no {field}")
            check(field in d, f"{where} frame {n}: dump shows no {field}")
            theirs = text.split(",")
            ours = as_list(d[field])
            if field.endswith(".eth"):
                same = [mac(v) for v in ours] == [t.lower() for t in theirs]
            else:
                same = ours == [number(t) for t in theirs]
            check(same, f"{where} frame {n}: {field} = {ours}, tshark {theirs}")


# ---- one capture per link type, written by scapy ------------------------------------------------

def link_type_captures():
    """{name: (link type, [packets], encap, lower-layer fields tshark shows)}"""
    from scapy.all import IP, UDP, Dot1AD, Dot1Q, Ether, IPv6, Raw
    from scapy.layers.l2 import CookedLinux, CookedLinuxV2, Loopback

    def v4(i):
        return IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=40000 + i, dport=PORT) / \
            Raw(pdu(i))

    def v6(i):
        return IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=40000 + i, dport=PORT) / \
            Raw(pdu(i))

    n = range(3)
    mac_a = "02:00:00:00:00:0a"
    sll_fields = ("sll.pkttype", "sll.hatype", "sll.halen", "sll.src.eth", "sll.etype")
    return {
        # A little-endian host's BSD loopback (scapy's Loopback), a big-endian host's, and
        # OpenBSD's LINKTYPE_LOOP (network order): tshark shows the family, not its bytes.
        "null-le": (0, [Loopback(type=2) / v4(i) for i in n], "udp4", ("null.family",)),
        "null-le-v6": (0, [Loopback(type=30) / v6(i) for i in n], "udp6", ("null.family",)),
        "null-be": (0, [Raw(struct.pack(">I", 2)) / v4(i) for i in n], "udp4", ("null.family",)),
        "null-be-v6": (0, [Raw(struct.pack(">I", 24)) / v6(i) for i in n], "udp6",
                       ("null.family",)),
        "loop": (108, [Raw(struct.pack(">I", 2)) / v4(i) for i in n], "udp4", ("null.family",)),
        "raw": (101, [v4(0), v6(1), v4(2)], None, ()),
        "ipv4": (228, [v4(i) for i in n], "udp4", ()),
        "ipv6": (229, [v6(i) for i in n], "udp6", ()),
        "sll": (113, [CookedLinux(pkttype=i, lladdrtype=1, lladdrlen=6,
                                  src=bytes.fromhex("02000000000a") + b"\0\0") / v4(i)
                      for i in n], "udp4", sll_fields),
        "sll-v6": (113, [CookedLinux(pkttype=4, lladdrtype=772, lladdrlen=6, src=b"\0" * 8,
                                     proto=0x86DD) / v6(i) for i in n], "udp6", sll_fields),
        "sll2": (276, [CookedLinuxV2(pkttype=i, lladdrtype=1, lladdrlen=6, ifindex=7 + i,
                                     src=bytes.fromhex("02000000000a") + b"\0\0") / v4(i)
                       for i in n], "udp4", sll_fields + ("sll.ifindex",)),
        "sll2-v6": (276, [CookedLinuxV2(proto=0x86DD, pkttype=0, lladdrtype=1, lladdrlen=6,
                                        ifindex=2, src=bytes.fromhex("02000000000a") + b"\0\0")
                          / v6(i) for i in n], "udp6", sll_fields + ("sll.ifindex",)),
        # 802.1ad outside, two 802.1Q inside; then 0x9100 (the service tag before 802.1ad).
        "tags": (1, [Ether(src=mac_a, dst="02:00:00:00:00:0b") /
                     Dot1AD(prio=5, vlan=100) / Dot1Q(id=1, vlan=200 + i) / Dot1Q(vlan=300) /
                     v4(i) for i in n], "udp4",
                 ("ieee8021ad.id", "ieee8021ad.priority", "ieee8021ad.dei", "ieee8021ah.etype",
                  "vlan.id", "vlan.priority", "vlan.dei", "vlan.etype")),
        "tags-9100": (1, [Ether(src=mac_a, dst="02:00:00:00:00:0b", type=0x9100) /
                          Dot1Q(vlan=10, type=0x8100) / Dot1Q(vlan=20 + i) / v6(i)
                          for i in n], "udp6", ("vlan.id", "vlan.etype")),
    }


def case_link_types():
    from scapy.all import wrpcap
    for name, (link, packets, encap, fields) in link_type_captures().items():
        path = tmp(name + ".pcap")
        wrpcap(path, packets, linktype=link)
        frames = dump(path)
        check(len(frames) == len(packets), f"{name}: dump shows {len(frames)} frames")
        for i, d in enumerate(frames):
            want = encap or ("udp6" if i == 1 else "udp4")  # raw IP: the version decides
            check_sue(f"{name} frame {i + 1}", d, i, want)
            check(d["errors"] == [], f"{name} frame {i + 1}: errors {d['errors']}")
        if fields:
            check_like_tshark(name, path, frames, fields)
        # The lower layer is in the text too, named as in the tree.
        text = run("dump", "-v", *OPAQUE, path).stdout
        for field in fields:
            check(field in text, f"{name}: dump -v does not name {field}")
    # What each family means, as tshark reads it.
    check([int(r[0]) for r in tshark_fields(tmp("null-be-v6.pcap"), "null.family")] == [24] * 3,
          "tshark reads the big-endian family")


# ---- captures merged, converted and compressed by other tools ----------------------------------

def case_capture_tools():
    from scapy.all import IP, UDP, Ether, Raw, wrpcap
    from scapy.layers.l2 import CookedLinuxV2
    cli_test.need_wireshark_tools()
    eth, cooked = tmp("eth.pcap"), tmp("cooked.pcap")
    ip = IP(src="192.0.2.1", dst="192.0.2.2")
    packets = [Ether() / ip / UDP(sport=40000, dport=PORT) / Raw(pdu(i)) for i in (0, 2, 4)]
    for p, t in zip(packets, (1.0, 3.0, 5.0)):
        p.time = 1700000000 + t
    wrpcap(eth, packets)
    packets = [CookedLinuxV2(pkttype=4, lladdrtype=772, lladdrlen=6, src=b"\0" * 8) / ip /
               UDP(sport=40000, dport=PORT) / Raw(pdu(i)) for i in (1, 3, 5)]
    for p, t in zip(packets, (2.0, 4.0, 6.0)):
        p.time = 1700000000 + t
    wrpcap(cooked, packets, linktype=276)

    merged = tmp("merged.pcapng")
    subprocess.run(["mergecap", "-F", "pcapng", "-w", merged, eth, cooked], check=True,
                   capture_output=True)
    rows = tshark_fields(merged, "frame.interface_id", "frame.protocols")
    check([r[0] for r in rows] == ["0", "1"] * 3, f"mergecap's interfaces: {rows}")
    check(rows[1][1].startswith("sll:"), f"the second interface is cooked: {rows[1]}")
    frames = dump(merged)
    check(len(frames) == 6, f"dump shows {len(frames)} frames of the merge")
    for i, d in enumerate(frames):
        check_sue(f"merged frame {i + 1}", d, i, "udp4")
        check(("sll.pkttype" in d) == (i % 2 == 1), f"merged frame {i + 1}: its own link type")
    s = json.loads(run("stats", "--json", *OPAQUE, merged).stdout)
    check(s["frames"] == 6 and s["analysed"] == 6, f"stats: {s['frames']} frames, "
          f"{s['analysed']} analysed")

    # editcap -F pcapng of the cooked capture, and gzip'ed copies: the same frames.
    ng = tmp("cooked.pcapng")
    subprocess.run(["editcap", "-F", "pcapng", cooked, ng], check=True, capture_output=True)
    ref = dump(cooked)
    check(cli_test.dissection(dump(ng)) == cli_test.dissection(ref),
          "editcap -F pcapng: dump differs")
    for src in (cooked, ng, merged):
        gz = src + ".gz"
        cli_test.gzip_copy(src, gz)
        want = run("dump", "--json", *OPAQUE, src).stdout
        check(run("dump", "--json", *OPAQUE, gz).stdout == want,
              f"{os.path.basename(gz)}: dump differs")


# ---- real packets, captured from the loopback interface ----------------------------------------

def capture_tool():
    """tcpdump where it is installed, else dumpcap (Wireshark's, installed with tshark): both
    capture through libpcap. None when neither is there."""
    for tool in ("tcpdump", "dumpcap"):
        path = shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin")
        if path:
            return tool, path
    return None, None


def capture(tool, path, interface, out, count, link=None):
    """Starts a bounded capture of `count` datagrams to PORT; returns the process once it
    listens, or None when it cannot open the interface."""
    if tool == "tcpdump":
        cmd = [path, "-i", interface, "-c", str(count), "-w", out, "-U", "-n"]
        if link:
            cmd += ["-y", link]
        cmd += ["udp", "dst", "port", str(PORT)]
    else:
        cmd = [path, "-i", interface, "-c", str(count), "-w", out, "-P", "-q",
               "-f", f"udp dst port {PORT}"]
        if link:
            cmd += ["-y", link]
    # Both say on stderr when they listen ("listening on", "Capturing on").
    return cli_test.started(["timeout", "20", *cmd], subprocess.DEVNULL)


def case_real_capture():
    tool, path = capture_tool()
    if not tool:
        print("SKIP: neither tcpdump nor dumpcap is installed")
        return SKIP
    count = 12
    # `lo` (Ethernet, link type 1, on Linux) and `any` (a Linux cooked capture: v1 unless asked
    # for v2, which tcpdump 4.99 on Debian 12 does by itself).
    runs = [("lo", None), ("any", None), ("any", "LINUX_SLL2"), ("any", "LINUX_SLL")]
    results = []
    for interface, link in runs:
        out = tmp(f"{interface}-{link or 'default'}.pcap")
        p, said = capture(tool, path, interface, out, count, link)
        if p is None:
            if interface == "lo":
                print(f"SKIP: {tool} cannot capture on lo: {said.strip()}")
                return SKIP
            fail(f"{tool} cannot capture on {interface} ({link}): {said.strip()}")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for i in range(count):
                s.sendto(pdu(i), ("127.0.0.1", PORT))
                time.sleep(0.01)
        try:
            p.wait(timeout=25)
        except subprocess.TimeoutExpired:
            p.kill()
        check(os.path.exists(out), f"{tool} -i {interface} wrote nothing")
        results.append((interface, link, out))

    links = {}
    for interface, link, out in results:
        rows = tshark_fields(out, "frame.protocols")
        check(len(rows) == count, f"{interface} ({link}): tshark reads {len(rows)} frames")
        linktype = cli_test.read_pcap(out)[3]
        links[(interface, link)] = linktype
        frames = dump(out)
        check(len(frames) == count, f"{interface}: dump shows {len(frames)} frames")
        for i, d in enumerate(frames):
            check_sue(f"{interface} ({link}) frame {i + 1}", d, i, "udp4")
            check(d.get("ip.dst") in ("127.0.0.1", 0x7F000001), f"{interface}: {d.get('ip.dst')}")
            check(d.get("udp.dstport") == PORT, f"{interface}: {d.get('udp.dstport')}")
        if linktype in (113, 276):
            check_like_tshark(f"{interface} ({link})", out, frames,
                              ("sll.pkttype", "sll.hatype", "sll.etype"))
        # The kernel left the UDP checksums to offload, which is no fault: every PDU analysed.
        s = json.loads(run("stats", "--json", out).stdout)
        check(s["analysed"] == count and s["left_out"] == 0,
              f"{interface}: stats analyses {s['analysed']} PDUs")
    check(links[("lo", None)] == 1, f"lo is Ethernet on Linux: link type {links[('lo', None)]}")
    check(links[("any", "LINUX_SLL")] == 113 and links[("any", "LINUX_SLL2")] == 276,
          f"cooked captures asked for: {links}")
    # tcpdump 4.99 asks libpcap for v2 on `any`; dumpcap takes libpcap's default, v1.
    default = links[("any", None)]
    check(default == {"tcpdump": 276, "dumpcap": 113}[tool],
          f"{tool} -i any wrote link type {default}")
    print(f"{tool}: -i any writes link type {default} by default")
    return 0


def main():
    return cli_test.script_main(globals(), __doc__, SKIP)


if __name__ == "__main__":
    sys.exit(main())
