#!/usr/bin/env python3
"""`dump`, `stats` and `check` on several threads (--threads N) print exactly what one thread
prints.

usage: threads_test.py SCALEUP_BINARY CASE

Each capture is read with --threads 1, 2 and 4, with the default batch and with small batches
(the hidden --batch) so that frames whose dissection depends on earlier ones (a UDP flow found
SUE by an earlier datagram, an IP fragment, a Tofu slice completing a frame) fall in other
batches than those frames, on other threads. The outputs must be byte-identical. Each case also
checks that its capture has what makes the order matter, so that a comparison of empty or
trivial outputs cannot pass for one of these.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_test
import ip_reassembly_test
from cli_test import check, jsonl, run

THREADS = ("1", "2", "4")
BATCHES = (None, "1", "7", "64")


def outputs(*args, expect=0):
    """stdout of `scaleup ARGS` for every thread count and batch size, keyed by them (one thread
    reads frame by frame, without batches: the default batch only)."""
    out = {}
    for t in THREADS:
        for b in BATCHES if t != "1" else (None,):
            extra = ["--threads", t] + (["--batch", b] if b else [])
            out[(t, b)] = run(*args[:1], *extra, *args[1:], expect=expect).stdout
    return out


def same(what, *args, expect=0):
    """The forms of `what` agree for every thread count and batch; returns the serial one."""
    got = outputs(*args, expect=expect)
    serial = got[("1", None)]
    check(serial.strip(), f"{what}: no output")
    for k, v in got.items():
        if v != serial:
            a, b = serial.splitlines(), v.splitlines()
            i = next((n for n, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            fail_at = f"line {i + 1}: {a[i] if i < len(a) else '<end>'!r} vs " \
                      f"{b[i] if i < len(b) else '<end>'!r}"
            check(False, f"{what}: --threads {k[0]} --batch {k[1]} differs from --threads 1, "
                         f"{fail_at}")
    return serial


def dump_forms(cap, *opts):
    """dump as JSON, text, -V and -T fields; returns the JSON's frames."""
    frames = jsonl(same("dump --json", "dump", "--json", *opts, cap))
    same("dump", "dump", *opts, cap)
    same("dump -V", "dump", "-V", *opts, cap)
    same("dump -T fields", "dump", "-T", "fields", "-e", "frame.number", "-e",
         "frame.time_delta", "-e", "sue.rh.npsn", "-e", "sue.rcrc.status", *opts, cap)
    return frames


def stats_same(cap, *opts):
    return json.loads(same("stats --json", "stats", "--json", *opts, cap))


def check_same(cap, *opts):
    """check's report (JSON and text) on every thread count; it exits 0 or 3 (violations), the
    same on each. Returns the JSON report."""
    p = run("check", "--json", "--threads", "1", *opts, cap, expect=None)
    check(p.returncode in (0, 3), f"check: exit {p.returncode}\n{p.stderr}")
    same("check", "check", *opts, cap, expect=p.returncode)
    return json.loads(same("check --json", "check", "--json", *opts, cap, expect=p.returncode))


def session(path, commands=1500):
    run("gen", "session", "-o", path, "--loss", "0.03", "--duplicate", "0.01", "--reorder",
        "0.01", "--commands", str(commands), "--seed", "5")


def case_basic():
    cap = os.path.join(cli_test.TMP, "basic.pcap")
    # 300 of each encapsulation: over five of the default batches (512 frames) and hundreds of
    # the small ones.
    run("gen", "basic", "-o", cap, "--encap", "all", "--count", "300")
    frames = dump_forms(cap)
    encaps = {f["encap"] for f in frames}
    check(len(frames) >= 2600 and len(encaps) >= 5, f"{len(frames)} frames, encaps {encaps}")
    s = stats_same(cap)
    check(s["analysed"] > 0, f"{s}")
    c = check_same(cap)
    check(c["pdus"] > 0 and c["violations"] > 0, f"{str(c)[:300]}")


def case_session():
    cap = os.path.join(cli_test.TMP, "session.pcap")
    session(cap)
    # No port named: every flow is found SUE by its first datagram's payload (the heuristic),
    # and its later datagrams are SUE by the flow table (wire/udp_flow.hpp).
    frames = dump_forms(cap)
    check(len(frames) > 1000 and all(f["encap"] == "udp4" for f in frames),
          f"{len(frames)} frames, {set(f['encap'] for f in frames)}")
    s = stats_same(cap)
    check(s["retransmissions"] > 0 and s["connection_count"] > 1, f"{s}")
    c = check_same(cap)
    check(c["pdus"] == len(frames), f"check took {c['pdus']} of {len(frames)} PDUs")


def case_fragments():
    """IP fragments (IPv4 and IPv6, shuffled, one duplicated) between the frames of a session:
    reassembly runs in frame order on the reading thread."""
    parts = [os.path.join(cli_test.TMP, "s.pcap")]
    session(parts[0], 400)
    for v6 in (False, True):
        parts.append(ip_reassembly_test.capture(v6)[0])
    cap = os.path.join(cli_test.TMP, "mixed.pcapng")
    # Concatenated (-a): a session, the IPv4 fragments, the IPv6 ones, the session again.
    subprocess.run(["mergecap", "-a", "-w", cap, *parts, parts[0]], check=True,
                   capture_output=True)
    port = ("--udp-port", str(ip_reassembly_test.PORT))
    frames = dump_forms(cap, *port)
    done = [f for f in frames if "ip.reassembled.length" in f or "ipv6.reassembled.length" in f]
    check(len(done) == 2 * ip_reassembly_test.PDUS, f"{len(done)} datagrams reassembled")
    check(all(f["sue.rcrc.status"] == "good" for f in done), f"{done[:1]}")
    s = stats_same(cap, *port)
    check(s["analysed"] > 2 * ip_reassembly_test.PDUS, f"{s}")
    c = check_same(cap, *port)
    check(c["pdus"] >= s["analysed"], f"check took {c['pdus']} PDUs, stats {s['analysed']}")


def case_cut_session():
    """A header-only capture (editcap -s 80): a cut datagram is SUE only on a flow or port that a
    whole one showed SUE before; dump reads once and leaves the earlier ones UDP, stats reads
    the file a second time with what the first pass learned."""
    cap, cut = os.path.join(cli_test.TMP, "session.pcap"), os.path.join(cli_test.TMP, "cut.pcap")
    session(cap)
    subprocess.run(["editcap", "-s", "80", cap, cut], check=True, capture_output=True)
    frames = dump_forms(cut)
    unconfirmed = [f for f in frames if any("not confirmed" in e["what"] for e in f["errors"])]
    check(unconfirmed and len(unconfirmed) < len(frames) // 2,
          f"{len(unconfirmed)} of {len(frames)} frames left UDP")
    whole = json.loads(run("stats", "--json", "--threads", "1", cap).stdout)
    s = stats_same(cut)
    c = check_same(cut)
    check(c["pdus"] == whole["frames"], f"check took {c['pdus']} of {whole['frames']}")
    # The second pass gives the whole capture's figures.
    check({k: v for k, v in s.items() if k != "file"} ==
          {k: v for k, v in whole.items() if k != "file"}, f"{s}\nwhole: {whole}")


def case_cut_late_flow():
    """A header-only capture long enough that stats knows early that it will read the file again
    (read_again: asked every 4096 frames): the rest of the first pass then only teaches the flow
    table, and must still learn a flow first seen after that. Here, an IPv6 session on a port of
    its own (its UDP ports rewritten) follows an IPv4 one (mergecap -a); cut, it must give the
    figures of the whole file."""
    tmp = cli_test.TMP
    a, b, b2 = (os.path.join(tmp, n) for n in ("late-a.pcap", "late-b.pcap", "late-b2.pcap"))
    whole, cut = os.path.join(tmp, "late.pcap"), os.path.join(tmp, "late-cut.pcap")
    session(a, commands=6000)
    run("gen", "session", "-o", b, "--encap", "udp6", "--loss", "0.03", "--commands", "800",
        "--seed", "6")
    order, nsec, snaplen, link, records = cli_test.read_pcap(b)
    moved = []
    for sec, frac, orig, data in records:
        # Ethernet, IPv6 (next header 17 at byte 20), UDP: both ports at bytes 54-57.
        check(data[12:14] == b"\x86\xdd" and data[20] == 17, f"not UDP over IPv6: {data[:24]}")
        moved.append((sec, frac, orig, data[:54] + struct.pack(">HH", 61807, 61807) + data[58:]))
    cli_test.write_pcap(b2, order, nsec, snaplen, link, moved)
    subprocess.run(["mergecap", "-a", "-F", "pcap", "-w", whole, a, b2], check=True,
                   capture_output=True)
    subprocess.run(["editcap", "-s", "80", whole, cut], check=True, capture_output=True)
    first_v6 = len(cli_test.read_pcap(a)[4])
    check(first_v6 > 4096, f"the IPv6 session starts at frame {first_v6 + 1}")
    full = json.loads(run("stats", "--json", "--threads", "1", whole).stdout)
    check(full["left_out"] == 0, f"{full['left_out']} frames left out of the whole file")
    v6 = sum(c["pdus"] for c in full["connections"] if ":" in c["src_ip"])
    check(v6 > 400, f"{v6} PDUs over IPv6")
    s = stats_same(cut)
    for key in set(s) | set(full):
        check(key == "file" or s.get(key) == full.get(key),
              f"{key}: cut {str(s.get(key))[:300]}\nwhole {str(full.get(key))[:300]}")
    # check reads a cut file the same way: as if both ports had been named.
    judged = check_same(cut)
    named = json.loads(run("check", "--json", "--udp-port", "61793", "--udp-port", "61807",
                           cut).stdout)
    check(judged["pdus"] == full["frames"], f"check took {judged['pdus']} of {full['frames']}")
    check(judged == named, f"check: {str(judged)[:300]}\nports named: {str(named)[:300]}")


def case_tofu():
    cap = os.path.join(cli_test.TMP, "t.pcap")
    run("gen", "tofu", "-o", cap, "--error-rate", "2e-5", "--frames", "300", "--seed", "2")
    frames = dump_forms(cap)
    whole = [f for f in frames if f["encap"] == "tofu.frame"]
    check(len(whole) >= 300, f"{len(whole)} Tofu frames reassembled")


def case_usage():
    cap = os.path.join(cli_test.TMP, "b.pcap")
    run("gen", "basic", "-o", cap, "--count", "3")
    for cmd in ("dump", "stats", "check"):
        p = run(cmd, "--threads", "0", cap, expect=2)
        check("--threads" in p.stderr, p.stderr)
        run(cmd, "--threads", "x", cap, expect=2)
    # --interval prints tables as frames come: it reads on one thread, whatever --threads says.
    p = run("stats", "--interval", "100", "--threads", "4", cap)
    check("totals" in p.stdout, p.stdout)
    # At most 64 (each thread costs memory: docs/robustness.md); the default stays under it.
    p = run("dump", "--threads", "65", cap, expect=2)
    check("--threads" in p.stderr and "64" in p.stderr, p.stderr)
    run("dump", "--threads", "64", cap)
    fewer_threads_start()


def fewer_threads_start():
    """Where the process may start fewer threads than asked (RLIMIT_NPROC, as for a user with a
    low `ulimit -u`), the reading runs on those that started and prints what one thread prints.
    Run as a user id of its own, whose processes nothing else counts (root ignores the limit)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return
    d = tempfile.mkdtemp()
    try:
        os.chmod(d, 0o755)
        cap = os.path.join(d, "s.pcap")
        run("gen", "session", "--commands", "3000", "-o", cap)
        os.chmod(cap, 0o644)
        want = run("dump", "--json", "--threads", "1", cap).stdout
        for cmd in (["dump", "--json"], ["stats", "--json"]):
            want = run(*cmd, "--threads", "1", cap).stdout
            p = subprocess.run(
                ["setpriv", "--reuid=54321", "--regid=54321", "--clear-groups", "bash", "-c",
                 'ulimit -u 4 && exec "$@"', "-", cli_test.SCALEUP, *cmd, "--threads", "16", cap],
                capture_output=True, text=True, timeout=300)
            check(p.returncode == 0, f"{cmd} under ulimit -u 4: exit {p.returncode}\n{p.stderr}")
            check(p.stdout == want, f"{cmd} under ulimit -u 4 differs from --threads 1")
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    sys.exit(cli_test.script_main(globals(), __doc__))
