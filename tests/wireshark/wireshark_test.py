#!/usr/bin/env python3
"""The Wireshark plugin against `scaleup dump` and `scaleup stats`, through tshark.

usage: wireshark_test.py SCALEUP PLUGIN VERSION_DIR CASE [BUILD_DIR]

PLUGIN is the built scaleup.so, VERSION_DIR Wireshark's plugin subdirectory ("4.0"); both are
"-" for the cases that check `scaleup stats` alone.
tshark ignores plugin directories from the environment when run as root, so as root it runs
as nobody (setpriv), with the plugin and the captures copied into a world-readable scratch
directory.

What is compared, and what is normalised (README.md, "Wireshark"):
- Every key of every `scaleup dump --json` object, the packed commands' keys included, against
  the same display-filter name in `tshark -T fields`, frame by frame and occurrence by
  occurrence; a key the plugin does not produce fails.
- Our own fields need no normalisation beyond notation: tshark prints hex fields as 0x...,
  booleans as 1/0, and dump prints every integer in decimal.
- Fields Wireshark itself produces (eth, vlan, ip, ipv6, udp) are compared too. Where they
  differ it is Wireshark's notation, normalised here: ip.hdr_len is in bytes in Wireshark, in
  32-bit words in the header (and dump); Wireshark's IPv6 dissector also reports the version
  as ip.version, which dump shows only as ipv6.version; eth.fcs is the 4 bytes in wire order
  in Wireshark, the CRC-32 value (their little-endian reading) in dump. Two FCS cases are not
  compared: Ethernet never sees an AFH Gen 2 frame (the plugin shows that FCS as text, since
  eth.fcs is Wireshark's to define), and Wireshark's 802.1Q dissector calls whatever follows
  its payload a trailer, never an FCS.
- display_filters: for each of some 70 display filters, the frames `scaleup dump -Y F` keeps
  and the frames `tshark -Y F` keeps, number for number (dump prints a Tofu frame reassembled
  from its slices as a second line under its last slice's number: the numbers are a set).
- fields_csv: the text itself, `scaleup dump -T fields` against `tshark -T fields` byte for byte
  under tshark's -E options (quote, occurrence, aggregator, separator, header, bom), on fields
  whose notation the two share.
- labels: every label tshark shows for a field of ours (`-T pdml`'s showname) against the line
  `scaleup dump -v` prints for that field in that frame, brackets of computed fields aside.
"""
import json
import os
import re
import shutil
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
import zlib

SCALEUP = PLUGIN = VERSION_DIR = BUILD_DIR = None
TMP = PLUGIN_DIR = HOME = None
TSHARK = shutil.which("tshark")
EDITCAP = shutil.which("editcap")
MERGECAP = shutil.which("mergecap")
AGG = "|"  # separates the occurrences of a field; no value we compare contains it
SANITIZER_REPORTS = ("AddressSanitizer", "LeakSanitizer", "runtime error:")


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def run(cmd, expect=0, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    for bad in SANITIZER_REPORTS:  # whatever the exit status (SCALEUP_SANITIZE builds)
        check(bad not in p.stderr, f"{' '.join(cmd)}: {bad}\n{p.stderr[-6000:]}")
    if expect is not None and p.returncode != expect:
        fail(f"{' '.join(cmd)}: exit {p.returncode}, wanted {expect}\n"
             f"stdout: {p.stdout[-3000:]}\nstderr: {p.stderr[-3000:]}")
    return p


def scaleup(*args, expect=0):
    return run([SCALEUP, *args], expect=expect)


# A sanitizer build of the plugin (SCALEUP_SANITIZE) needs the sanitizer runtimes in tshark,
# which is not built with them: CMake names them in SCALEUP_TSHARK_PRELOAD, loaded first. tshark
# leaks on exit by design, so leak checking is off for it alone. Wireshark's per-packet memory
# comes from g_malloc one allocation at a time (the "simple" wmem allocator), so ASan sees the
# bounds of each, not of a pool block. The extcap tools tshark starts for `-G plugins` would
# inherit the preload, and some hang at exit under it (androiddump: p11-kit's destructor waits
# on glibc's locale lock), so tshark gets an empty extcap directory.
def tshark_env(plugin_dir=None):
    env = dict(os.environ, HOME=HOME, XDG_CONFIG_HOME=os.path.join(HOME, ".config"),
               WIRESHARK_PLUGIN_DIR=plugin_dir or PLUGIN_DIR)
    preload = os.environ.get("SCALEUP_TSHARK_PRELOAD")
    if preload:
        env["LD_PRELOAD"] = preload
        env["ASAN_OPTIONS"] = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"),
                                                     "detect_leaks=0", "halt_on_error=1"]))
        env["UBSAN_OPTIONS"] = ":".join(filter(None, [os.environ.get("UBSAN_OPTIONS"),
                                                      "halt_on_error=1", "print_stacktrace=1"]))
        env["WIRESHARK_DEBUG_WMEM_OVERRIDE"] = "simple"
        env["WIRESHARK_EXTCAP_DIR"] = os.path.join(TMP, "no-extcap")
        os.makedirs(env["WIRESHARK_EXTCAP_DIR"], mode=0o755, exist_ok=True)
    return env


def tshark_cmd(*args):
    cmd = [TSHARK, *args]
    if os.geteuid() == 0:
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
    return cmd


def check_stderr(what, stderr):
    # "have same dissector name": two handles of a table under one name, which tshark reports
    # at every start.
    for bad in ("Dissector bug", "dissector bug", "Segmentation", "Aborted", "assertion",
                "Lua: ", "have same dissector name", *SANITIZER_REPORTS):
        check(bad not in stderr, f"{what}: {bad}\n{stderr[-6000:]}")


def tshark(*args, expect=0, plugin_dir=None):
    p = run(tshark_cmd(*args), expect=expect, env=tshark_env(plugin_dir))
    check_stderr(f"tshark {' '.join(args)}", p.stderr)
    return p


def readable(path):
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
    return path


def setup():
    global TMP, PLUGIN_DIR, HOME
    TMP = tempfile.mkdtemp(prefix="scaleup-wireshark-")
    os.chmod(TMP, 0o755)
    HOME = os.path.join(TMP, "home")
    os.makedirs(HOME)
    os.chmod(HOME, 0o777)
    if PLUGIN == "-":  # `scaleup stats` alone
        return
    check(TSHARK, "tshark not found")
    PLUGIN_DIR = os.path.join(TMP, "plugins")
    epan = os.path.join(PLUGIN_DIR, VERSION_DIR, "epan")
    os.makedirs(epan)
    for d in (PLUGIN_DIR, os.path.join(PLUGIN_DIR, VERSION_DIR), epan):
        os.chmod(d, 0o755)
    shutil.copy(PLUGIN, os.path.join(epan, "scaleup.so"))
    os.chmod(os.path.join(epan, "scaleup.so"), 0o755)


def jsonl(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def capture(name, *gen_args):
    path = os.path.join(TMP, name + ".pcap")
    out = scaleup("gen", *gen_args, "-o", path).stdout
    readable(path)
    return path, out


# ---- tshark -T fields against dump --json ------------------------------------------------

LIST_KEYS = ("sue.cmds",)
META_KEYS = ("frame", "encap", "frame.time_epoch", "frame.time_relative", "frame.time_delta",
             "frame.len", "frame.cap_len", "frame.interface_id", "errors")
# tshark's checksum statuses (proto.h PROTO_CHECKSUM_E_*), which dump names.
CHECKSUM_STATUS = {0: "bad", 1: "good", 2: "unverified", 3: "not_present"}


def expected_fields(frame):
    """filter name -> the values dump shows, in order (commands one after another)."""
    out = {}
    for k, v in frame.items():
        if k in META_KEYS or k == "+":
            continue
        if k in LIST_KEYS:
            for item in v:
                for ik, iv in item.items():
                    out.setdefault(ik, []).append(iv)
            continue
        out.setdefault(k, []).extend(v if isinstance(v, list) else [v])
    for k, v in frame.get("+", {}).items():
        out.setdefault(k, []).extend(v)
    return out


def normalise(key, text):
    """A tshark value in dump's notation."""
    if key == "ip.hdr_len":  # Wireshark shows bytes; the field holds 32-bit words
        return int(text) // 4
    if key in ("ip.checksum.status", "udp.checksum.status"):
        return CHECKSUM_STATUS.get(int(text), text)
    if text in ("True", "False"):
        return 1 if text == "True" else 0
    try:
        return int(text, 0)
    except ValueError:
        return text


def merged(objects):
    """dump's objects, one per frame: a Tofu slice that completes a frame is followed by the
    reassembled frame under the same number, which Wireshark shows in that frame's tree."""
    frames = []
    for o in objects:
        if frames and frames[-1]["frame"] == o["frame"]:
            for k, v in expected_fields(o).items():
                frames[-1].setdefault("+", {}).setdefault(k, []).extend(v)
            continue
        frames.append(o)
    return frames


def compare_fields(pcap, profile=None, profile_file=None, where=None):
    """`where(n)` names frame n in a failure message (compare_fields_all: the capture it came
    from)."""
    where = where or (lambda n: f"{pcap} frame {n}")
    extra = ["--profile", profile or profile_file] if profile or profile_file else []
    frames = merged(jsonl(scaleup("dump", "--json", *extra, pcap).stdout))
    check(frames, f"{pcap}: dump shows no frames")
    keys = sorted({k for f in frames for k in expected_fields(f)})
    chosen = ["-o", f"sue.profile_file:{profile_file}"] if profile_file else []
    args = [*chosen, "-o", f"sue.profile:{profile or 'default'}",
            "-r", pcap, "-T", "fields", "-E", "occurrence=a", "-E", f"aggregator={AGG}",
            "-E", "separator=/t", "-e", "frame.number"]
    for k in keys:
        args += ["-e", k]
    lines = tshark(*args).stdout.splitlines()
    check(len(lines) == len(frames), f"{pcap}: tshark shows {len(lines)} frames, dump "
          f"{len(frames)}")
    compared = 0
    for f, line in zip(frames, lines):
        cols = line.split("\t")
        check(int(cols[0]) == f["frame"], f"frame numbers {cols[0]} and {f['frame']}")
        want = expected_fields(f)
        if "ipv6.version" in want:  # Wireshark's IPv6 dissector reports its shared ip.version
            want["ip.version"] = want["ipv6.version"]
        if "eth.fcs" in want:
            if f["encap"] in ("afh2", "afh2c", "lite") or "vlan.id" in want:
                # Ethernet never sees an AFH Gen 2 frame (the plugin shows its FCS as text), and
                # 802.1Q calls whatever follows its payload a trailer, never an FCS.
                del want["eth.fcs"]
            else:  # dump: the CRC-32 value; Wireshark: the 4 bytes in wire order
                want["eth.fcs"] = [int.from_bytes(v.to_bytes(4, "little"), "big")
                                   for v in want["eth.fcs"]]
        for k, text in zip(keys, cols[1:]):
            got = [normalise(k, t) for t in text.split(AGG)] if text else []
            exp = want.get(k, [])
            check(got == exp, f"{where(f['frame'])} ({f['encap']}): {k} is {got} in "
                  f"tshark, {exp} in dump")
            compared += len(exp)
    print(f"{os.path.basename(pcap)}: {len(frames)} frames, {len(keys)} filter names, "
          f"{compared} values agree")
    return frames


def pcap_records(path):
    """The number of records of a pcap file (either byte order, either time resolution)."""
    with open(path, "rb") as f:
        data = f.read()
    little = (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")  # microseconds, nanoseconds
    big = (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d")
    check(data[:4] in little + big, f"{path}: not a pcap file")
    order = "<" if data[:4] in little else ">"
    n, at = 0, 24
    while at + 16 <= len(data):
        at += 16 + struct.unpack_from(order + "I", data, at + 8)[0]
        n += 1
    return n


def concatenated(name, pcaps):
    """The captures one after the other in one pcapng file (mergecap -a: an interface each, so
    that each keeps its link type), readable by tshark's user."""
    path = os.path.join(TMP, name + ".pcapng")
    run([MERGECAP, "-F", "pcapng", "-a", "-w", path, *pcaps])
    return readable(path)


def compare_fields_all(name, pcaps, **kw):
    """compare_fields on the captures one after the other in one file (mergecap -a; pcapng keeps
    each one's link type): one tshark run instead of one a capture, where starting tshark costs
    more than reading the frames. dump and tshark read the same file, so the comparison is as
    exact; where the captures share flows the two tools see them meet alike. Returns dump's
    frames of each capture."""
    merged_pcap = concatenated(name, pcaps)
    first, n = [], 1
    for p in pcaps:
        first.append(n)
        n += pcap_records(p)

    def where(number):
        i = max(i for i, f in enumerate(first) if f <= number)
        return f"{os.path.basename(pcaps[i])} frame {number - first[i] + 1} (merged {number})"

    print(f"{name}: {', '.join(os.path.basename(p) for p in pcaps)}")
    frames = compare_fields(merged_pcap, where=where, **kw)
    bounds = [*first, n]
    parts = [[f for f in frames if bounds[i] <= f["frame"] < bounds[i + 1]]
             for i in range(len(pcaps))]
    for p, part in zip(pcaps, parts):
        check(part, f"{p}: dump shows no frames in the merged capture")
    return parts


# ---- the cases ------------------------------------------------------------------------------

def case_plugin_loads():
    out = tshark("-G", "plugins").stdout
    check("scaleup.so" in out, f"tshark does not list the plugin:\n{out}")
    protocols = {line.split("\t")[2] for line in tshark("-G", "protocols").stdout.splitlines()
                 if line.count("\t") >= 2}
    for p in ("sue", "sue_lite", "afh1", "afh2", "afh2c"):
        check(p in protocols, f"protocol {p} not registered")
    lines = [line for line in tshark("-G", "fields").stdout.splitlines()
             if line.startswith("F\t")]
    fields = {line.split("\t")[2]: line.split("\t")[3] for line in lines}
    for name in ("sue.analysis.ack_rtt", "sue.analysis.connection", "sue.rh.npsn",
                 "sue.cmd.name", "afh2.dst_xpu"):
        check(name in fields, f"field {name} not registered")
    check(fields["sue.analysis.ack_rtt"] == "FT_RELATIVE_TIME", "ack_rtt is a time")
    check(fields["sue.cmd.name"] == "FT_STRING", "labels are strings")
    # Wireshark's own names stay Wireshark's: one registration each.
    for name in ("ip.src", "eth.src", "udp.srcport", "vlan.id", "ipv6.dst", "eth.fcs"):
        owners = [line.split("\t")[4] for line in lines if line.split("\t")[2] == name]
        check(owners and all(o == name.split(".")[0] for o in owners),
              f"{name} registered by {owners}")


def case_fields_basic():
    pcap, _ = capture("basic", "basic", "--count", "6")
    compare_fields(pcap)
    compare_fields(pcap, profile="none")


EXPERTS = ("sue.error.", "sue.warning.", "sue.note.")  # the library's problems, as expert infos


def unbracketed(label):
    return label[1:-1] if label.startswith("[") and label.endswith("]") else label


def dump_labels(pcap, *opts):
    """The field lines of `scaleup dump -v`, by frame number: {(filter, label)}, a computed
    field's label without its brackets."""
    frames, n = {}, None
    for line in scaleup("dump", "-v", *opts, pcap).stdout.splitlines():
        if m := re.match(r"Frame (\d+):", line):
            n = int(m.group(1))
            frames.setdefault(n, set())
        elif (m := re.match(r"\s+(.*)  \{([^}]+)\}$", line)) and n is not None:
            frames[n].add((m.group(2), unbracketed(m.group(1))))
    return frames


def compare_labels(pcap, *opts, dump_opts=()):
    """Each label tshark shows for a field of our protocols (-T pdml's showname) is the line
    `scaleup dump -v` prints for that field in that frame: where the plugin leaves a label to
    Wireshark, which makes it from the hf only when it is shown, Wireshark's must be the
    library's (bits drawn alike, a value without names, hex digits alike)."""
    want = dump_labels(pcap, *dump_opts)
    pdml = ET.fromstring(tshark(*NO_ANALYSIS, *opts, "-r", pcap, "-T", "pdml").stdout)
    labels = 0
    for packet in pdml.iter("packet"):
        num = int(next(f.get("show") for f in packet.iter("field") if f.get("name") == "num"))
        for f in packet.iter("field"):
            name = f.get("name") or ""
            if name.split(".")[0] not in OURS or name.startswith(PLUGIN_ONLY + EXPERTS):
                continue
            label = unbracketed(f.get("showname") or "")
            check((name, label) in want.get(num, ()),
                  f"{os.path.basename(pcap)} frame {num}: {name} is {label!r} in tshark; dump -v: "
                  f"{sorted(l for n, l in want.get(num, ()) if n == name)}")
            labels += 1
    check(labels > 0, f"{pcap}: no field of ours in tshark's tree")
    print(f"{os.path.basename(pcap)}: {labels} labels as dump -v prints them")
    return labels


def case_labels():
    """The labels of every kind of field: every encapsulation's headers, a session's commands
    and padding, Tofu's and RDMA's headers, damaged frames."""
    basic, _ = capture("basic", "basic", "--count", "6")
    compare_labels(basic)
    session, _ = lossy_session("session-afh1-vlan-shim", "--encap", "afh1-vlan-shim",
                               commands=200)
    compare_labels(session)
    afh2, _ = capture("traffic-afh2", "traffic", "--pattern", "uniform", "--encap",
                      "afh2,afh2c,lite", "--link", "afh2")
    compare_labels(afh2)
    rdma, _ = capture("rdma", "rdma", "--transfers", "3", "--loss", "0.01", "--seed", "5")
    compare_labels(rdma)
    damaged = os.path.join(TMP, "basic-damaged.pcap")
    run([EDITCAP, "-E", "0.02", "--seed", "1", "-F", "pcap", basic, damaged])
    compare_labels(readable(damaged))


def with_fcs(src, name):
    """A copy of the pcap `src` whose frames end in their FCS, as some capture hardware records
    them."""
    pcap = os.path.join(TMP, name)
    with open(src, "rb") as f:
        data = f.read()
    out, i = bytearray(data[:24]), 24
    while i < len(data):
        sec, usec, incl, _ = struct.unpack("<IIII", data[i:i + 16])
        pkt = data[i + 16:i + 16 + incl]
        pkt += struct.pack("<I", zlib.crc32(pkt) & 0xFFFFFFFF)
        out += struct.pack("<IIII", sec, usec, len(pkt), len(pkt)) + pkt
        i += 16 + incl
    with open(pcap, "wb") as f:
        f.write(out)
    return readable(pcap)


def case_fields_fcs():
    """Ethernet frames that end in their FCS, as some capture hardware records them."""
    src, _ = capture("nofcs", "basic", "--count", "4")
    frames = compare_fields(with_fcs(src, "fcs.pcap"))
    check(all("eth.fcs" in f for f in frames), "dump finds every FCS")


def ns3_pcaps(encap, xpus=3):
    """The pcaps the ns-3 module's devices write (sue-fabric, one port per XPU, lossy links),
    or None when ns3/ is not built."""
    example = os.path.join(BUILD_DIR or "", "ns3", "sue-fabric")
    if not os.path.exists(example):
        return None
    d = os.path.join(TMP, "ns3-" + encap)
    os.makedirs(d, exist_ok=True)
    run([example, f"--encap={encap}", f"--xpus={xpus}", "--ports=1", "--commands=60",
         "--loss=0.02", f"--pcap={d}"])
    return [os.path.join(d, f"xpu-{n}-0.pcap") for n in range(xpus)]


def case_fields_ns3():
    """The pcaps of the ns-3 module's devices (AFH Gen 1 bare and with the shim, UDP): the
    plugin agrees with dump on every field of every frame."""
    for encap in ("udp4", "afh1", "afh1-shim"):
        pcaps = ns3_pcaps(encap)
        if pcaps is None:
            print("ns3/ not built (no libns3-dev): nothing to compare")
            return
        for p in pcaps:
            compare_fields(readable(p))


def case_fields_afh2_link():
    pcap, _ = capture("afh2", "basic", "--link", "afh2", "--encap", "afh2,afh2c,lite")
    frames = compare_fields(pcap)
    check({f["encap"] for f in frames} == {"afh2", "afh2c", "lite"}, "every AFH Gen 2 format")


def case_fields_traffic():
    pcaps = []
    for pattern in ("uniform", "incast", "fig21"):
        pcaps.append(capture("traffic-" + pattern, "traffic", "--pattern", pattern, "--encap",
                             "all")[0])
        pcaps.append(capture("traffic-" + pattern + "-afh2", "traffic", "--pattern", pattern,
                             "--encap", "afh2,afh2c,lite", "--link", "afh2")[0])
    compare_fields_all("traffic", pcaps)


def case_profile_file():
    """The sue.profile_file preference: a vendor's profile file, read as `scaleup dump --profile
    FILE` reads it, its new control fields registered when the preference is applied."""
    default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "profiles",
                           "default.json")
    prof = json.load(open(default))
    for t in prof["types"]:
        if t["name"] == "BARRIER":
            t["name"] = "FENCE"
    prof["types"].append({"code": 0x40, "name": "DOORBELL", "control_units": 2, "data": False,
                          "fields": [{"name": "type", "filter": "sue.cmd.type", "bit": 0,
                                      "width": 8, "type": "hex"},
                                     {"name": "queue", "filter": "sue.cmd.queue", "bit": 8,
                                      "width": 24}]})
    vendor = os.path.join(TMP, "vendor.json")
    json.dump(prof, open(vendor, "w"))
    readable(vendor)
    pcap, _ = capture("traffic-vendor", "traffic", "--pattern", "fig21", "--encap", "all")
    # A barrier and a doorbell for queue 0x0A0B0C in one PDU over UDP.
    pdu = sue_pdu(4, 1, data=bytes([0x12, 0, 0, 7, 0x40, 0x0A, 0x0B, 0x0C]))
    doorbell = write_pcap("doorbell.pcap", [udp4_frame("10.0.0.1", "10.0.0.2", 5000, 5001, pdu)])
    frames, (bell,) = compare_fields_all("vendor", [pcap, doorbell], profile_file=vendor)
    check(any(c.get("sue.cmd.name") == "FENCE" for f in frames for c in f.get("sue.cmds", [])),
          "the vendor's names")
    # What tshark showed for the doorbell, compared above: the file's names and new field.
    got = expected_fields(bell)
    check(got.get("sue.cmd.name") == ["FENCE", "DOORBELL"] and
          got.get("sue.cmd.queue") == [0x0A0B0C], f"tshark with the file: sue.cmd.name "
          f"{got.get('sue.cmd.name')}, sue.cmd.queue {got.get('sue.cmd.queue')}")
    # The labels of the file's fields, registered after the start, as of the shipped ones.
    compare_labels(doorbell, "-o", f"sue.profile_file:{vendor}", dump_opts=("--profile", vendor))
    # A broken file is reported and the enum's profile stays.
    bad = os.path.join(TMP, "bad.json")
    prof["types"][1]["code"] = prof["types"][0]["code"]
    json.dump(prof, open(bad, "w"))
    readable(bad)
    p = tshark("-o", f"sue.profile_file:{bad}", "-r", doorbell, "-T", "fields", "-e",
               "sue.cmd.name")
    check("types[1]" in p.stderr and "the same code" in p.stderr, p.stderr)


def case_fields_tofu():
    # Merged, a Tofu frame is still reassembled from its own capture's slices: dump reads the
    # merged file as the three one after the other, and tshark must read it as dump does.
    compare_fields_all("tofu", [
        capture("tofu-" + mode, "tofu", "--mode", mode, "--frames", "60", "--error-rate",
                "0.0005", "--seed", "3")[0] for mode in ("split", "duplicate", "adaptive")])


def port5000_capture():
    """Generated UDP frames moved to port 5000 on both sides, where nothing but the heuristic
    finds SUE."""
    src, _ = capture("udp", "basic", "--encap", "udp4,udp6")
    moved = os.path.join(TMP, "port5000.pcap")
    with open(src, "rb") as f:
        data = f.read()
    out, i = bytearray(data[:24]), 24
    while i < len(data):
        incl = struct.unpack("<I", data[i + 8:i + 12])[0]
        pkt = bytearray(data[i + 16:i + 16 + incl])
        udp = {0x0800: 14 + 20, 0x86DD: 14 + 40}.get(struct.unpack(">H", pkt[12:14])[0])
        if udp:  # both ports to 5000; a zero UDP checksum is "none" over IPv4 only
            pkt[udp:udp + 4] = struct.pack(">HH", 5000, 5000)
            if pkt[12:14] == b"\x08\x00":
                pkt[udp + 6:udp + 8] = b"\0\0"
        out += data[i:i + 16] + pkt
        i += 16 + incl
    with open(moved, "wb") as f:
        f.write(out)
    return readable(moved)


def case_udp_port():
    """SUE on another UDP port: the heuristic finds it; without the heuristic, the port
    preference or Decode As does. The Lua dissector's heuristic goes by the plugin's name."""
    moved = port5000_capture()
    count = len(jsonl(scaleup("dump", "--json", moved).stdout))
    for name, runner in (("plugin", tshark), ("Lua", lua)):
        def sue_frames(*opts):
            return len(runner(*opts, "-r", moved, "-Y", "sue.rh.ver", "-T", "fields", "-e",
                              "frame.number").stdout.split())

        check(sue_frames() == count, f"{name}: the heuristic finds SUE on port 5000")
        check(sue_frames("--disable-heuristic", "sue_udp") == 0, f"{name}: without it, UDP only")
        check(sue_frames("--disable-heuristic", "sue_udp", "-o", "sue.udp.port:5000") == count,
              f"{name}: the port preference")
        check(sue_frames("--disable-heuristic", "sue_udp", "-d", "udp.port==5000,sue") == count,
              f"{name}: Decode As")


def case_afh2_heuristic():
    """AFH Gen 2 on an Ethernet link: the afh2_eth heuristic takes it before Ethernet; disabled,
    Ethernet reads every frame, in the plugin and in Lua alike. No AFH Gen 2 field then, and a
    frame of the normal format, whose header is Ethernet's addresses and the SUE Ethertype, is
    SUE after Ethernet (AFH Gen 1: the addresses hold the XPU ids)."""
    pcap, _ = capture("afh2-eth", "basic", "--encap", "afh2,afh2c,lite", "--count", "30")
    want = jsonl(scaleup("dump", "--json", pcap).stdout)
    normal = {f["frame"] for f in want if f["encap"] == "afh2"}
    check(normal and len(normal) < len(want), "normal and compressed frames")
    fields = ("frame.number", "frame.protocols", "afh2.src_xpu", "sue.rh.npsn")
    ask = [a for f in fields for a in ("-e", f)]
    ours = ("afh2", "afh2c", "sue_lite")
    for name, runner in (("plugin", tshark), ("Lua", lua)):
        on = [r.split("\t") for r in runner("-r", pcap, "-T", "fields", *ask).stdout.splitlines()]
        check(len(on) == len(want) and all(set(r[1].split(":")) & set(ours) for r in on),
              f"{name}: the heuristic takes every frame: {on[:3]}")
        off = [r.split("\t") for r in runner("--disable-heuristic", "afh2_eth", "-r", pcap, "-T",
                                              "fields", *ask).stdout.splitlines()]
        check(len(off) == len(want), f"{name}: {len(off)} frames")
        for number, protocols, afh2_src, npsn in off:
            check(not set(protocols.split(":")) & set(ours) and not afh2_src,
                  f"{name}, afh2_eth disabled: frame {number} is {protocols}, afh2.src_xpu "
                  f"{afh2_src!r}")
            if int(number) in normal:
                check(protocols == "eth:ethertype:sue" and npsn ==
                      str(want[int(number) - 1]["sue.rh.npsn"]),
                      f"{name}, afh2_eth disabled: frame {number}: {protocols}, npsn {npsn}")
    print(f"{len(want)} frames: AFH Gen 2 with afh2_eth, Ethernet without, plugin and Lua alike")


def ones_complement(data):
    data += b"\0" * (len(data) % 2)
    total = sum(struct.unpack(f">{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def vxlan(frame):
    """`frame` inside Ethernet + IPv4 + UDP 4789 + VXLAN, built by hand."""
    inner = struct.pack(">BBHI", 0x08, 0, 0, 42 << 8) + frame
    udp = struct.pack(">HHHH", 49152, 4789, 8 + len(inner), 0) + inner
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                               bytes([192, 0, 2, 1]), bytes([192, 0, 2, 2])))
    ip[10:12] = struct.pack(">H", ones_complement(bytes(ip)))
    return bytes.fromhex("001122334455" "001122334466" "0800") + bytes(ip) + udp


def vxlan_capture():
    """A generated capture and the same frames each inside VXLAN."""
    src, _ = capture("plain", "basic", "--count", "3")
    wrapped = os.path.join(TMP, "vxlan.pcap")
    with open(src, "rb") as f:
        data = f.read()
    out, i = bytearray(data[:24]), 24
    while i < len(data):
        sec, usec, incl, _ = struct.unpack("<IIII", data[i:i + 16])
        pkt = vxlan(data[i + 16:i + 16 + incl])
        out += struct.pack("<IIII", sec, usec, len(pkt), len(pkt)) + pkt
        i += 16 + incl
    with open(wrapped, "wb") as f:
        f.write(out)
    return src, readable(wrapped)


def case_tunnel():
    """Frames inside VXLAN: Wireshark hands the plugin bytes that are not the captured frame,
    which it dissects on their own. Our fields must read as `scaleup dump` reads the frames
    before they were wrapped."""
    src, wrapped = vxlan_capture()
    frames = merged(jsonl(scaleup("dump", "--json", src).stdout))
    ours = sorted({k for f in frames for k in expected_fields(f)
                   if k.split(".")[0] in ("sue", "sue_lite", "afh1", "afh2", "afh2c")})
    args = ["-r", wrapped, "-T", "fields", "-E", "occurrence=a", "-E", f"aggregator={AGG}"]
    for k in ours:
        args += ["-e", k]
    lines = tshark(*args).stdout.splitlines()
    check(len(lines) == len(frames), "one line per frame")
    for f, line in zip(frames, lines):
        want = expected_fields(f)
        for k, text in zip(ours, line.split("\t")):
            got = [normalise(k, t) for t in text.split(AGG)] if text else []
            check(got == want.get(k, []), f"frame {f['frame']} ({f['encap']}) in VXLAN: {k} "
                  f"is {got}, dump of the frame itself {want.get(k, [])}")
    print(f"{len(frames)} frames in VXLAN, {len(ours)} filter names agree")


def fragments_capture():
    """SUE PDUs of 4000 bytes in IPv4 and IPv6 fragments, shuffled; and the fragments."""
    sys.path.insert(0, "/usr/lib/python3/dist-packages")
    import random
    from scapy.all import (IP, UDP, Ether, IPv6, IPv6ExtHdrFragment, Raw, fragment, fragment6,
                           wrpcap)
    frames = []
    for i in range(4):
        rh = struct.pack(">II", (2 << 28) | (9 << 16) | (500 + i), (1 << 30) | (4 << 16))
        body = rh + bytes((i + k) & 0xFF for k in range(4000))
        pdu = body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
        udp = UDP(sport=50001, dport=50001) / Raw(pdu)
        if i % 2:
            frames += fragment6(IPv6(src="fd00::1", dst="fd00::2") /
                                IPv6ExtHdrFragment(id=0x7000 + i) / udp, 1280)
        else:
            frames += fragment(IP(src="10.0.0.1", dst="10.0.0.2", id=0x700 + i) / udp,
                               fragsize=1480)
    random.Random(4).shuffle(frames)
    frames = [Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / f for f in frames]
    for n, f in enumerate(frames):
        f.time = 1700000000 + n * 0.000001
    pcap = os.path.join(TMP, "fragments.pcap")
    wrpcap(pcap, frames)
    return readable(pcap), frames


def case_ip_fragments():
    """SUE PDUs of 4000 bytes in IPv4 and IPv6 fragments (scapy's fragment and fragment6),
    shuffled: Wireshark reassembles them (ip.defragment, ipv6.defragment) and hands the plugin
    the whole UDP payload, found by the heuristic. The PDUs appear in the frames that complete
    their datagrams, with the RH fields `scaleup dump` shows there."""
    pcap, frames = fragments_capture()
    ours = {f["frame"]: f["sue.rh.npsn"]
            for f in jsonl(scaleup("dump", "--json", "--udp-port", "50001", pcap).stdout)
            if "sue.rh.npsn" in f}
    check(sorted(ours.values()) == [500, 501, 502, 503], f"dump: {ours}")
    # Display filters see a reassembled datagram's layers as tshark does: the filters' frames
    # and the PDUs' fields in one tshark run.
    filters = ("udp", "sue && udp.port == 50001", "ip.src == 10.0.0.1 && sue.rh.npsn",
               "ipv6 && sue.rh.npsn > 500", "ip.flags.mf == 1 || ipv6.fraghdr.more")
    kept_by, rows = tapped(pcap, filters, ("frame.number", "sue.rh.npsn", "sue.rcrc.status"))
    check(len(rows) == len(frames), f"tshark shows {len(rows)} frames of {len(frames)}")
    pdus = [row for row in rows if row[1]]
    theirs = {int(n): int(p) for n, p, _ in pdus}
    check(theirs == ours, f"tshark shows the PDUs in frames {theirs}, dump in {ours}")
    check(all(status in ("good", "0") for _, _, status in pdus), f"R-CRC: {pdus}")
    for flt, their in zip(filters, kept_by):
        check(dump_keeps(pcap, flt, their, "--udp-port", "50001"), f"-Y '{flt}' keeps no frame")
    print(f"{len(frames)} fragments, {len(ours)} PDUs reassembled in the same frames")


def udp4_frame(src, dst, sport, dport, payload):
    """Ethernet + IPv4 + UDP around `payload`, built by hand (UDP checksum 0: none, IPv4)."""
    udp = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                               bytes(map(int, src.split("."))), bytes(map(int, dst.split(".")))))
    ip[10:12] = struct.pack(">H", ones_complement(bytes(ip)))
    return bytes.fromhex("001122334455" "001122334466" "0800") + bytes(ip) + udp


def write_pcap(name, frames):
    """A microsecond pcap of Ethernet frames, one every millisecond."""
    path = os.path.join(TMP, name)
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for i, f in enumerate(frames):
        out += struct.pack("<IIII", 1_700_000_000, 1000 * i, len(f), len(f)) + f
    with open(path, "wb") as f:
        f.write(out)
    return readable(path)


def sue_pdu(xpuid, npsn, op=2, apsn=0, data=b"\xaa", good=True, vc=0):
    """RH (R2 Table 5, version 0) + data + R-CRC (CRC-32 of the rest; flipped if not good)."""
    rh = struct.pack(">II", (op << 28) | (xpuid << 16) | npsn, (vc << 30) | apsn)
    crc = zlib.crc32(rh + data) ^ (0 if good else 1)
    return rh + data + struct.pack(">I", crc)


def tagged(frame, *tags):
    """An Ethernet frame with VLAN tags (TPID, VLAN id) after its addresses."""
    return frame[:12] + b"".join(struct.pack(">HH", tpid, vid) for tpid, vid in tags) + frame[12:]


def csv_capture():
    """Frames built here whose fields occur once, several times or not at all: PDUs of three
    barriers and of one (sue.cmd.*), an ACK of none, two 802.1Q tags and one (vlan.id), a
    datagram that is not SUE."""
    a, b = "10.0.0.1", "10.0.0.2"
    barriers = lambda *tags: b"".join(bytes([0x12, 0, 0, t]) for t in tags)
    three = udp4_frame(a, b, 40000, LO_PORT, sue_pdu(7, 1, data=barriers(7, 8, 9)))
    return write_pcap("csv.pcap", [
        three,
        tagged(udp4_frame(a, b, 40000, LO_PORT, sue_pdu(7, 2, data=barriers(1, 2))),
               (0x8100, 100), (0x8100, 200)),
        tagged(udp4_frame("10.0.0.3", b, 40001, LO_PORT, sue_pdu(9, 5, data=barriers(3))),
               (0x8100, 300)),
        udp4_frame(b, a, LO_PORT, 40000, sue_pdu(20, 9, op=0, apsn=2, data=b"")),
        udp4_frame(a, b, 12345, 54321, b"not a PDU, a datagram"),
        three])


def tshark_writes_escape_option(pcap):
    """Whether this tshark has -E escape= (Wireshark 4.2 and later), and with it the escapes
    of later tshark: a quote doubled within quotes, a backslash and, unquoted, the separator
    escaped."""
    p = tshark("-E", "escape=y", "-r", pcap, "-c", "1", "-T", "fields", "-e", "frame.number",
               expect=None)
    print(f"this tshark {'has' if p.returncode == 0 else 'has not'} -E escape=")
    return p.returncode == 0


def column_text_40(s):
    """A label in a -T fields column as tshark 4.0 writes it."""
    for c, e in (("\b", "b"), ("\f", "f"), ("\n", "n"), ("\r", "r"), ("\t", "t")):
        s = s.replace(c, "\\" + e)
    return s


def column_text_44(s, layout):
    """A label in a -T fields column as tshark 4.4 writes it under -E `layout` (a dict of the
    options given): wsutil's ws_escape_csv as epan/print.c calls it."""
    quote = {"d": '"', "s": "'"}.get(layout.get("quote", "n"), "")
    sep = {"/t": "\t", "/s": " "}.get(layout.get("separator", "/t"), layout.get("separator"))
    escape = layout.get("escape", "y") == "y"
    c_escapes = {"\a": "a", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t",
                 "\v": "v", "\\": "\\", "\0": "0"} if escape else {"\0": "0"}
    out = []
    for c in s:
        if c in c_escapes:
            out.append("\\" + c_escapes[c])
        elif quote and c == quote:
            out.append(c + c)
        elif not quote and c in (sep, "\\"):
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def case_fields_csv():
    """`dump -T fields` writes what tshark writes, byte for byte, with its -E options: quote
    d, s and n against occurrence f, l and a (all nine pairs), the aggregators ',', ';' and
    /s, the separators ',', /t and /s, the header line and the byte order mark, and tshark's
    defaults (no -E); the same fields of the same capture, each occurring once, several times
    (the commands of a PDU, stacked VLAN tags) or not at all; and names with the characters
    tshark escapes, a quote and the separator, from a profile file."""
    pcap = csv_capture()
    fields = ["frame.number", "vlan.id", "ip.src", "udp.srcport", "sue.rh.npsn", "sue.cmd.name",
              "sue.cmd.tag", "frame.len"]
    es = [x for f in fields for x in ("-e", f)]
    runs = [[],  # tshark's defaults: tab, every occurrence joined by ',', no quotes, no header
            ["quote=d", "occurrence=f", "separator=,", "header=y"],
            ["quote=d", "occurrence=l", "separator=,", "aggregator=;"],
            ["quote=d", "occurrence=a", "separator=,", "bom=y", "header=y"],
            ["quote=s", "occurrence=f", "separator=,", "aggregator=;"],
            ["quote=s", "occurrence=l", "separator=/s"],
            ["quote=s", "occurrence=a", "separator=,", "aggregator=;"],
            ["quote=n", "occurrence=f", "separator=,"],
            ["quote=n", "occurrence=l", "separator=,", "aggregator=;"],
            ["quote=n", "occurrence=a", "separator=/t", "aggregator=/s", "header=y"]]
    for run_ in runs:
        opts = [x for o in run_ for x in ("-E", o)]
        theirs = tshark("-r", pcap, "-T", "fields", *es, *opts).stdout
        ours = scaleup("dump", pcap, "-T", "fields", *es, *opts).stdout
        check(ours == theirs, f"-E {run_}: dump wrote\n{ours}\ntshark\n{theirs}")
        if not run_:
            rows = theirs.splitlines()
    # A vendor's profile file that names the barrier with the characters tshark escapes or
    # quotes: a quote of either kind, a tab, a newline, a vertical tab, a backslash, the
    # separator, and a control character it leaves as it is.
    prof = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "profiles",
                                       "default.json")))
    prof["name"] = "odd names"
    odd_name = 'BAR"RI\tER\n,\x01\'\\\v'
    for t in prof["types"]:
        if t["name"] == "BARRIER":
            t["name"] = odd_name
    odd = os.path.join(TMP, "odd.json")
    json.dump(prof, open(odd, "w"))
    readable(odd)
    escapes_44 = tshark_writes_escape_option(pcap)
    odd_runs = [["quote=d", "separator=,"], ["quote=s", "separator=,"],
                ["quote=n", "separator=,", "aggregator=;"], ["separator=/s"]]
    if escapes_44:
        # Unquoted, the aggregator is escaped where it is the separator (tshark escapes the
        # joined values): what 4.0's text cannot be taken to, where the two look alike.
        odd_runs += [["quote=n", "separator=,"], ["quote=d", "separator=,", "escape=n"],
                     ["quote=n", "separator=,", "aggregator=;", "escape=n"]]
    for run_ in odd_runs:
        opts = [x for o in run_ for x in ("-E", o)]
        theirs = tshark("-o", f"sue.profile_file:{odd}", "-r", pcap, "-T", "fields", *es,
                        *opts).stdout
        ours = scaleup("dump", "--profile", odd, pcap, "-T", "fields", *es, *opts).stdout
        layout = dict(o.split("=") for o in run_)
        want = column_text_44(odd_name, layout)
        if not escapes_44:
            # Wireshark 4.0 left a quote, a backslash and the separator as they are (and \v):
            # its text of the name is taken to what later tshark writes; the rest is compared
            # as it is.
            check(column_text_40(odd_name) in theirs, f"tshark 4.0's text: {theirs}")
            theirs = theirs.replace(column_text_40(odd_name), want)
        check(want in theirs, f"-E {run_}: the name's text {want!r} in tshark's\n{theirs}")
        check(ours == theirs, f"{odd}, -E {run_}: dump wrote\n{ours}\ntshark\n{theirs}")
    # The capture has what the options act on.
    check(rows[0].split("\t")[5:7] == ["BARRIER,BARRIER,BARRIER", "7,8,9"], f"commands: {rows}")
    check(rows[1].split("\t")[1] == "100,200", f"two tags: {rows[1]}")
    check(rows[4].split("\t")[4:7] == ["", "", ""], f"not SUE: {rows[4]}")
    print(f"{len(runs) + 1} -E combinations, {len(rows)} frames: dump writes what tshark writes")


def uet_pds(ptype, next_header, psn):
    """An Ultra Ethernet Transport packet as packet-uet.c reads it (UE 1.0): the PDS prologue
    type(5) next header(4) flags(7), a RUD/ROD request's clear PSN offset, PSN, source and
    destination PDC ids, a standard SES request header (44 bytes), 16 bytes of data."""
    prologue = struct.pack(">H", ptype << 11 | next_header << 7)
    pds = struct.pack(">hIHH", 0, psn, 0x11, 0x22)
    ses = struct.pack(">BBHB3sHHQIQQI", 0x01, 0x03, 7, 0, b"\0\0\0", 0, 0, 0, 0, 0, 0, 16)
    return prologue + pds + ses + bytes(range(0x40, 0x50))


def info_and_status(pcap, *opts, also=(), conv=False):
    """Per frame: protocols, R-CRC status, info column, and the fields `also`. The payloads
    are opaque (profile none). With `conv`, also the conversation table (-z conv,sue) from the
    same run, which tshark writes after the frames."""
    out = tshark("-o", "sue.profile:none", *opts, "-r", pcap, "-T", "fields", "-e",
                 "frame.protocols", "-e", "sue.rcrc.status", "-e", "_ws.col.Info",
                 *(x for name in also for x in ("-e", name)),
                 *(("-z", "conv,sue") if conv else ())).stdout
    lines = out.splitlines()
    # The table begins with a rule of '=' (tshark's tap output); a frame's line holds tabs.
    end = next((i for i, line in enumerate(lines) if line.startswith("====")), len(lines))
    rows = [line.split("\t") for line in lines[:end] if line]
    check(all(len(r) == 3 + len(also) for r in rows), f"tshark's lines: {lines[:end]}")
    return (rows, "\n".join(lines[end:])) if conv else rows


def is_sue(protocols):
    return "sue" in protocols.split(":")


def uet_capture():
    """UET packets on 4793 (one the RH test alone would take), then SUE on 40000 -> 50000: a
    damaged PDU, a good one, a damaged one."""
    a, b = "192.168.1.10", "192.168.1.20"
    uet = [uet_pds(2, 3, 0x1000), uet_pds(3, 3, 0x1000), uet_pds(7, 0, 5), uet_pds(2, 3, 77)]
    check(uet[0][0] == 0x11 and (uet[0][4] & 0x3C) == 0, "the lookalike")
    frames = []
    for i, p in enumerate(uet):
        frames += [udp4_frame(a, b, 50000 + i, 4793, p), udp4_frame(b, a, 4793, 50000 + i, p)]
    # SUE on 40000 -> 50000: a damaged PDU before the flow is known (UDP), then a good one (the
    # heuristic), then a damaged one: SUE by its conversation, with a bad R-CRC.
    frames += [udp4_frame(a, b, 40000, 50000, sue_pdu(7, 1, good=False)),
               udp4_frame(a, b, 40000, 50000, sue_pdu(7, 2)),
               udp4_frame(a, b, 40000, 50000, sue_pdu(7, 3, good=False))]
    return write_pcap("uet.pcap", frames)


def case_uet():
    """Ultra Ethernet Transport on 4793, its port in Wireshark (packet-uet.c): never SUE, the
    PDU that reads as RH version 0 with its reserved bits zero included (the R-CRC tells); and
    no SUE port by default: the heuristic finds SUE elsewhere, and binds its conversation."""
    pcap = uet_capture()
    rows = info_and_status(pcap)
    check(len(rows) == 11, f"{len(rows)} frames")
    for i, (protocols, status, info) in enumerate(rows[:8]):
        check(not is_sue(protocols) and not status, f"UET frame {i + 1} taken: {protocols}")
    check(not is_sue(rows[8][0]), f"before the flow is known: {rows[8]}")
    check(is_sue(rows[9][0]) and rows[9][1] == "good", f"the heuristic: {rows[9]}")
    check(is_sue(rows[10][0]) and rows[10][1] == "bad", f"the bound flow: {rows[10]}")
    d = jsonl(scaleup("dump", "--json", "--profile", "none", pcap).stdout)
    check([f["encap"] for f in d] == ["ipv4/udp"] * 9 + ["udp4"] * 2, f"dump: {d}")
    s = json.loads(scaleup("stats", "--json", "--profile", "none", pcap).stdout)
    check(s["analysed"] == 1 and s["left_out"] == 1, f"stats: {s}")
    # Decode As and the port preference still force a port.
    forced = info_and_status(pcap, "-o", "sue.udp.port:4793")
    check(all(is_sue(r[0]) for r in forced[:8]), "the port preference forces SUE")


def case_xpu_map():
    """Over IP the info column and the conversation table show the addresses, the RH's xpuid as
    the source XPU; a destination XPU only from the sue.xpu_map preference."""
    a, b = "192.168.1.10", "192.168.1.20"
    frames = [udp4_frame(a, b, 50000, 50001, sue_pdu(7, n)) for n in (1, 2, 3)]
    frames.append(udp4_frame(b, a, 50001, 50000, sue_pdu(20, 9, op=0, apsn=3, data=b"")))
    pcap = write_pcap("ordinary.pcap", frames)
    # Each preference set in one run: the frames' lines, then the conversation table.
    rows, conv = info_and_status(pcap, conv=True)
    check(len(rows) == 4, f"{len(rows)} frames")
    check(f"XPU 7 \u2192 {b} VC 0 PSN 1 Len=1" in rows[0][2], f"info: {rows[0]}")
    check(f"XPU 20 \u2192 {a} VC 0 ACK 3" in rows[3][2], f"info: {rows[3]}")
    check(all("65556" not in r[2] for r in rows), "no made-up XPU")
    check(f"{a} VC 0" in conv and f"{b} VC 0" in conv, conv)
    xmap = os.path.join(TMP, "xpus.txt")
    with open(xmap, "w") as f:
        f.write(f"# the lab\n{a} 7\n{b} 0x14\n")
    readable(xmap)
    rows, conv = info_and_status(pcap, "-o", f"sue.xpu_map:{xmap}", also=("sue.dst_xpu",),
                                 conv=True)
    check(len(rows) == 4, f"{len(rows)} frames with the map")
    check("XPU 7 \u2192 20 VC 0 PSN 1" in rows[0][2], f"info with the map: {rows[0]}")
    check("XPU 20 \u2192 7 VC 0 ACK 3" in rows[3][2], f"info with the map: {rows[3]}")
    dst = [r[3] for r in rows]
    check(dst == ["20", "20", "20", "7"], f"sue.dst_xpu {dst}")
    check("XPU 7 VC 0" in conv and "XPU 20 VC 0" in conv, conv)
    # dump and the plugin agree field by field with the same map.
    want = jsonl(scaleup("dump", "--json", "--profile", "none", "--xpu-map", xmap, pcap).stdout)
    check([f.get("sue.dst_xpu") for f in want] == [20, 20, 20, 7], f"dump: {want}")


def case_fields_rdma():
    pcap, _ = capture("rdma", "rdma", "--transfers", "6", "--loss", "0.01", "--seed", "5")
    compare_fields(pcap)


def lossy_session(name="session", *extra, commands=3000):
    path = os.path.join(TMP, name + ".pcap")
    out = scaleup("gen", "session", "-o", path, "--json", "--xpus", "4", "--loss", "0.05",
                  "--commands", str(commands), "--seed", "7", *extra).stdout
    readable(path)
    return path, json.loads(out)


def failover_session(encap):
    """XPU 2's only link down from the start: the others' failover requests probe it (UDP port
    61794, or the shim's next header 254) until it is declared unreachable."""
    path = os.path.join(TMP, "failover-" + encap + ".pcap")
    scaleup("gen", "session", "-o", path, "--xpus", "4", "--fail-link", "2:0:0", "--commands",
            "300", "--seed", "5", "--encap", encap)
    readable(path)
    return path


def case_fields_session():
    lossy = [lossy_session("session-" + encap, "--encap", encap)[0]
             for encap in ("udp4", "afh1-vlan-shim", "afh2c")]
    failover = ("udp4", "afh1-shim", "afh2c")
    parts = compare_fields_all("sessions", [*lossy, *map(failover_session, failover)])
    # tshark showed sue.failover.type and sue.rh.ver in the frames where dump shows them (both
    # are keys of dump's objects, and so compared on every frame).
    for encap, frames in zip(failover, parts[len(lossy):]):
        shown = [expected_fields(f) for f in frames]
        check(any("sue.failover.type" in f for f in shown), f"{encap}: no failover message")
        check(not any("sue.failover.type" in f and "sue.rh.ver" in f for f in shown),
              f"{encap}: a failover message read as an RH")


ANALYSIS = ("retransmission", "duplicate", "out_of_order", "gap", "nack", "window_full")


def field_rows(pcap, fields, *opts):
    """Each frame's values of `fields` (several occurrences joined by AGG), by frame number: one
    tshark run. A field without a value (the expert infos, the analysis' flags) prints as 1
    where the frame has it."""
    args = [*opts, "-r", pcap, "-T", "fields", "-E", f"aggregator={AGG}", "-e", "frame.number"]
    for name in fields:
        args += ["-e", name]
    rows = {}
    for line in tshark(*args).stdout.splitlines():
        number, *values = line.split("\t")
        rows[int(number)] = values
    return rows


def frames_with(rows, fields):
    """For each of `fields`, the first columns of field_rows' rows, the frames that have it."""
    return {name: [n for n, values in rows.items() if values[i]] for i, name in enumerate(fields)}


def present_frames(pcap, fields, *opts):
    """For each field, the frames that have it, in order."""
    return frames_with(field_rows(pcap, fields, *opts), fields)


def analysis_rows(pcap, *extra, also=()):
    """The analysis' values of every frame, and for each flag of ANALYSIS the frames with it;
    with `also`, a third result from the same tshark run: each frame's values of those fields."""
    values = ("sue.analysis.connection", "sue.analysis.acked_connection", "sue.analysis.ack_rtt",
              "sue.analysis.acks_frame", "sue.analysis.in_flight", "sue.analysis.missing",
              "sue.analysis.first_frame")
    rows = field_rows(pcap, (*values, *("sue.analysis." + f for f in ANALYSIS), *also), *extra)
    flags = {name: [n for n, cols in rows.items() if cols[len(values) + i]]
             for i, name in enumerate(ANALYSIS)}
    result = ({n: cols[:len(values)] for n, cols in rows.items()}, flags)
    if not also:
        return result
    return (*result, {n: cols[len(values) + len(ANALYSIS):] for n, cols in rows.items()})


def case_analysis_session():
    pcap, harness = lossy_session()
    stats = json.loads(scaleup("stats", "--json", pcap).stdout)
    rows, flags = analysis_rows(pcap)
    # The plugin and `scaleup stats` run the same analysis: the same counts.
    for name, key in (("retransmission", "retransmissions"), ("duplicate", "duplicates"),
                      ("out_of_order", "out_of_order"), ("gap", "gaps"), ("nack", "nacks"),
                      ("window_full", "window_full")):
        check(len(flags[name]) == stats[key], f"{name}: {len(flags[name])} frames in tshark, "
              f"{stats[key]} in stats")
    rtts = sorted(round(float(r[2]) * 1e9) for r in rows.values() if r[2])
    check(len(rtts) == stats["ack_rtt_us"]["count"], "one ACK RTT per ACK that covers a PDU")
    check(rtts and round(rtts[-1] / 1000, 3) == stats["ack_rtt_us"]["max"],
          f"max ACK RTT {rtts[-1] if rtts else None} ns, stats {stats['ack_rtt_us']['max']} us")
    # A lossy session shows what go-back-N does about loss; its harness counted the same.
    check(flags["retransmission"] and flags["nack"], "a lossy session has retransmissions "
          "and NACKs")
    check(stats["nacks"] == harness["nacks"], f"NACKs: {stats['nacks']} seen, harness sent "
          f"{harness['nacks']}")
    check(stats["acks"] == harness["acks"], f"ACKs: {stats['acks']}, harness {harness['acks']}")
    # The harness counts PDUs queued again; one whose ACK overtakes it is not sent.
    check(0 < stats["retransmissions"] <= harness["retransmissions"],
          f"retransmissions: {stats['retransmissions']} seen, harness "
          f"{harness['retransmissions']}")
    check(stats["pdus"] + harness["acks"] + harness["nacks"] >= harness["frames"],
          "every frame is a PDU or carries an ACK/NACK")
    # Every retransmission names the frame that first sent its PSN (or was acknowledged).
    for n in flags["retransmission"]:
        first = rows[n][6]
        check(first or n in flags["duplicate"], f"frame {n}: no first transmission")
        if first:
            check(int(first) < n, f"frame {n}: first sent in later frame {first}")
    print(f"{len(rows)} frames; " + ", ".join(f"{k} {len(v)}" for k, v in flags.items()) +
          f"; {len(rtts)} ACK RTTs")


# The conformance rules' expert infos (dissect/conformance.hpp): one per rule, sue.check.<id>.
RULE_IDS = ("psn.next", "gbn.resend", "nack.once", "ack.past_gap", "ack.monotonic", "ack.unsent",
            "pdu.one_dst", "pdu.one_vc", "cmd.profile", "pdu.size", "vc.range", "rcrc.good",
            "pad.after_rcrc", "reserved.zero", "rh.version", "partition.allowed", "lite.no_rh",
            "lite.size", "cbfc.credit", "pfc.paused", "llr.replay")


def relabel_interface(src, dst, old, new):
    """Copies pcapng `src` (little-endian, as `scaleup gen` writes it) to `dst` with interface
    `old` renumbered `new` (at least the count of its interfaces): the numbers between are
    described as copies of `old` that carry no frame."""
    with open(src, "rb") as f:
        data = f.read()
    blocks, at = [], 0
    while at < len(data):
        kind, length = struct.unpack_from("<II", data, at)
        blocks.append((kind, data[at:at + length]))
        at += length
    idbs = [b for k, b in blocks if k == 1]  # Interface Description Blocks, in number order
    check(old < len(idbs) <= new, f"{src}: {len(idbs)} interfaces")
    out = []
    for kind, b in blocks:
        if kind == 6 and struct.unpack_from("<I", b, 8)[0] == old:  # its Enhanced Packet Blocks
            b = b[:8] + struct.pack("<I", new) + b[12:]
        out.append(b)
        if kind == 1 and b is idbs[-1]:
            out.extend([idbs[old]] * (new - len(idbs) + 1))
    with open(dst, "wb") as f:
        f.write(b"".join(out))


def checked_frames(pcap, *opts):
    """The frames that carry each rule's sue.check expert info, by rule id."""
    frames = present_frames(pcap, ["sue.check." + r for r in RULE_IDS], *opts)
    return {r: frames["sue.check." + r] for r in RULE_IDS}


def case_check_rules():
    """A conformant capture shows no sue.check expert info; a capture of an endpoint that
    breaks a rule once (gen session --misbehave) shows that rule's on the frame `scaleup check`
    names, and no other rule's."""
    pcap, _ = lossy_session()
    check(scaleup("check", pcap).returncode == 0, "the lossy session is conformant")
    fired = {r: f for r, f in checked_frames(pcap).items() if f}
    check(not fired, f"no sue.check expert info on a conformant capture: {fired}")
    for rule in ("ack.unsent", "ack.monotonic", "nack.once", "gbn.resend"):
        pcap, _ = lossy_session("misbehave-" + rule.replace(".", "_"), "--misbehave", rule)
        report = json.loads(scaleup("check", "--json", pcap, expect=3).stdout)
        want = [v["frame"] for r in report["rules"] if r["id"] == rule for v in r["first"]]
        check(len(want) == 1, f"{rule}: scaleup check found {want}")
        # The rules' frames and the expert infos' messages, in one tshark run.
        names = ["sue.check." + r for r in RULE_IDS]
        rows = field_rows(pcap, [*names, "_ws.expert.message"])
        frames = {r: f for r, f in zip(RULE_IDS, frames_with(rows, names).values())}
        check(frames[rule] == want,
              f"{rule}: tshark shows it on frames {frames[rule]}, scaleup check on {want}")
        others = {r: f for r, f in frames.items() if f and r != rule}
        check(not others, f"{rule}: other rules fire in tshark: {others}")
        # The expert info says what was expected and what was seen, as `scaleup check` does.
        text = rows[want[0]][-1]
        check("expected" in text and "seen" in text and rule in text, text[-3000:])
        # Two passes agree with one.
        check(checked_frames(pcap, "-2")[rule] == want, f"{rule}: two passes differ")
    print("sue.check expert infos on the violating frames")
    # A fabric of 4 ports in a pcapng whose interfaces are its planes, PDUs spread over them
    # (unordered): with sue.port_by_interface the plugin tells the planes' connections apart, as
    # `check --port-by-interface` does, and nothing fires; taken as one port, their PSN spaces
    # mix, and the plugin fires the rules `scaleup check` reports.
    path = os.path.join(TMP, "planes.pcapng")
    scaleup("gen", "session", "-o", path, "--xpus", "8", "--ports", "4", "--unordered",
            "--loss", "0.01", "--commands", "3000", "--seed", "4")
    readable(path)
    scaleup("check", "--port-by-interface", path)
    fired = {r: f for r, f in checked_frames(path, "-o", "sue.port_by_interface:TRUE").items() if f}
    check(not fired, f"planes told apart: rules fire: {fired}")
    report = json.loads(scaleup("check", "--json", path, expect=3).stdout)
    violated = {r["id"] for r in report["rules"] if r["violations"]}
    fired = {r for r, f in checked_frames(path).items() if f}
    check(fired and fired == violated, f"planes as one port: tshark {fired}, check {violated}")
    print("4 planes: told apart by interface, conformant; as one port, the same rules fire")
    # Plane 1 on interface 65536, past the last port number: both tools take it as port 65535,
    # still apart from the other planes (a number wrapped to 16 bits would put it on port 0).
    far = os.path.join(TMP, "planes-far.pcapng")
    relabel_interface(path, far, 1, 65536)
    readable(far)
    scaleup("check", "--port-by-interface", far)
    fired = {r: f for r, f in checked_frames(far, "-o", "sue.port_by_interface:TRUE").items() if f}
    check(not fired, f"plane 1 on interface 65536: rules fire: {fired}")
    print("a plane on interface 65536: told apart by both tools")


def case_two_pass():
    pcap, _ = lossy_session()
    one = analysis_rows(pcap)
    two = analysis_rows(pcap, "-2")
    check(one == two, "the second pass must give the first pass's results")
    print(f"{len(one[0])} frames agree between one and two passes")


def case_window_full():
    # A window of 4 fills quickly on a busy connection; the preference reaches the analysis.
    pcap, _ = lossy_session()
    stats = json.loads(scaleup("stats", "--json", "--window", "4", pcap).stdout)
    out = tshark("-o", "sue.window:4", "-r", pcap, "-Y", "sue.analysis.window_full", "-T",
                 "fields", "-e", "frame.number").stdout.split()
    check(stats["window_full"] > 0, "window 4 is reached")
    check(len(out) == stats["window_full"], f"window full: {len(out)} in tshark, "
          f"{stats['window_full']} in stats")


def case_max_connections():
    # Five connections 10.0.0.i -> 10.0.0.100 on SUE's port, two PDUs each, then an ACK back to
    # each: with the limit at 3 the frames of the 4th and 5th (6) are marked and left out, in
    # both passes, as `scaleup stats --max-connections 3` counts them; the rest read as without.
    frames = []
    for psn in (0, 1):
        for i in range(1, 6):
            frames.append(udp4_frame(f"10.0.0.{i}", "10.0.0.100", 5000 + i, 4793, sue_pdu(i, psn)))
    for i in range(1, 6):
        frames.append(udp4_frame("10.0.0.100", f"10.0.0.{i}", 4793, 5000 + i,
                                 sue_pdu(100, 0x7777, op=0, apsn=1, data=b"")))
    pcap = write_pcap("five.pcap", frames)
    limit = ("-o", "sue.profile:none", "-o", "sue.max_connections:3")
    fields = ("-T", "fields", "-e", "frame.number", "-e", "sue.analysis.connection", "-e",
              "sue.analysis.acked_connection", "-e", "sue.analysis.ack_rtt")
    # One pass: the marks beside the analysis' values (the last column), from one run.
    rows = [line.split("\t") for line in tshark(*limit, "-r", pcap, *fields, "-e",
                                                "sue.analysis.not_analysed").stdout.splitlines()]
    marked = [cols[0] for cols in rows if cols[-1]]
    check(marked == ["4", "5", "9", "10", "14", "15"], f"marked: {marked}")
    marked = tshark(*limit, "-2", "-r", pcap, "-Y", "sue.analysis.not_analysed", "-T", "fields",
                    "-e", "frame.number").stdout.split()
    check(marked == ["4", "5", "9", "10", "14", "15"], f"marked, two passes: {marked}")
    stats = json.loads(scaleup("stats", "--json", "--profile", "none", "--max-connections", "3",
                               pcap).stdout)
    check(stats["not_analysed"]["frames"] == 6, stats["not_analysed"])
    # The kept connections' frames are analysed as without a limit.
    with_limit = ["\t".join(cols[:-1]) for cols in rows]
    without = tshark("-o", "sue.profile:none", "-r", pcap, *fields).stdout.splitlines()
    kept = [n - 1 for n in (1, 2, 3, 6, 7, 8, 11, 12, 13)]
    check([with_limit[i] for i in kept] == [without[i] for i in kept],
          f"{with_limit}\n{without}")
    # The preference at 0 is the default: nothing left out.
    none = tshark("-o", "sue.profile:none", "-o", "sue.max_connections:0", "-r", pcap, "-Y",
                  "sue.analysis.not_analysed").stdout
    check(none.strip() == "", none)


OUR_SHORT_NAMES = ("SUE", "SUE Lite", "AFH1", "AFH2", "AFH2c", "Tofu", "RDMA")


def exceptions(malformed, protocols=None):
    """The frames where dissection threw (in one of `protocols`, by short name, or in any), from
    each frame's _ws.malformed column (field_rows): Wireshark's "[Malformed Packet: SUE]" or
    "[Dissector bug, protocol SUE: ...]" item, not the expert infos of the Malformed group,
    which also count as _ws.malformed from Wireshark 4.4."""
    names = "|".join(re.escape(p) for p in protocols or ())
    ours = re.compile(rf"^\[(Malformed Packet: |Dissector bug, protocol )({names})[:\]]")
    thrown = (lambda i: ours.match(i)) if protocols else (
        lambda i: i.startswith(("[Malformed Packet", "[Dissector bug")))
    return [n for n, items in malformed.items() if items and any(thrown(i) for i in
                                                                  items.split(AGG))]


# Our protocols whose frames `scaleup dump` reports errors in: a protocol's column holds its
# tree item's text where the frame has it.
SHOWN = ("sue", "afh1", "afh2", "afh2c", "sue_lite")


def case_corrupted():
    clean, _ = lossy_session()
    pcap = os.path.join(TMP, "corrupted.pcap")
    run([EDITCAP, "-E", "0.01", "--seed", "11", "-F", "pcap", clean, pcap])
    readable(pcap)
    frames = jsonl(scaleup("dump", "--json", pcap).stdout)
    codes = {(e["severity"], e["code"]) for f in frames for e in f["errors"]}
    check(codes, "editcap -E left every frame intact")
    # Which frames are ours, which carry each error's expert info, and what threw: one run.
    names = [f"sue.{severity}.{code}" for severity, code in sorted(codes)]
    rows = field_rows(pcap, [*SHOWN, *names, "_ws.malformed"])
    shown = {n for n, cols in rows.items() if any(cols[:len(SHOWN)])}
    marked = frames_with({n: cols[len(SHOWN):] for n, cols in rows.items()}, names)
    for severity, code in sorted(codes):
        want = {f["frame"] for f in frames if f["frame"] in shown and
                any(e["code"] == code and e["severity"] == severity for e in f["errors"])}
        got = set(marked[f"sue.{severity}.{code}"])
        check(got == want, f"sue.{severity}.{code}: only in tshark: {sorted(got - want)[:20]}, "
              f"only in dump: {sorted(want - got)[:20]}")
        print(f"sue.{severity}.{code}: {len(got)} frames, as dump reports")
    # Whatever the damage, the plugin reads only what the library validated: no exception.
    thrown = exceptions({n: cols[-1] for n, cols in rows.items()}, OUR_SHORT_NAMES)
    check(not thrown, f"exceptions in frames {thrown[:20]}")
    tshark("-r", pcap, "-V")  # the full tree of every frame, once
    # Frames cut by the snapshot length: dissected as far as they go and analysed (their RH
    # was captured), with no exception and no malformed-packet report.
    cut = os.path.join(TMP, "cut.pcap")
    run([EDITCAP, "-s", "64", "-F", "pcap", clean, cut])
    readable(cut)
    rows = field_rows(cut, ["frame.cap_len", "frame.len", "sue", "sue.analysis", "_ws.malformed"])
    cut_rows = {n: cols for n, cols in rows.items() if int(cols[0]) < int(cols[1])}
    shown = [n for n, cols in cut_rows.items() if cols[2]]
    analysed = [n for n, cols in cut_rows.items() if cols[3]]
    thrown = exceptions({n: cols[4] for n, cols in rows.items()})
    check(shown and analysed == shown and not thrown, f"cut frames: {len(shown)} shown, "
          f"{len(analysed)} analysed, {len(thrown)} exceptions")
    print(f"cut frames: {len(shown)} shown and analysed")
    tshark("-r", cut, "-V")


def case_snapshot_flags():
    """The lossy session cut to 64, 80 and 128 bytes a record (editcap -s): the plugin flags the
    same frames (the same frame numbers for each sue.analysis.* flag) and finds the same ACK
    RTTs as on the whole file, and no frame gets an error."""
    whole, _ = lossy_session()
    # A cut PDU has no R-CRC for the heuristic to find SUE by: the port gen writes is named.
    port = ("-o", "sue.udp.port:61793")
    want_rows, want_flags = analysis_rows(whole, *port)
    # The harness captures what the switch receives, so the whole file has no gap; a cut one
    # used to show gaps for PDUs that were on the wire.
    check(want_flags["retransmission"] and want_flags["nack"] and not want_flags["gap"],
          f"the session shows retransmissions and NACKs, no gap: {want_flags}")
    for snap in (64, 80, 128):
        cut = os.path.join(TMP, f"cut{snap}.pcap")
        run([EDITCAP, "-F", "nsecpcap", "-s", str(snap), whole, cut])
        readable(cut)
        # The expert infos' severities too (8388608: PI_ERROR), from the same run.
        rows, flags, severities = analysis_rows(cut, *port, also=("_ws.expert.severity",))
        for name in ANALYSIS:
            check(flags[name] == want_flags[name],
                  f"-s {snap}: sue.analysis.{name}: only cut {sorted(set(flags[name]) - set(want_flags[name]))[:10]}, "
                  f"only whole {sorted(set(want_flags[name]) - set(flags[name]))[:10]}")
        check(rows == want_rows, f"-s {snap}: the analysis values differ from the whole file's")
        errors = [n for n, (sev,) in severities.items() if "8388608" in sev.split(AGG)]
        check(not errors, f"-s {snap}: errors in frames {errors[:10]}")
        print(f"-s {snap}: " + ", ".join(f"{k} {len(v)}" for k, v in flags.items()))
    # No port named: a cut datagram is SUE on a port a whole one showed SUE at an earlier
    # frame, the frames `scaleup dump` takes (a note on the others), on every pass.
    cut = os.path.join(TMP, "cut80.pcap")
    dumped = [json.loads(line) for line in scaleup("dump", "--json", cut).stdout.splitlines()]
    want = [f["frame"] for f in dumped if f["encap"] == "udp4"]
    left = [f["frame"] for f in dumped if f["encap"] != "udp4"]
    check(want and left, f"the cut capture has frames either way: {len(want)}, {len(left)}")
    for passes in ((), ("-2",)):
        got = [int(n) for n in tshark(*passes, "-r", cut, "-Y", "sue", "-T", "fields", "-e",
                                     "frame.number").stdout.split()]
        check(got == want, f"{passes}: only plugin {sorted(set(got) - set(want))[:10]}, "
                           f"only dump {sorted(set(want) - set(got))[:10]}")


def case_stats_json():
    pcap, harness = lossy_session()
    s = json.loads(scaleup("stats", "--json", pcap).stdout)
    check(s["frames"] == harness["frames"], f"frames {s['frames']} vs {harness['frames']}")
    check(s["analysed"] == harness["frames"] and s["left_out"] == 0, "every frame analysed")
    check(s["connection_count"] == len(s["connections"]), "connection count")
    for key in ("pdus", "retransmissions", "duplicates", "nacks", "acks", "gaps", "missing"):
        check(s[key] == sum(c[key] for c in s["connections"]), f"{key}: totals are the sum")
    check(s["nacks"] == harness["nacks"] and s["acks"] == harness["acks"], "ACK and NACK counts")
    check(0 < s["retransmissions"] <= harness["retransmissions"], "retransmissions")
    # 4 XPUs, 2 VCs: at most 4 * 3 * 2 connections, each with RTT percentiles in order.
    check(0 < len(s["connections"]) <= 24, f"{len(s['connections'])} connections")
    for c in s["connections"]:
        r = c["ack_rtt_us"]
        if r["count"]:
            check(r["min"] <= r["p50"] <= r["p90"] <= r["p99"] <= r["max"], f"percentiles {r}")
    text = scaleup("stats", pcap).stdout
    check(f"{s['connection_count']} connections" in text, "the text table")
    scaleup("stats", expect=2)
    scaleup("stats", "--window", "0", pcap, expect=2)
    scaleup("stats", os.path.join(TMP, "missing.pcap"), expect=1)


def case_stats_svg():
    pcap, _ = lossy_session()
    svg = os.path.join(TMP, "psn.svg")
    s = json.loads(scaleup("stats", "--json", "--svg", svg, pcap).stdout)
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    check(root.tag == ns + "svg", f"root element {root.tag}")
    panels, kinds, folded = svg_marks(svg)
    check(len(panels) == s["connection_count"], f"{len(panels)} panels for "
          f"{s['connection_count']} connections")
    check(folded == 0, "a short capture: every event drawn as it was")
    check(kinds.get("first", 0) == s["pdus"] - s["retransmissions"], f"first transmissions {kinds}")
    check(kinds.get("retransmission", 0) == s["retransmissions"], f"retransmissions {kinds}")
    check(kinds.get("nack", 0) == s["nacks"], f"NACKs {kinds}")
    check(kinds.get("ack", 0) > 0, f"ACK staircases {kinds}")


def svg_marks(path):
    """The panels of a `stats --svg` file and, per class, the events its marks stand for (a
    mark of a long connection carries data-n, the events of its time column)."""
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    panels = [g for g in root.iter(ns + "g") if g.get("class") == "connection"]
    events, folded = {}, 0
    for panel in panels:
        for el in panel:
            n = int(el.get("data-n", "1"))
            folded += el.get("data-n") is not None
            events[el.get("class")] = events.get(el.get("class"), 0) + n
    return panels, events, folded


def case_stats_svg_bounded():
    """Beyond 1024 events a connection is drawn in at most 512 time columns, so the SVG's size
    does not grow with the capture; every event is still accounted for."""
    sizes = {}
    # Both beyond 1024 events a connection (the instance packs several commands a PDU).
    for commands in (120000, 360000):
        pcap = os.path.join(TMP, f"long{commands}.pcap")
        scaleup("gen", "session", "-o", pcap, "--xpus", "4", "--loss", "0.01", "--commands",
                str(commands), "--seed", "5")
        svg = os.path.join(TMP, f"long{commands}.svg")
        s = json.loads(scaleup("stats", "--json", "--svg", svg, pcap).stdout)
        panels, events, folded = svg_marks(svg)
        check(len(panels) == s["connection_count"], f"{len(panels)} panels")
        check(folded > 0, "long connections are drawn in columns")
        check(events.get("first", 0) == s["pdus"] - s["retransmissions"], f"first {events}")
        check(events.get("retransmission", 0) == s["retransmissions"], f"resent {events}")
        check(events.get("nack", 0) == s["nacks"], f"NACKs {events}")
        # A connection: at most 1024 marks, or 512 columns of at most 3 marks and a stair step.
        sizes[commands] = os.path.getsize(svg)
        bound = 4000 + s["connection_count"] * 120_000
        check(sizes[commands] < bound, f"{sizes[commands]} bytes, bound {bound}")
        print(f"{commands} commands, {s['frames']} frames, {s['connection_count']} connections: "
              f"{sizes[commands]} bytes of SVG")
    # Three times the frames, not three times the SVG.
    check(sizes[360000] < 1.25 * sizes[120000], f"sizes {sizes}")


def case_conversations():
    pcap, _ = lossy_session()
    s = json.loads(scaleup("stats", "--json", pcap).stdout)
    pairs = {(min(c["src"], c["dst"]), max(c["src"], c["dst"]), c["vc"]) for c in s["connections"]}
    # Both tables from one run, each between rules of '='.
    out = tshark("-q", "-r", pcap, "-z", "conv,sue", "-z", "endpoints,sue").stdout
    tables = {}
    for table in re.split(r"^=+$", out, flags=re.M):
        lines = table.strip().splitlines()
        if lines:
            tables[lines[0]] = lines[1:]
    check("SUE Endpoints" in tables, f"no endpoint table\n{out}")
    rows = [line for line in tables.get("SUE Conversations", []) if "<->" in line]
    check(len(rows) == len(pairs), f"{len(rows)} conversations, {len(pairs)} XPU pairs per VC\n"
          f"{out}")


# ---- display filters: `dump -Y` keeps the frames `tshark -Y` keeps ------------------------------

# Filters of every kind README.md's "Display filters" lists, each on names both tools know
# (scaleup's layer names and `encap` are not Wireshark's), run on every gen capture and a tcpdump
# capture of real UDP on lo, merged into one file: one tshark run a filter.
FILTERS = (
    "sue", "sue_lite || afh2c", "!sue && udp", "afh1 && !afh1.shim.version",
    "sue.rh.op == ACK", "sue.rh.op in {NACK, none}", "sue.rh.op == \"nack\" || sue.rh.op == 3",
    "sue.rh.op == none", "sue.rh.op in {1, none, 0}",
    "sue.rh.vc in {1, 3} && sue.rh.xpuid < 300",
    "sue.rh.npsn in {2..10, 100, 1000 .. 1003}", "!(sue.rh.npsn lt 100) and sue.rh.apsn ge 3",
    "sue.rh.npsn > sue.rh.apsn", "sue.rh.xpuid eq 0x89 || sue.rh.xpuid == 0b1110 || "
    "sue.rh.xpuid == 0173",
    # A field the frame holds many times (the commands of a PDU): any, all, any not, all not.
    "sue.cmd.name == \"WR_FULL\"", "sue.cmd.name != WR_FULL", "sue.cmd.name !== WR_FULL",
    "sue.cmd.name === WR_FULL", "sue.cmd.name ~= \"WR_FULL\"", "sue.cmd.type all_eq 0x12",
    "sue.cmd.name contains \"RD\"", "sue.cmd.type & 0x10", "sue.cmd.type bitwise_and 8",
    "sue.cmd.data_len > 200 || sue.cmd.control_len == 4", "sue.cmd.tag in {0..3}",
    "sue.rcrc.status == good && !(sue.payload.len == 0)", "sue.rcrc.status != \"good\"",
    "ip.src == 10.0.0.0/30 or ip.dst in {10.0.0.3, 10.0.0.137}",
    "ip.addr == 127.0.0.1 && udp.length > 20", "ip.src > 10.0.0.100",
    "ipv6.src == fd53:5545::/96 && ipv6.dst != fd53:5545::3ac", "ipv6.addr == fd53:5545::",
    "udp.port == 61793 && udp.length > 300", "udp.dstport == 47932 && !sue",
    "eth.src == 02:00:00:00:00:89 || eth.dst contains 00:07", "eth.addr == 42-53-55-45-00-73",
    "frame contains \"filter 2\" || frame contains a1:a2:a3", "frame contains 88.b5",
    "afh2.m == unicast && afh2.tc < 4", "afh2.w == 1", "afh2c.src_xpu in {2..5}",
    "vlan.id == 1 && vlan.priority >= 1", "afh1.shim.tc || afh1.dst_xpu eq 2",
    "ip.ttl ge 64 && ip.flags.mf == 0 && ip.flags.df == True", "!ip.flags.mf && ip",
    "sue_lite.len >= 100 || sue.payload.len >= 1000",
    "frame.len > 200 and not udp", "frame.number in {1..20} or frame.time_relative >= 0.5",
    "frame.time_delta > 0.0005 && frame.cap_len < 100",
    "tofu.rh.pat == 1 && tofu", "tofu.slice.lane == 1 && tofu.slice.fcs.status == good",
    "tofu.slice.fcs.status == bad", "tofu.tlp.len > 64",
    "rdma.pkt.type == 0 && rdma.pkt.seq < 50", "rdma.ack.type in {2, 3} || rdma.ctl.type",
    "rdma.ftr.crc.status == bad || rdma.pkt.reissue == 1",
    "sue.error.bad_checksum || sue.warning.reserved_nonzero",
)

# On the lossy session: the sequence analysis, as the plugin computes it in tshark's one pass.
ANALYSIS_FILTERS = (
    "sue.analysis", "!sue.analysis", "sue.analysis.retransmission",
    "sue.rh.xpuid == 1 && sue.analysis.retransmission",
    "sue.analysis.nack || sue.analysis.gap || sue.analysis.out_of_order",
    "sue.analysis.duplicate || sue.analysis.window_full",
    "sue.analysis.ack_rtt > 0.000005", "sue.analysis.ack_rtt <= 0.000001",
    "sue.analysis.in_flight >= 8 && !sue.analysis.retransmission",
    "sue.analysis.first_frame && !(sue.analysis.first_frame > 1000)",
    "sue.analysis.connection in {0, 2} && sue.rh.vc == 1",
    "sue.analysis.acked_connection == 3 || sue.analysis.acks_frame < 200",
    "sue.analysis && !sue.analysis.connection",
    "sue.analysis.acks_frame < sue.analysis.first_frame",
    "sue.analysis.in_flight == sue.analysis.connection || sue.analysis.missing > 0",
)


def rh_ops_capture():
    """An RH of each op, 3 too, which gen never writes: "none" names 2 and 3, and a name is its
    first value (2) for dump as for Wireshark 4.0; tshark 4.4 compared the name as text (both)."""
    return write_pcap("rh-ops.pcap", [udp4_frame("10.0.0.1", "10.0.0.2", 5001, 5002,
                                                 sue_pdu(7, 100 + op, op=op, apsn=90))
                                      for op in range(4)])


TSHARK_READS_TILDE_EQ = None


def tshark_spelling(pcap, flt):
    """The filter as the tshark at hand reads it: `~=` is Wireshark 4.0's other spelling of `!==`
    (any not equal), which later versions dropped (tshark 4.4: '"=" was unexpected'); dump reads
    both, and keeps `~=` in its test."""
    global TSHARK_READS_TILDE_EQ
    if "~=" not in flt:
        return flt
    if TSHARK_READS_TILDE_EQ is None:
        probe = run(tshark_cmd("-r", pcap, "-c", "1", "-Y", "frame.len ~= 0"), expect=None,
                    env=tshark_env())
        TSHARK_READS_TILDE_EQ = probe.returncode == 0
        if not TSHARK_READS_TILDE_EQ:
            print("tshark does not read ~=: it gets !== where dump gets ~=")
    return flt if TSHARK_READS_TILDE_EQ else flt.replace("~=", "!==")


def dump_keeps(pcap, flt, theirs, *dump_opts):
    """The frames `scaleup dump -Y` keeps, which must be `theirs`, those tshark kept (dump prints
    a Tofu frame reassembled from its slices under the number of its last slice, as a second
    line)."""
    out = scaleup("dump", *dump_opts, "-Y", flt, "-T", "fields", "-e", "frame.number", pcap)
    mine = sorted({int(n) for n in out.stdout.split()})
    check(mine == theirs, f"{os.path.basename(pcap)}: -Y '{flt}': only in dump "
          f"{sorted(set(mine) - set(theirs))[:20]}, only in tshark "
          f"{sorted(set(theirs) - set(mine))[:20]}")
    return mine


def kept(pcap, flt, *dump_opts):
    """The frames `scaleup dump -Y` and `tshark -Y` keep."""
    theirs = [int(n) for n in tshark("-r", pcap, "-Y", tshark_spelling(pcap, flt), "-T", "fields",
                                     "-e", "frame.number").stdout.split()]
    return dump_keeps(pcap, flt, theirs, *dump_opts)


def tapped(pcap, filters, fields=()):
    """The frames each of `filters` keeps, with one tshark run for them all: a Lua listener (a
    tap) a filter, each judged by Wireshark's display-filter engine as -Y would, on the same
    dissection. Starting tshark costs more than reading a small capture, a hundred times over.
    With `fields`, the same run also prints each frame's values of them (-T fields): returned
    as the rows of their columns."""
    filters = list(filters)
    script = os.path.join(TMP, "filters.lua")
    with open(script, "w") as f:
        f.write("local function keep(i, filter)\n"
                "  local tap = Listener.new(nil, filter)\n"
                "  function tap.packet(pinfo) io.write('tap ', i, ' ', pinfo.number, '\\n') end\n"
                "end\n")
        for i, flt in enumerate(filters):
            spelled = tshark_spelling(pcap, flt)
            check("]==]" not in spelled, f"a filter Lua cannot quote: {flt}")
            f.write(f"keep({i}, [==[{spelled}]==])\n")
    readable(script)
    output = ["-T", "fields", *(x for name in fields for x in ("-e", name))] if fields else ["-q"]
    theirs, rows = [[] for _ in filters], []
    for line in tshark("-X", f"lua_script:{script}", *output, "-r", pcap).stdout.splitlines():
        if line.startswith("tap "):
            _, i, n = line.split()
            theirs[int(i)].append(int(n))
        else:
            rows.append(line.split("\t"))
    return theirs, rows


def kept_all(pcap, filters, *dump_opts):
    """kept() for each filter, with one tshark run for them all (tapped)."""
    filters = list(filters)
    theirs, _ = tapped(pcap, filters)
    return {flt: dump_keeps(pcap, flt, their, *dump_opts) for flt, their in zip(filters, theirs)}


LO_PORT = 47932  # not SUE's 4793: dump and the plugin find the PDUs by the heuristic


def lo_capture():
    """UDP datagrams sent on lo, SUE PDUs and plain text, captured by tcpdump (a count and a
    timeout bound it); None, after saying why, when there is no tcpdump or it cannot open lo."""
    tcpdump = shutil.which("tcpdump") or shutil.which("tcpdump", path="/usr/sbin:/sbin")
    if not tcpdump:
        print("SKIP the lo capture: tcpdump is not installed")
        return None
    # The plain datagrams from a socket of their own: a conversation found SUE is SUE whatever
    # its datagrams hold (wire/udp_flow.hpp), in dump and in the plugin alike.
    grams = [(0, sue_pdu(100 + i, 1000 + i, op=i % 3, apsn=990 + i, vc=i % 4,
                         data=bytes([0x12, 0, 0, i]))) for i in range(8)]
    grams += [(1, b"hello filter %d" % i) for i in range(4)]
    path = os.path.join(TMP, "lo.pcap")
    cmd = ["timeout", "20", tcpdump, "-i", "lo", "-c", str(len(grams)), "-w", path, "-U", "-n",
           "udp", "and", "dst", "port", str(LO_PORT)]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.set_blocking(p.stderr.fileno(), False)
    said, deadline = b"", time.time() + 10
    while b"listening on" not in said and p.poll() is None and time.time() < deadline:
        said += p.stderr.read() or b""
        time.sleep(0.05)
    if b"listening on" not in said:
        p.kill()
        print(f"SKIP the lo capture: tcpdump cannot capture on lo: {said.decode().strip()}")
        return None
    time.sleep(0.2)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sue, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as plain:
        rx.bind(("127.0.0.1", LO_PORT))  # no ICMP port unreachable
        for which, g in grams:
            (plain if which else sue).sendto(g, ("127.0.0.1", LO_PORT))
            time.sleep(0.01)
    try:
        p.wait(timeout=25)
    except subprocess.TimeoutExpired:
        p.kill()
    check(os.path.exists(path), "tcpdump -i lo wrote nothing")
    return readable(path)


def case_display_filters():
    parts = [capture("basic", "basic", "--encap", "all", "--count", "6")[0],
             capture("afh2-link", "basic", "--link", "afh2", "--encap", "afh2,afh2c,lite")[0],
             capture("traffic", "traffic", "--pattern", "uniform", "--encap", "all")[0],
             capture("tofu", "tofu", "--mode", "adaptive", "--frames", "40", "--error-rate",
                     "0.0005", "--seed", "3")[0],
             capture("rdma", "rdma", "--transfers", "2", "--loss", "0.01", "--seed", "5")[0],
             capture("session-afh2c", "session", "--encap", "afh2c", "--xpus", "3", "--loss",
                     "0.05", "--commands", "300", "--seed", "9")[0],
             rh_ops_capture()]
    lo = lo_capture()
    if lo:
        parts.append(lo)
    merged = concatenated("merged", parts)
    got = kept_all(merged, ["frame", "sue.rh.op == 3", "sue.rh.op == none", *FILTERS])
    total = len(got["frame"])
    # A filter that keeps every frame or none tells little: most must keep some and not all.
    trivial = [f for f in FILTERS if len(got[f]) in (0, total)]
    check(len(trivial) <= 2, f"filters that keep all or nothing: {trivial}")
    # rh_ops_capture's op 3: SUE to both, and not "none".
    three = got["sue.rh.op == 3"]
    check(len(three) == 1 and three[0] not in got["sue.rh.op == none"], f"op 3: {three}")
    if lo:
        check(len(kept(lo, "sue")) == 8 and len(kept(lo, "frame contains \"hello\"")) == 4,
              "the lo capture: 8 SUE PDUs found by the heuristic, 4 plain datagrams")
    pcap, _ = lossy_session()
    got = kept_all(pcap, ["frame", *ANALYSIS_FILTERS])
    frames = len(got["frame"])
    for f in ANALYSIS_FILTERS:
        n = len(got[f])
        # Every frame of the session is a PDU the analysis takes.
        check(0 < n < frames or f in ("sue.analysis", "!sue.analysis"),
              f"-Y '{f}' keeps {n} of {frames}")
    # In parallel, the analysis's tests are judged in frame order after the rest.
    kept_all(pcap, ANALYSIS_FILTERS, "--threads", "2", "--batch", "7")
    # The conformance rules, on a capture that breaks one.
    bad, _ = lossy_session("misbehave-gbn", "--misbehave", "gbn.resend")
    check(kept(bad, "sue.check.gbn.resend") and not kept(bad, "sue.check.ack.unsent"),
          "gbn.resend is broken once, ack.unsent never")
    kept(bad, "sue.check.gbn.resend || sue.rh.xpuid == 2 && sue.analysis.nack")
    print(f"{len(FILTERS)} filters on {total} frames of {len(parts)} captures"
          f"{'' if lo else ' (no lo capture)'}, {len(ANALYSIS_FILTERS)} of the analysis on "
          f"{frames}: dump keeps what tshark keeps")


def case_install():
    check(BUILD_DIR, "the build directory is needed")
    prefix = os.path.join(TMP, "prefix")
    run(["cmake", "--install", BUILD_DIR, "--component", "wireshark", "--prefix", prefix])
    found = [os.path.join(d, f) for d, _, fs in os.walk(prefix) for f in fs]
    check(len(found) == 1 and found[0].endswith(os.path.join(VERSION_DIR, "epan", "scaleup.so")),
          f"installed under the prefix: {found}")
    # The installed layout is one Wireshark loads: point tshark at it.
    global PLUGIN_DIR
    plugins = os.path.dirname(os.path.dirname(os.path.dirname(found[0])))
    for d, dirs, fs in os.walk(prefix):
        os.chmod(d, 0o755)
    PLUGIN_DIR = plugins
    check("scaleup.so" in tshark("-G", "plugins").stdout, "tshark loads the installed plugin")
    # Without --prefix it goes where Wireshark looks (staged here through DESTDIR).
    stage = os.path.join(TMP, "stage")
    run(["cmake", "--install", BUILD_DIR, "--component", "wireshark"],
        env=dict(os.environ, DESTDIR=stage))
    staged = [os.path.join(d, f) for d, _, fs in os.walk(stage) for f in fs]
    configured = cache_value("SCALEUP_WIRESHARK_PLUGIN_DIR")
    if os.path.isabs(configured):
        want = os.path.join(stage + configured, "scaleup.so")
        check(staged == [want], f"staged: {staged}, wanted {want}")
    print("installed:", os.path.relpath(found[0], prefix), "| default:",
          os.path.relpath(staged[0], stage))


def cache_value(name):
    with open(os.path.join(BUILD_DIR, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.rstrip("\n").split("=", 1)[1]
    fail(f"{name} is not in the build's cache")


# ---- the Lua dissector (wireshark/scaleup.lua) against the plugin ------------------------------

LUA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "wireshark",
                   "scaleup.lua")
# Our protocols, and what the Lua dissector leaves to the plugin: the sequence analysis and the
# conformance rules (their fields and expert infos).
OURS = ("sue", "sue_lite", "afh1", "afh2", "afh2c", "tofu", "rdma", "llr", "cbfc", "pfc", "axi")
PLUGIN_ONLY = ("sue.analysis", "sue.check")
# The plugin's analysis, which adds expert infos and tags to the info column, is turned off in
# its runs (the conformance rules with it): what is compared is the dissection of each frame.
NO_ANALYSIS = ("-o", "sue.analyze_sequence:FALSE")
LUA_DIR = LUA_FILE = None


def lua_setup():
    """A plugin directory without the plugin, and the Lua file where tshark's user reads it."""
    global LUA_DIR, LUA_FILE
    if LUA_DIR:
        return
    LUA_DIR = os.path.join(TMP, "no-plugin")
    os.makedirs(os.path.join(LUA_DIR, VERSION_DIR, "epan"))
    for d, _, _ in os.walk(LUA_DIR):
        os.chmod(d, 0o755)
    LUA_FILE = readable(shutil.copy(LUA, os.path.join(TMP, "scaleup.lua")))


def lua(*args, expect=0):
    """tshark with the Lua dissector and without the plugin."""
    lua_setup()
    load = ("-X", f"lua_script:{LUA_FILE}")
    if args and args[0] == "-G":  # a report only as the first option
        return tshark(*args[:2], *load, *args[2:], expect=expect, plugin_dir=LUA_DIR)
    return tshark(*load, *args, expect=expect, plugin_dir=LUA_DIR)


def glossary(report, runner):
    """`tshark -G report`'s lines for our protocols and fields, by filter name (the third column
    of `fields` and `protocols`, the second of `values`), each a list of rows."""
    out = {}
    for line in runner("-G", report).stdout.splitlines():
        cols = line.split("\t")
        at = 1 if report == "values" else 2
        if len(cols) > at and cols[at].split(".")[0] in OURS:
            out.setdefault(cols[at], []).append(cols)
    return out


COMPARED_FIELDS = None


def compared_fields():
    """Every field both register under our protocols that holds a value (asked of both once: two
    tshark starts, which every comparison would otherwise repeat)."""
    global COMPARED_FIELDS
    if COMPARED_FIELDS is None:
        plugin = glossary("fields", tshark)
        ours = glossary("fields", lua)
        COMPARED_FIELDS = sorted(n for n, rows in plugin.items() if rows[0][0] == "F" and
                                 n in ours and rows[0][3] not in ("FT_NONE", "FT_PROTOCOL"))
    return COMPARED_FIELDS


MALFORMED = "[Malformed Packet]"


def ours_only(cols):
    """A line of compare_lua's columns with only our expert infos (message, severity, group):
    Wireshark's own may differ where Ethernet carries an AFH Gen 1 PDU and more, because Lua
    cannot tell Ethernet where the PDU ends (the plugin does, and Ethernet shows the rest as its
    trailer)."""
    triples = zip(*(c.split(AGG) if c else [] for c in cols[3:6]))
    kept = [t for t in triples if t[0].startswith(("error: ", "warning: ", "note: "))]
    return cols[:3] + [AGG.join(t[i] for t in kept) for i in range(3)] + cols[6:]


def compare_lua(pcap, *opts, info=True):
    """Every value of every field of ours, frame by frame and occurrence by occurrence, every
    expert info (message, severity, group) and the protocol and info columns: the plugin's and the
    Lua dissector's, on one capture."""
    fields = compared_fields()
    meta = ["frame.number", "_ws.col.Protocol", "_ws.col.Info", "_ws.expert.message",
            "_ws.expert.severity", "_ws.expert.group"]
    args = [*opts, "-r", pcap, "-T", "fields", "-E", "occurrence=a", "-E", f"aggregator={AGG}",
            "-E", "separator=/t"]
    for k in meta + fields:
        args += ["-e", k]
    want = tshark(*NO_ANALYSIS, *args).stdout.splitlines()
    got = lua(*args).stdout.splitlines()
    check(len(want) == len(got) and want, f"{pcap}: the plugin shows {len(want)} frames, Lua "
          f"{len(got)}")
    values = experts = 0
    for w, g in zip(want, got):
        wc, gc = ours_only(w.split("\t")), ours_only(g.split("\t"))
        protocol = wc[1]
        for name, a, b in zip(meta + fields, wc, gc):
            if name == "_ws.col.Info" and not info:
                continue
            if name == "_ws.col.Info" and a.endswith(MALFORMED) and not b.endswith(MALFORMED):
                # Ethernet handed what follows the plugin's PDU to its trailer dissectors, and
                # one of them threw (4.4's PRP on a damaged frame); Lua cannot end the PDU.
                a = a[:-len(MALFORMED)]
            check(a == b, f"{os.path.basename(pcap)} frame {wc[0]} ({protocol}): {name} is "
                  f"{a!r} in the plugin, {b!r} in Lua")
            if name in fields and a:
                values += len(a.split(AGG))
            if name == "_ws.expert.message" and a:
                experts += len(a.split(AGG))
    print(f"{os.path.basename(pcap)} {' '.join(opts)}: {len(want)} frames, {values} values, "
          f"{experts} expert infos agree")
    return values


def compare_lua_all(name, pcaps, *opts):
    """compare_lua on the captures one after the other in one file (mergecap -a; pcapng keeps
    each one's link type): two tshark runs instead of two a capture, where starting tshark with
    the Lua dissector costs more than reading the frames."""
    merged = concatenated(name, pcaps)
    print(f"{name}: {', '.join(os.path.basename(p) for p in pcaps)}")
    return compare_lua(merged, *opts)


def case_lua_loads():
    """The Lua dissector loads with -X lua_script and from the personal Lua plugins folder
    (where `tshark -G folders` says it is), registers our protocols and reads a capture."""
    pcap, _ = capture("basic", "basic", "--count", "2")
    for p in OURS[:7]:
        check(p in glossary("protocols", lua), f"protocol {p} not registered by Lua")
    folders = lua("-G", "folders").stdout
    personal = [line.split(":", 1)[1].strip() for line in folders.splitlines()
                if line.startswith("Personal Lua Plugins:")]
    check(len(personal) == 1, f"no personal Lua plugins folder:\n{folders}")
    os.makedirs(personal[0], exist_ok=True)
    for d in (personal[0], *[os.path.join(HOME, x) for x in (".local", ".local/lib",
                                                             ".local/lib/wireshark")]):
        if os.path.isdir(d):
            os.chmod(d, 0o755)
    readable(shutil.copy(LUA, os.path.join(personal[0], "scaleup.lua")))
    lua_setup()
    plugins = tshark("-G", "plugins", plugin_dir=LUA_DIR).stdout
    check("scaleup.lua" in plugins, f"tshark does not list scaleup.lua:\n{plugins}")
    npsn = tshark("-r", pcap, "-Y", "sue.rh.npsn", "-T", "fields", "-e", "sue.rh.npsn",
                  plugin_dir=LUA_DIR).stdout.split()
    want = [str(f["sue.rh.npsn"]) for f in jsonl(scaleup("dump", "--json", pcap).stdout)
            if "sue.rh.npsn" in f]
    check(npsn == want and npsn, f"from the personal folder: {npsn}, dump {want}")
    os.remove(os.path.join(personal[0], "scaleup.lua"))
    print(f"loads with -X lua_script and from {personal[0]}")


def case_lua_registration():
    """The Lua dissector registers what the plugin registers, the same way: every field (type,
    protocol, display base, description), value names, expert infos and preferences; apart from
    the analysis and conformance, which it leaves to the plugin."""
    plugin, ours = glossary("fields", tshark), glossary("fields", lua)
    for name, rows in plugin.items():
        if name.startswith(PLUGIN_ONLY):
            check(name not in ours, f"{name}: Lua registers what it does not fill")
            continue
        check(name in ours, f"{name} ({rows[0][-1]}) is not registered by Lua")
        # Lua has no integer of 40, 48 or 56 bits.
        want = [[("FT_UINT64" if c in ("FT_UINT40", "FT_UINT48", "FT_UINT56") else c)
                 for c in row] for row in rows]
        check(want == ours[name], f"{name}: plugin {want}, Lua {ours[name]}")
    for name in ours:
        check(name in plugin, f"{name}: registered by Lua only")
    # A Lua table has no order: the names are compared as sets.
    values, theirs = [{k: sorted(v) for k, v in glossary("values", runner).items()}
                      for runner in (tshark, lua)]
    check(values == theirs, "value names differ: " +
          str([(n, values.get(n), theirs.get(n)) for n in set(values) | set(theirs)
               if values.get(n) != theirs.get(n)][:5]))
    prefs = {line.split(":")[0].lstrip("#").strip(): line for line in
             tshark("-G", "defaultprefs").stdout.splitlines() if line.lstrip("#").startswith("sue.")}
    for line in lua("-G", "defaultprefs").stdout.splitlines():
        if line.lstrip("#").startswith("sue."):
            key = line.split(":")[0].lstrip("#").strip()
            if key == "sue.udp.port":  # the plugin's comes with its Decode As entry
                continue
            check(key in prefs, f"preference {key}: Lua only")
            check(prefs[key].split(":", 1)[1].strip() == line.split(":", 1)[1].strip(),
                  f"preference {key}: plugin {prefs[key]!r}, Lua {line!r}")
    print(f"{len(ours)} fields, value names and preferences as the plugin's")


def case_lua_fields():
    """Every capture `scaleup gen` writes, in every encapsulation and link type, and the field
    tests' shapes (frames with their FCS, the profile none, ns-3's): the same values as the
    plugin's."""
    basic, _ = capture("basic", "basic")
    compare_lua(basic, "-o", "sue.profile:none")
    compare_lua(with_fcs(basic, "fcs-yes.pcap"), "-o", "sue.fcs:yes")
    parts = [basic, with_fcs(basic, "fcs.pcap"),
             capture("afh2", "basic", "--link", "afh2", "--encap", "afh2,afh2c,lite")[0]]
    for pattern in ("uniform", "incast", "fig21"):
        parts.append(capture("traffic-" + pattern, "traffic", "--pattern", pattern, "--encap",
                             "all")[0])
        parts.append(capture("traffic-" + pattern + "-afh2", "traffic", "--pattern", pattern,
                             "--encap", "afh2,afh2c,lite", "--link", "afh2")[0])
    for mode in ("split", "duplicate", "adaptive"):
        parts.append(capture("tofu-" + mode, "tofu", "--mode", mode, "--frames", "60",
                             "--error-rate", "0.0005", "--seed", "3")[0])
    parts.append(capture("rdma", "rdma", "--transfers", "6", "--loss", "0.01", "--seed", "5")[0])
    for encap in ("udp4", "afh1", "afh1-shim"):
        pcaps = ns3_pcaps(encap)
        if pcaps:
            parts.append(readable(pcaps[0]))
    compare_lua_all("lua-fields", parts)


def case_lua_sessions():
    """Sessions with losses (retransmissions, NACKs, padding to the minimum frame) in every
    encapsulation: the same values as the plugin's."""
    compare_lua_all("lua-sessions", [
        lossy_session("session-" + encap, "--encap", encap, commands=600)[0]
        for encap in ("udp4", "udp6", "afh1", "afh1-vlan", "afh1-shim", "afh1-vlan-shim", "afh2",
                      "afh2c")] + [failover_session(encap) for encap in ("udp6", "afh1-vlan-shim")])


def case_lua_damaged():
    """Where frames are not as written: a corrupted session (editcap -E) and one the capture cut
    (editcap -s), SUE on a port found by the heuristic, bound conversations and UET's lookalikes,
    frames in VXLAN and PDUs in IP fragments, checksums checked: the same values and the same
    expert infos as the plugin's."""
    clean, _ = lossy_session(commands=1200)
    corrupted = os.path.join(TMP, "corrupted.pcap")
    run([EDITCAP, "-E", "0.01", "--seed", "11", "-F", "pcap", clean, corrupted])
    parts = [readable(corrupted)]
    for snap in (64, 80):
        cut = os.path.join(TMP, f"cut{snap}.pcap")
        run([EDITCAP, "-F", "pcap", "-s", str(snap), clean, cut])
        parts.append(readable(cut))
    basic, _ = capture("basic-all", "basic")
    damaged = []
    for seed in (1, 2):
        damaged.append(os.path.join(TMP, f"basic-damaged{seed}.pcap"))
        run([EDITCAP, "-E", "0.02", "--seed", str(seed), "-F", "pcap", basic, damaged[-1]])
        readable(damaged[-1])
    compare_lua_all("lua-damaged", [*parts, *damaged, port5000_capture(), uet_capture(),
                                    vxlan_capture()[1], fragments_capture()[0]])
    compare_lua_all("lua-damaged-checksums", damaged, "-o", "sue.check_checksums:TRUE")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    global SCALEUP, PLUGIN, VERSION_DIR, BUILD_DIR
    if len(sys.argv) < 5 or sys.argv[4] not in CASES:
        print(__doc__)
        print("cases:", " ".join(CASES))
        sys.exit(2)
    SCALEUP, PLUGIN, VERSION_DIR, case = sys.argv[1:5]
    BUILD_DIR = sys.argv[5] if len(sys.argv) > 5 else None
    setup()
    try:
        CASES[case]()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
