#!/usr/bin/env python3
"""The `scaleup` command with tshark's habits: input from a file, a pipe or an
interface, tshark's output forms and frame fields, and the usage errors of every option.

usage: tshark_style_test.py SCALEUP_BINARY CASE

  options      -r FILE as FILE, -c, -V as -v, -q, --help per command; every new option's usage
               error names the option and prints that command's usage line, exit 2
  fields       -T fields -e NAME against tshark's own -T fields (frame.* of a nanosecond, a
               microsecond and a pcapng file) and against --json; -E separator and header
  columns      the summary line's tshark columns; -V's frame section; --json's frame.* members
  json_writer  stats --json of a file whose name holds control characters is valid JSON
  pipe         `cat FILE | dump -` and `tcpdump -r FILE -w - | dump -` as reading the files; a
               frame written to the pipe is printed before the writer closes it; -w FILE
  live         dump -i lo -f 'udp port P' -c N while this test sends SUE datagrams, against the
               same traffic saved with -w and read back; -a duration:S; SIGINT ends a capture
               with the frames and the summary printed; stats -i lo with SIGINT prints totals.
               Exit 77 (skipped) when lo cannot be opened
  profile_file profiles/default.json and the constexpr default profile dissect every
               `gen traffic` capture identically (dump --json byte for byte, stats); a vendor's
               file is used by dump, stats and gen traffic; a broken file's error names the
               entry and the rule

Expected values are tshark's, the ones packed here, or the same capture read another way.
"""
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

import cli_test
from cli_test import check, jsonl, rcrc, read_pcap, rh_bytes, run, tshark_fields

SKIP = 77
PORT = 47933  # not SUE's: dump finds the PDUs by their plausible RH and good R-CRC
OPAQUE = ("--profile", "none")


def tmp(name):
    return os.path.join(cli_test.TMP, name)


def gen(name="g.pcap", count=3):
    path = tmp(name)
    run("gen", "basic", "-o", path, "--count", str(count), "--encap", "udp4,afh1,afh2c,lite")
    return path


def usage_error(*args, option):
    """A usage error: exit 2, the option named, the command's usage line, not the whole help."""
    p = run(*args, expect=2)
    check(p.stderr.startswith("scaleup: "), f"{args}: {p.stderr}")
    check(option in p.stderr, f"{args}: the message does not name {option}: {p.stderr}")
    check("usage: scaleup " in p.stderr, f"{args}: no usage line: {p.stderr}")
    check(len(p.stderr.splitlines()) <= 4, f"{args}: more than the usage line: {p.stderr}")
    return p


def case_options():
    cap = gen()
    whole = run("dump", "--json", cap).stdout
    check(run("dump", "--json", "-r", cap).stdout == whole, "-r FILE reads as FILE")
    check(run("dump", "-r", cap, "-T", "json").stdout == whole, "-T json is --json")
    first = jsonl(run("dump", "--json", "-c", "4", cap).stdout)
    check([f["frame"] for f in first] == [1, 2, 3, 4], f"-c 4: {[f['frame'] for f in first]}")
    check(first == jsonl(whole)[:4], "-c 4 gives the first four frames as they are")
    check(run("dump", "-V", cap).stdout == run("dump", "-v", cap).stdout, "-V is -v")
    check("Epoch Time" in run("dump", "-V", cap).stdout, "-V: the frame section")
    q = run("dump", "-q", cap)
    check(q.stdout == "", f"-q prints no frames: {q.stdout[:200]}")
    for cmd in (["dump"], ["stats"], ["gen", "basic"], ["gen", "session"]):
        h = run(*cmd, "--help")
        check(f"scaleup {' '.join(cmd)}" in h.stdout and "--help" in h.stdout,
              f"{cmd} --help: {h.stdout[:300]}")
    h = run("dump", "--help").stdout
    for opt in ("-r", "-i", "-f", "-c", "-a", "-w", "-T", "-e", "-E", "-V", "-q", "--json",
                "--profile", "--udp-port", "--xpu-map", "--fcs"):
        check(f" {opt}" in h or f",{opt}" in h, f"dump --help does not list {opt}")
    check("--interval" in run("stats", "--help").stdout, "stats --help lists --interval")
    # Usage errors: each names its option.
    usage_error("dump", cap, "--bogus", option="--bogus")
    usage_error("dump", cap, "-c", "0", option="-c")
    usage_error("dump", cap, "-c", "many", option="-c")
    usage_error("dump", cap, "-T", "pdml", option="-T")
    usage_error("dump", cap, "-T", "fields", option="-e")
    usage_error("dump", cap, "-e", "sue.rh.npsn", option="-e")
    usage_error("dump", cap, "-T", "fields", "-e", "sue.rh.bogus", option="sue.rh.bogus")
    # -E: tshark's options, each bad value named with its option.
    for bad, named in (("quote=x", "-E quote="), ("occurrence=2", "-E occurrence="),
                       ("header=maybe", "-E header="), ("bom=1", "-E bom="),
                       ("separator=", "-E separator="), ("aggregator=", "-E aggregator="),
                       ("escape=1", "-E escape="), ("escaped=y", "'escaped'"),
                       ("quote", "'quote'"), ("=d", "-E")):
        p = usage_error("dump", cap, "-T", "fields", "-e", "sue.rh.npsn", "-E", "quote=d", "-E",
                        bad, option=named)
        check("-E" in p.stderr, f"-E {bad}: {p.stderr}")
    usage_error("dump", cap, "-a", "duration:5", option="-a")
    usage_error("dump", cap, "-f", "udp", option="-f")
    usage_error("dump", "-i", "lo", "-a", "packets:5", option="-a")
    usage_error("dump", "-i", "lo", "-a", "duration:0", option="-a")
    usage_error("dump", cap, "-r", cap, option="--read-file")
    usage_error("dump", cap, "-i", "lo", option="--interface")
    usage_error("dump", option="FILE")
    usage_error("dump", cap, "--fcs", "maybe", option="--fcs")
    usage_error("dump", cap, "--udp-port", "0", option="--udp-port")
    usage_error("dump", cap, "--udp-port", "70000", option="--udp-port")
    usage_error("dump", cap, "--profile", "nosuch", option="--profile")
    usage_error("stats", cap, "--interval", "0", option="--interval")
    usage_error("stats", cap, "--window", "0", option="--window")
    usage_error("stats", cap, "--window", "32768", option="--window")
    usage_error("gen", "basic", "-o", cap, "--count", "0", option="--count")
    usage_error("gen", "basic", "-o", cap, "--link", "token-ring", option="--link")
    usage_error("gen", "basic", "--count", "2", option="--output")
    usage_error("gen", "tofu", "-o", cap, "--mode", "triple", option="--mode")
    usage_error("gen", "session", "-o", cap, "--fail-link", "1:2", option="--fail-link")
    usage_error("gen", "session", "-o", cap, "--ports", "3", option="--ports")
    # -w with no frames to write still fails cleanly when it cannot write.
    p = run("dump", "-q", "-w", tmp("no/such/dir.pcap"), cap, expect=1)
    check("no/such/dir.pcap" in p.stderr, p.stderr)


def epoch_of(text):
    return cli_test.epoch_ns(text)


def case_fields():
    ns = gen()
    # tcpdump writes microsecond pcap; editcap a pcapng (frame.interface_id).
    us = tmp("us.pcap")
    subprocess.run(["tcpdump", "-r", ns, "-w", us], check=True, capture_output=True)
    ng = tmp("ng.pcapng")
    subprocess.run(["editcap", "-F", "pcapng", ns, ng], check=True)
    names = ["frame.number", "frame.time_epoch", "frame.time_relative", "frame.time_delta",
             "frame.len", "frame.cap_len"]
    for path, extra in ((ns, []), (us, []), (ng, ["frame.interface_id"])):
        want = tshark_fields(path, *names, *extra)
        args = ["dump", path, "-T", "fields"]
        for n in names + extra:
            args += ["-e", n]
        got = [line.split("\t") for line in run(*args).stdout.splitlines()]
        check(got == want, f"{path}: dump {got[:3]}, tshark {want[:3]}")
    # As tshark: nine decimals in fields whatever the file holds; the summary line's Time column
    # has the file's own (6 for microseconds).
    for path, d in ((ns, 9), (us, 6)):
        (t,) = run("dump", path, "-c", "1", "-T", "fields", "-e", "frame.time_epoch").stdout.split()
        check(len(t.split(".")[1]) == 9, f"{path}: {t} has not 9 decimals")
        (line,) = run("dump", path, "-c", "1").stdout.splitlines()
        check(line.split()[1] == "0." + "0" * d, f"{path}: Time column {line.split()[1]}")
    # The tree's fields under the JSON's names, every occurrence comma-separated.
    frames = jsonl(run("dump", "--json", ns).stdout)
    out = run("dump", ns, "-T", "fields", "-e", "encap", "-e", "sue.rh.npsn", "-e", "ip.src",
              "-e", "sue.cmd.name", "-E", "separator=;", "-E", "header=y").stdout.splitlines()
    check(out[0] == "encap;sue.rh.npsn;ip.src;sue.cmd.name", f"header: {out[0]}")
    check(len(out) == len(frames) + 1, f"{len(out)} lines for {len(frames)} frames")
    for f, line in zip(frames, out[1:]):
        encap, npsn, src, names_ = line.split(";")
        check(encap == f["encap"], f"{line}: encap")
        check(npsn == str(f.get("sue.rh.npsn", "")), f"{line}: npsn {f.get('sue.rh.npsn')}")
        check(src == f.get("ip.src", ""), f"{line}: ip.src {f.get('ip.src')}")
        cmds = [c["sue.cmd.name"] for c in f.get("sue.cmds", [])]
        check(names_ == ",".join(cmds), f"{line}: commands {cmds}")


def case_columns():
    cap = gen()
    lines = [l for l in run("dump", cap).stdout.splitlines() if not l.startswith("          cmd")]
    frames = jsonl(run("dump", "--json", cap).stdout)
    check(len(lines) == len(frames), f"{len(lines)} summary lines, {len(frames)} frames")
    rows = tshark_fields(cap, "frame.time_relative", "frame.len")
    for line, f, (rel, length) in zip(lines, frames, rows):
        cols = line.split()
        # No., Time, Source, →, Destination, Protocol..., Length, Info (encap first).
        check(cols[0] == str(f["frame"]) and cols[1] == rel, f"{line}: No. and Time ({rel})")
        check("\u2192" in cols[2:6], f"{line}: the arrow between the ends")
        if f["encap"] == "udp4":
            check(cols[2] == f["ip.src"] and cols[4] == f["ip.dst"], f"{line}: the IP ends")
            check(cols[5] == "SUE", f"{line}: the protocol")
        if f["encap"] == "afh1":
            check(cols[2:5] == ["XPU", str(f["afh1.src_xpu"]), "\u2192"] and
                  cols[5:7] == ["XPU", str(f["afh1.dst_xpu"])], f"{line}: the XPU ends")
        at = cols.index(f["encap"])
        check(cols[at - 1] == length and int(length) == f["frame.len"], f"{line}: length")
        check(f["frame.time_relative"] == rel, f"json time_relative {f['frame.time_relative']}")
        if "sue.rh.npsn" in f:
            check(f"npsn={f['sue.rh.npsn']}" in line, f"{line}: info")
    # -V: the frame section with tshark's names.
    v = run("dump", "-V", "-c", "2", cap).stdout
    (epoch2,) = [r[0] for r in tshark_fields(cap, "frame.time_epoch")][1:2]
    check(f"Epoch Time: {epoch2} seconds  {{frame.time_epoch}}" in v, v[:800])
    check("[Time delta from previous captured frame: 0.001000000 seconds]" in v, v[:800])
    check("Frame Length: 60 bytes  {frame.len}" in v, v[:800])


def case_json_writer():
    cap = gen()
    odd = tmp("a\x01b\tc\"d.pcap")
    os.rename(cap, odd)
    s = json.loads(run("stats", "--json", odd).stdout)
    check(s["file"] == odd and s["frames"] == 12, f"{s['file']!r} {s['frames']}")
    raw = run("stats", "--json", odd).stdout
    check("\\u0001" in raw and "\\t" not in raw.replace("\\u0009", ""), raw[:200])
    # gen --json writes through the same writer: one valid object per frame.
    made = jsonl(run("gen", "basic", "-o", tmp("m.pcap"), "--count", "2", "--json").stdout)
    check(len(made) == 18 and made[0]["frame"] == 1, f"{len(made)} manifest objects")


def case_pipe():
    cap = gen("big.pcap", 40)
    whole = run("dump", "--json", cap).stdout
    p = subprocess.run(f"cat '{cap}' | '{cli_test.SCALEUP}' dump --json -", shell=True,
                       capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout == whole, f"cat | dump -: {p.returncode} {p.stderr}")
    us = tmp("us.pcap")
    subprocess.run(["tcpdump", "-r", cap, "-w", us], check=True, capture_output=True)
    p = subprocess.run(f"tcpdump -r '{cap}' -w - 2>/dev/null | '{cli_test.SCALEUP}' dump -",
                       shell=True, capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout == run("dump", us).stdout,
          f"tcpdump -w - | dump -: {p.returncode} {p.stderr}")
    p = subprocess.run(f"gzip -c '{cap}' | '{cli_test.SCALEUP}' dump --json -", shell=True,
                       capture_output=True, text=True)
    check(p.stdout == whole, "a gzip stream on standard input")
    # Frame by frame: the first record is printed while the writer still holds the pipe open.
    data = open(cap, "rb").read()
    first = 24 + 16 + struct.unpack("<I", data[24 + 8:24 + 12])[0]
    d = subprocess.Popen([cli_test.SCALEUP, "dump", "-T", "fields", "-e", "frame.number",
                          "-e", "sue.rh.npsn", "-"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    d.stdin.write(data[:first])
    d.stdin.flush()
    ready, _, _ = select.select([d.stdout], [], [], 10)
    check(ready, "nothing printed for a frame written to the pipe")
    line = d.stdout.readline().decode()
    check(line == f"1\t{jsonl(whole)[0]['sue.rh.npsn']}\n", f"first line {line!r}")
    d.stdin.write(data[first:])
    d.stdin.close()
    rest = d.stdout.read().decode()
    check(d.wait(timeout=20) == 0 and len(rest.splitlines()) == len(jsonl(whole)) - 1,
          f"the rest: {len(rest.splitlines())} lines")
    # -w saves the frames read (here the first five, as -c asks); the copy reads the same.
    saved = tmp("saved.pcap")
    run("dump", "-q", "-c", "5", "-w", saved, cap)
    check(read_pcap(saved)[4] == read_pcap(cap)[4][:5], "-w keeps the records as read")
    check(run("dump", "--json", saved).stdout.splitlines() == whole.splitlines()[:5],
          "the saved copy dissects as the original")


# ---- live, on the loopback interface ---------------------------------------------------------

def pdu(i):
    rh = rh_bytes(op=2, xpuid=200 + i, npsn=500 + i, vc=i % 4, partition=9, apsn=499 + i)
    body = rh + bytes(range(1, i + 2))
    return body + rcrc(body)


def start(*args):
    """Starts `scaleup ARGS`; returns it once it captures, or None when lo cannot be opened."""
    return cli_test.started(["timeout", "30", cli_test.SCALEUP, *args], subprocess.PIPE)


def send(n, first=0):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for i in range(first, first + n):
            s.sendto(pdu(i), ("127.0.0.1", PORT))
            time.sleep(0.01)


def finish(p, seen):
    out, err = p.communicate(timeout=30)
    return out.decode(), seen + err.decode(errors="replace")


def case_live():
    count = 6
    saved = tmp("live.pcap")
    p, said = start("dump", "-i", "lo", "-f", f"udp dst port {PORT}", "-c", str(count),
                    "--json", *OPAQUE, "-w", saved)
    if p is None:
        print(f"SKIP: cannot capture on lo: {said.strip()}")
        return SKIP
    send(count)
    out, err = finish(p, said)
    check(p.returncode == 0, f"exit {p.returncode}: {err}")
    live = jsonl(out)
    check(len(live) == count, f"{len(live)} frames captured live, wanted {count}")
    check(f"{count} frames captured" in err, err)
    for i, f in enumerate(live):
        check(f["sue.rh.xpuid"] == 200 + i and f["sue.rh.npsn"] == 500 + i and
              f["sue.rcrc.status"] == "good" and f["udp.dstport"] == PORT, f"frame {i + 1}: {f}")
        check(f["frame.interface_id"] == 0, "a live capture names its interface")
    # The same traffic read from the file -w wrote: the same frames, times included.
    back = jsonl(run("dump", "--json", *OPAQUE, saved).stdout)
    for f in live:
        del f["frame.interface_id"]
    check(back == live, f"live and saved differ:\n{live[:1]}\n{back[:1]}")
    check(tshark_fields(saved, "frame.time_epoch") ==
          [[f["frame.time_epoch"]] for f in back], "tshark reads the saved times")

    # -a duration:S ends a capture that sees nothing.
    t0 = time.time()
    p, said = start("dump", "-i", "lo", "-f", f"udp dst port {PORT + 1}", "-a", "duration:1")
    check(p is not None, said)
    out, err = finish(p, said)
    check(p.returncode == 0 and out == "" and "0 frames captured" in err, f"{out} {err}")
    check(time.time() - t0 < 10, "duration:1 took too long")

    # SIGINT: the frames so far, then the summary, exit 0. Saved as pcapng, each frame names
    # the interface it was captured on.
    saved_ng = tmp("live.pcapng")
    p, said = start("dump", "-i", "lo", "-f", f"udp dst port {PORT}", *OPAQUE, "-w", saved_ng)
    check(p is not None, said)
    send(3)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)  # to `timeout`, which passes it on
    out, err = finish(p, said)
    lines = [l for l in out.splitlines() if l.strip()]
    check(p.returncode == 0, f"exit {p.returncode}: {err}")
    check(len(lines) == 3 and all("SUE" in l and "udp4" in l for l in lines), out)
    check("3 frames captured" in err, err)
    named = tshark_fields(saved_ng, "frame.interface_name", "udp.dstport")
    check(named == [["lo", str(PORT)]] * 3, f"{named}")

    # stats on a live capture: SIGINT prints the totals.
    p, said = start("stats", "-i", "lo", "-f", f"udp dst port {PORT}", "--json")
    check(p is not None, said)
    send(4)
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    out, err = finish(p, said)
    check(p.returncode == 0, f"exit {p.returncode}: {err}")
    s = json.loads(out)
    check(s["frames"] == 4 and s["analysed"] == 4, f"{s['frames']} {s['analysed']}")
    p, said = start("stats", "-i", "lo", "-f", f"udp dst port {PORT}", "--interval", "0.2")
    check(p is not None, said)
    send(3)
    time.sleep(0.6)
    p.send_signal(signal.SIGINT)
    out, err = finish(p, said)
    check(p.returncode == 0 and out.count("lo: ") >= 2 and "totals" in out, out)
    check(out.rstrip().splitlines()[-1].startswith("   all"), out)
    # A quiet link still gets its table every interval.
    p, said = start("stats", "-i", "lo", "-f", f"udp dst port {PORT + 2}", "--interval", "0.2")
    check(p is not None, said)
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, err = finish(p, said)
    check(p.returncode == 0 and out.count("lo: 0 frames") >= 3 and "totals" in out, out)
    return 0


# ---- command profiles as files ---------------------------------------------------------------

DEFAULT_PROFILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                               "profiles", "default.json")


def case_profile_file():
    check(os.path.exists(DEFAULT_PROFILE), DEFAULT_PROFILE)
    n = 0
    for pattern in ("uniform", "incast", "fig21"):
        for encap in ("all", "udp4,lite"):
            cap = tmp(f"t-{pattern}.pcap")
            run("gen", "traffic", "-o", cap, "--pattern", pattern, "--encap", encap, "--count",
                "60", "--vcs", "4")
            by_name = run("dump", "--json", cap).stdout
            by_file = run("dump", "--json", "--profile", DEFAULT_PROFILE, cap).stdout
            check(by_name == by_file, f"{pattern} {encap}: the file dissects differently")
            check(by_name.count('"sue.cmd.name"') >= 4, f"{pattern} {encap}: commands read")
            check(run("dump", "-V", "--profile", DEFAULT_PROFILE, cap).stdout ==
                  run("dump", "-V", cap).stdout, f"{pattern} {encap}: -V differs")
            check(run("stats", "--json", "--profile", DEFAULT_PROFILE, cap).stdout ==
                  run("stats", "--json", cap).stdout, f"{pattern} {encap}: stats differs")
            n += 1
    # gen traffic packs with a profile file too: the same capture as with the name.
    a, b = tmp("a.pcap"), tmp("b.pcap")
    run("gen", "traffic", "-o", a, "--seed", "5")
    run("gen", "traffic", "-o", b, "--seed", "5", "--profile", DEFAULT_PROFILE)
    check(open(a, "rb").read() == open(b, "rb").read(), "gen traffic --profile FILE")

    # A vendor's own profile: the default with its barrier renamed and a new 4-byte command.
    prof = json.load(open(DEFAULT_PROFILE))
    for t in prof["types"]:
        if t["name"] == "BARRIER":
            t["name"] = "FENCE"
    prof["name"] = "vendor"
    prof["types"].append({"code": 0x40, "name": "DOORBELL", "control_units": 2, "data": False,
                          "vc": 0, "fields": [
                              {"name": "type", "filter": "sue.cmd.type", "bit": 0, "width": 8,
                               "type": "hex"},
                              {"name": "queue", "filter": "vendor.queue", "bit": 8, "width": 24}]})
    vendor = tmp("vendor.json")
    json.dump(prof, open(vendor, "w"))
    # One PDU over UDP: a barrier (12 00 00 07) and a doorbell for queue 0x0A0B0C.
    body = rh_bytes(op=2, xpuid=4, npsn=1) + bytes([0x12, 0, 0, 7, 0x40, 0x0A, 0x0B, 0x0C])
    frame = (b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00" +
             bytes([0x45, 0, 0, 20 + 8 + len(body) + 4, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1,
                    10, 0, 0, 2]) +
             struct.pack(">HHHH", 5000, PORT, 8 + len(body) + 4, 0) + body + rcrc(body))
    cap = tmp("vendor.pcap")
    with open(cap, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        f.write(struct.pack("<IIII", 1, 0, len(frame), len(frame)) + frame)
    (d,) = jsonl(run("dump", "--json", "--profile", vendor, cap).stdout)
    check([c["sue.cmd.name"] for c in d["sue.cmds"]] == ["FENCE", "DOORBELL"], f"{d}")
    check(d["sue.cmds"][1]["vendor.queue"] == 0x0A0B0C and d["errors"] == [], f"{d}")
    out = run("dump", "-T", "fields", "-e", "vendor.queue", "--profile", vendor, cap).stdout
    check(out == f"{0x0A0B0C}\n", out)
    (d,) = jsonl(run("dump", "--json", cap).stdout)
    check(d["errors"], "the default profile does not know code 0x40")
    s = json.loads(run("stats", "--json", "--profile", vendor, cap).stdout)
    check(s["analysed"] == 1, f"stats with the vendor's file: {s['analysed']}")

    # Broken files: exit 2, the entry and the rule named.
    def broken(edit, *words):
        p = json.load(open(DEFAULT_PROFILE))
        edit(p)
        path = tmp("broken.json")
        json.dump(p, open(path, "w"))
        for cmd in ("dump", "stats"):
            r = run(cmd, "--profile", path, cap, expect=2)
            for w in ("--profile", path, *words):
                check(w in r.stderr, f"{cmd}: {w!r} not in {r.stderr}")
    broken(lambda p: p["types"][1].update(code=p["types"][0]["code"]),
           "types[1] (code 2, WR_FULL): code: the same code as types[0]")
    broken(lambda p: p["types"][2].update(control_units=12), "types[2]", "control_units")
    broken(lambda p: p["types"][6]["fields"][2].update(bit=17),
           "types[6] (code 14, WR_RSP): fields[2] (sue.cmd.tag): bit")
    broken(lambda p: p["types"][0].update(data="yes"), "types[0]: data: true or false")
    broken(lambda p: p["types"][0].pop("code"), "types[0]: code: missing")
    broken(lambda p: p["types"][4].update(control_units=1),
           "types[4] (code 10, RD): control fields do not cover the control")
    broken(lambda p: p.pop("types"), "types: a list of command types")
    path = tmp("not.json")
    open(path, "w").write("{ not json")
    r = run("dump", "--profile", path, cap, expect=2)
    check(f"{path}: not JSON" in r.stderr, r.stderr)
    r = run("dump", "--profile", tmp("nothing-here.json"), cap, expect=2)
    check("nothing-here.json' is not none, default or a profile file" in r.stderr, r.stderr)
    print(f"{n} gen traffic captures dissected identically")


def main():
    return cli_test.script_main(globals(), __doc__, SKIP)


if __name__ == "__main__":
    sys.exit(main())
