#!/usr/bin/env python3
"""-Y FILTER (--display-filter) of dump, stats and check (README.md, "Display filters").

usage: display_filter_test.py SCALEUP_BINARY CASE

  usage  an unknown field is a usage error that names it, a syntax error shows where; stats and
         check refuse the names of what they compute; the option is in every command's help
  dump   the frames dump -Y prints are those the filter's conditions, worked out here from
         dump --json, select, each printed as without -Y (summary, -V, JSON, -T fields); the
         same on 2 threads; a Tofu frame reassembled from its slices is filtered too
  stats  stats -Y F on a capture equals stats on the capture of the frames F keeps, cut out by
         editcap -r (an independent tool); the same on 2 threads
  check  the same for check, its violations named by their frame numbers in the whole capture

Which frames a filter keeps is checked against tshark with the Wireshark plugin in
tests/wireshark (wireshark_test.py display_filters); here, what each command does with them.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import cli_test
from cli_test import check, jsonl, run

SKIP = 77


def tmp(name):
    return os.path.join(cli_test.TMP, name)


def session(name, *extra):
    path = tmp(name + ".pcap")
    run("gen", "session", "-o", path, "--xpus", "3", "--loss", "0.05", "--commands", "600",
        "--seed", "4", *extra)
    return path


def frames_of(path, flt, *opts):
    out = run("dump", *opts, "-Y", flt, "-T", "fields", "-e", "frame.number", path).stdout
    return [int(n) for n in out.split()]


def editcap_keep(path, frames, name):
    """The frames numbered `frames` of `path`, in a capture of their own (editcap -r)."""
    editcap = shutil.which("editcap")
    out = tmp(name)
    # editcap takes at most 512 selections an invocation: ranges of consecutive frames.
    ranges, start = [], None
    for i, n in enumerate(frames):
        if start is None:
            start = n
        if i + 1 == len(frames) or frames[i + 1] != n + 1:
            ranges.append(f"{start}-{n}" if start != n else str(n))
            start = None
    check(len(ranges) <= 512, f"{len(ranges)} ranges")
    subprocess.run([editcap, "-r", path, out, *ranges], check=True, capture_output=True)
    return out


def frame_texts(text, form):
    """(frame number, its text) of each frame in dump's output in `form`: a summary line and
    its command lines, a -V block, a JSON line, a -T fields line."""
    out = []
    for line in text.splitlines(keepends=True):
        if form == ["-V"]:
            starts = line.startswith("Frame ")
            number = int(line.split()[1].rstrip(":")) if starts else None
        elif form == []:
            starts = line[:6].strip().isdigit()
            number = int(line[:6]) if starts else None
        elif form == ["--json"]:
            starts, number = True, json.loads(line)["frame"]
        else:
            starts, number = True, int(line.split("\t")[0])
        if starts:
            out.append([number, line])
        else:
            out[-1][1] += line
    return out


def case_usage():
    cap = tmp("basic.pcap")
    run("gen", "basic", "-o", cap, "--count", "2")
    for cmd in ("dump", "stats", "check"):
        p = run(cmd, "-Y", "sue.rh.xpuidd == 7", cap, expect=2)
        check(f"scaleup: {cmd}: -Y: no field is named 'sue.rh.xpuidd'" in p.stderr, p.stderr)
        check("usage:" in p.stderr, p.stderr)
        # Where the syntax broke: the filter, and a mark under the token.
        p = run(cmd, "--display-filter", "frame.number in {1 3}", cap, expect=2)
        lines = p.stderr.splitlines()
        check('-Y: "3" was unexpected here' in lines[0], p.stderr)
        check(lines[1] == "  frame.number in {1 3}" and lines[2] == " " * 21 + "^", p.stderr)
        help_text = run(cmd, "--help").stdout
        check("-Y,--display-filter" in help_text, f"{cmd} --help: {help_text}")
    for args, said in ((["dump", "-Y", "sue.rh.vc == 300"], "at most 255"),
                       (["dump", "-Y", "ip.src == fd00::1"], "is not an IPv4 address"),
                       (["dump", "-Y", "sue.cmd.name", "--profile", "none"],
                        "no field is named 'sue.cmd.name'"),
                       (["stats", "-Y", "sue.analysis.retransmission"], "stats computes"),
                       (["stats", "-Y", "sue.rh.vc == 1 || sue.check.psn.next"], "sue.check"),
                       (["check", "-Y", "sue.check.gbn.resend"], "check judges"),
                       (["check", "-Y", "sue.analysis"], "check judges")):
        p = run(*args, cap, expect=2)
        check(said in p.stderr, f"{args}: {p.stderr}")
    # An empty filter keeps every frame, as tshark's.
    check(run("dump", "-Y", "", cap).stdout == run("dump", cap).stdout, "-Y ''")
    # Every layer a tree of these captures holds is a name a filter takes, for its frames.
    caps = {"all": ["basic", "--encap", "all", "--count", "2"],
            "tofu": ["tofu", "--frames", "10", "--error-rate", "0.001"],
            "rdma": ["rdma", "--transfers", "1", "--loss", "0.05"]}
    layers = set()
    for name, args in caps.items():
        path = tmp(name + ".pcap")
        run("gen", *args, "-o", path)
        for line in run("dump", "-V", path).stdout.splitlines():
            m = re.match(r"^\S.* \(([a-z0-9_.]+)\), bytes \d+-\d+$", line)
            if m and m.group(1) not in layers:
                layers.add(m.group(1))
                check(frames_of(path, m.group(1)), f"-Y {m.group(1)}: no frame of {name}")
    check(len(layers) > 25, f"layers: {sorted(layers)}")


def case_dump():
    cap = session("session")
    traffic = tmp("traffic.pcap")
    run("gen", "traffic", "--pattern", "uniform", "--encap", "udp4,afh1", "-o", traffic)
    # Each filter, and what it selects worked out here from the fields dump --json shows.
    cases = (
        (cap, "sue.rh.vc == 1 && sue.rh.npsn > 20",
         lambda f: f.get("sue.rh.vc") == 1 and f.get("sue.rh.npsn", 0) > 20),
        (cap, "sue.rh.op in {0, 1} || frame.number <= 10",
         lambda f: f.get("sue.rh.op") in (0, 1) or f["frame"] <= 10),
        (cap, "!(ip.dst == 10.0.0.1) && sue.payload.len >= 600",
         lambda f: f.get("ip.dst") != "10.0.0.1" and f.get("sue.payload.len", 0) >= 600),
        (traffic, "sue.cmd.name == BARRIER",
         lambda f: any(c.get("sue.cmd.name") == "BARRIER" for c in f.get("sue.cmds", []))),
        (traffic, "sue.cmd.name != BARRIER",
         lambda f: f.get("sue.cmds") and
         all(c.get("sue.cmd.name") != "BARRIER" for c in f["sue.cmds"])),
        (traffic, "sue.cmd.data_len > 200 && afh1",
         lambda f: f["encap"].startswith("afh1") and
         any(c.get("sue.cmd.data_len", 0) > 200 for c in f.get("sue.cmds", []))),
        # The words, `and` tighter than `or`; `!=` of a field the frame lacks is false, `not`
        # of it true.
        (cap, "sue.rh.npsn < 15 or not sue.rh.vc != 2 and ip.src == 10.0.0.2",
         lambda f: f.get("sue.rh.npsn", 99) < 15 or
         (not ("sue.rh.vc" in f and f["sue.rh.vc"] != 2) and f.get("ip.src") == "10.0.0.2")),
        # contains on a string, a quoted literal, a field alone for presence.
        (traffic, 'sue.cmd.name contains "RD" && sue.cmd.be_first',
         lambda f: any("RD" in c.get("sue.cmd.name", "") for c in f.get("sue.cmds", [])) and
         any("sue.cmd.be_first" in c for c in f.get("sue.cmds", []))),
        (traffic, 'sue.cmd.name == "WR_PART" || ip.dst in {10.0.0.1, 10.0.0.3}',
         lambda f: any(c.get("sue.cmd.name") == "WR_PART" for c in f.get("sue.cmds", [])) or
         f.get("ip.dst") in ("10.0.0.1", "10.0.0.3")),
    )
    # Each capture's output without a filter, in each form, once.
    unfiltered = {}

    def whole_output(path, *form):
        if (path, form) not in unfiltered:
            unfiltered[(path, form)] = run("dump", *form, path).stdout
        return unfiltered[(path, form)]

    for path, flt, wanted in cases:
        whole = jsonl(whole_output(path, "--json"))
        want = [f["frame"] for f in whole if wanted(f)]
        check(0 < len(want) < len(whole), f"{flt}: {len(want)} of {len(whole)} frames")
        check(frames_of(path, flt) == want, f"{flt}: dump keeps {frames_of(path, flt)[:20]}, "
              f"wanted {want[:20]}")
        # Each frame printed as without -Y, in every form; its number as in the capture.
        for form in ([], ["-V"], ["--json"], ["-T", "fields", "-e", "frame.number", "-e",
                                               "sue.rh.npsn", "-e", "sue.cmd.name"]):
            every = whole_output(path, *form)
            got = run("dump", *form, "-Y", flt, path).stdout
            expect = "".join(text for n, text in frame_texts(every, form) if n in want)
            check(got == expect, f"{flt} {form}: not the lines of the frames kept")
            check(run("dump", *form, "--threads", "2", "--batch", "7", "-Y", flt, path).stdout ==
                  got, f"{flt} {form}: 2 threads differ")
    # The sequence analysis and the conformance rules a filter names, on 1 and 2 threads.
    bad = session("misbehave", "--misbehave", "gbn.resend")
    for flt in ("sue.analysis.retransmission && sue.rh.vc == 1", "sue.check.gbn.resend"):
        one = frames_of(bad, flt, "--threads", "1")
        check(one and one == frames_of(bad, flt, "--threads", "2", "--batch", "5"), flt)
    report = json.loads(run("check", "--json", bad, expect=3).stdout)
    fired = [v["frame"] for r in report["rules"] if r["id"] == "gbn.resend" for v in r["first"]]
    check(frames_of(bad, "sue.check.gbn.resend") == fired, f"gbn.resend at {fired}")
    retrans = json.loads(run("stats", "--json", cap).stdout)["retransmissions"]
    check(len(frames_of(cap, "sue.analysis.retransmission")) == retrans,
          f"as many retransmissions as stats counts ({retrans})")
    # A Tofu frame is filtered as the slices are: the frames reassembled from them, by their
    # own fields (tofu.tlp.len is a frame's, not a slice's).
    tofu = tmp("tofu.pcap")
    run("gen", "tofu", "--mode", "split", "--frames", "20", "-o", tofu)
    records = jsonl(run("dump", "--json", tofu).stdout)
    got = jsonl(run("dump", "--json", "-Y", "tofu.tlp.len", tofu).stdout)
    check(got and got == [r for r in records if "tofu.tlp.len" in r], "reassembled Tofu frames")


def case_stats():
    cap = session("session")
    for flt in ("sue.rh.vc == 1 || sue.rh.vc == 3", "frame.number > 500 && ip.addr == 10.0.0.2"):
        kept = frames_of(cap, flt)
        check(0 < len(kept), flt)
        part = editcap_keep(cap, kept, "part.pcap")
        mine = json.loads(run("stats", "--json", "-Y", flt, cap).stdout)
        theirs = json.loads(run("stats", "--json", part).stdout)
        mine.pop("file")
        theirs.pop("file")
        check(mine == theirs, f"stats -Y '{flt}' differs from stats of the frames it keeps:\n"
              f"{json.dumps(mine)[:1500]}\n{json.dumps(theirs)[:1500]}")
        check(mine["frames"] == len(kept), "frames counts the frames kept")
        check(run("stats", "--json", "--threads", "2", "--batch", "7", "-Y", flt, cap).stdout ==
              run("stats", "--json", "--threads", "1", "-Y", flt, cap).stdout, f"{flt}: threads")
        check(run("stats", "-Y", flt, cap).stdout.splitlines()[1:] ==
              run("stats", part).stdout.splitlines()[1:], f"{flt}: the table")


def case_check():
    bad = session("misbehave", "--misbehave", "gbn.resend")
    report = json.loads(run("check", "--json", bad, expect=3).stdout)
    frame = [v["frame"] for r in report["rules"] if r["id"] == "gbn.resend" for v in r["first"]][0]
    vc = int(run("dump", "-T", "fields", "-e", "sue.rh.vc", "-Y", f"frame.number == {frame}",
                 bad).stdout)
    for flt, violated in ((f"sue.rh.vc == {vc}", True), (f"sue.rh.vc != {vc}", False)):
        kept = frames_of(bad, flt)
        part = editcap_keep(bad, kept, "part.pcap")
        mine = json.loads(run("check", "--json", "-Y", flt, bad, expect=3 if violated else 0)
                          .stdout)
        theirs = json.loads(run("check", "--json", part, expect=3 if violated else 0).stdout)
        # The violations are named by their numbers in the whole capture.
        for r in theirs["rules"]:
            for v in r["first"]:
                v["frame"] = kept[v["frame"] - 1]
        mine.pop("file")
        theirs.pop("file")
        check(mine == theirs, f"check -Y '{flt}' differs from check of the frames it keeps:\n"
              f"{json.dumps(mine)[:1500]}\n{json.dumps(theirs)[:1500]}")
        check(mine["frames"] == len(kept), "frames counts the frames kept")
        if violated:
            got = [v["frame"] for r in mine["rules"] if r["id"] == "gbn.resend"
                   for v in r["first"]]
            check(got == [frame], f"gbn.resend at {got}, wanted {frame}")


def main():
    return cli_test.script_main(globals(), __doc__, SKIP)


if __name__ == "__main__":
    sys.exit(main())
