#!/usr/bin/env python3
"""Wireshark's own robustness method on our plugin: damaged captures through tshark.

usage: corrupt_test.py SCALEUP PLUGIN VERSION_DIR

Every scenario `scaleup gen` writes (each link type: Ethernet, AFH Gen 2 on 147, Tofu slices on
148, RDMA on 149) is corrupted with `editcap -E RATE --seed SEED` at each rate and seed below,
the damaged copies of a scenario are put one after the other in one file (mergecap -a), and the
files of all scenarios one after the other in one pcapng (an interface for each link type); it goes
through
  - tshark, two passes, the full tree of every frame and the conversation and endpoint tables
    (`tshark -2 -V -z conv,sue -z endpoints,sue`), with the plugin;
  - `scaleup dump -v` and `scaleup stats`.
Each must exit 0 with no sanitizer report, no dissector bug and no crash. The point is the
sanitizers: the ctest `wireshark_corrupt` is registered only in a SCALEUP_SANITIZE build (the
`asan` preset), where the plugin and `scaleup` carry AddressSanitizer and UBSan and tshark gets
their runtimes preloaded (wireshark_test.py, SCALEUP_TSHARK_PRELOAD); the test refuses a plugin
built without them. As root it runs tshark as nobody, as wireshark_test.py does.
"""
import os
import re
import subprocess
import sys
import time

import wireshark_test as wt


RATES = ("0.001", "0.01", "0.05")
SEEDS = ("1", "2", "3")

# name -> `scaleup gen` arguments: every scenario and encapsulation family, each link type.
SCENARIOS = {
    "basic": ["basic", "--count", "8"],
    "basic-afh2-link": ["basic", "--link", "afh2", "--encap", "afh2,afh2c,lite", "--count", "8"],
    "traffic-uniform": ["traffic", "--pattern", "uniform", "--encap", "all"],
    "traffic-incast-afh2-link": ["traffic", "--pattern", "incast", "--encap", "afh2,afh2c,lite",
                                 "--link", "afh2"],
    "traffic-fig21": ["traffic", "--pattern", "fig21", "--encap", "all"],
    "session-udp4": ["session", "--xpus", "4", "--ports", "2", "--loss", "0.05",
                     "--duplicate", "0.01", "--reorder", "0.01", "--commands", "600",
                     "--seed", "3"],
    "session-afh1-vlan-shim": ["session", "--xpus", "4", "--loss", "0.05", "--commands", "400",
                               "--encap", "afh1-vlan-shim"],
    "session-afh2c": ["session", "--xpus", "4", "--loss", "0.05", "--unordered", "--ports", "2",
                      "--commands", "400", "--encap", "afh2c"],
    "tofu-split": ["tofu", "--mode", "split", "--frames", "40", "--error-rate", "0.001"],
    "tofu-adaptive": ["tofu", "--mode", "adaptive", "--frames", "60", "--error-rate", "0.01"],
    "rdma": ["rdma", "--transfers", "6", "--loss", "0.02"],
}

PROTOCOLS_IN_FRAME = re.compile(r"^    \[Protocols in frame: ([^\]]*)\]$", re.M)


def plugin_protocols():
    """The filter names of the protocols the plugin registers (tshark -G protocols, with and
    without it)."""
    def names(plugin_dir):
        env = dict(wt.tshark_env(), WIRESHARK_PLUGIN_DIR=plugin_dir)
        out = wt.run(wt.tshark_cmd("-G", "protocols"), env=env).stdout
        return {line.split("\t")[2] for line in out.splitlines() if line.count("\t") == 2}
    empty = os.path.join(wt.TMP, "no-plugins")
    os.makedirs(empty, mode=0o755)
    ours = names(wt.PLUGIN_DIR) - names(empty)
    wt.check({"sue", "tofu", "rdma"} <= ours, f"the plugin's protocols: {sorted(ours)}")
    return ours


def plugin_is_sanitized():
    with open(wt.PLUGIN, "rb") as f:
        data = f.read()
    return b"__asan_report_load" in data and b"__ubsan_handle" in data


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    wt.SCALEUP, wt.PLUGIN, wt.VERSION_DIR = sys.argv[1:4]
    wt.check(wt.EDITCAP, "editcap not found")
    wt.check(wt.MERGECAP, "mergecap not found")
    wt.check(plugin_is_sanitized(), f"{wt.PLUGIN} is not built with ASan and UBSan "
             "(configure with the asan preset)")
    wt.check(os.environ.get("SCALEUP_TSHARK_PRELOAD"), "SCALEUP_TSHARK_PRELOAD is not set: "
             "tshark cannot load a sanitizer build of the plugin")
    wt.setup()
    started = time.monotonic()
    try:
        # The sanitizer runtime is live in tshark and the plugin loaded under it.
        env = wt.tshark_env()
        env["ASAN_OPTIONS"] += ":verbosity=1"
        p = subprocess.run(wt.tshark_cmd("-G", "plugins"), capture_output=True, text=True,
                           env=env)
        wt.check(p.returncode == 0 and "scaleup.so" in p.stdout,
                 f"tshark does not load the plugin: {p.stdout[-2000:]} {p.stderr[-2000:]}")
        wt.check("AddressSanitizer Init done" in p.stderr,
                 f"no AddressSanitizer runtime in tshark: {p.stderr[-2000:]}")
        protocols = plugin_protocols()
        files = 0
        scenarios = []  # (name, frames of its damaged copies)
        merged = []
        for name, args in SCENARIOS.items():
            clean, _ = wt.capture(name, *args)
            copies = []
            for rate in RATES:
                for seed in SEEDS:
                    bad = os.path.join(wt.TMP, f"{name}-{rate}-{seed}.pcap")
                    wt.run([wt.EDITCAP, "-E", rate, "--seed", seed, "-F", "pcap", clean, bad])
                    copies.append(bad)
            # The copies one after the other in one file: the flows of each copy meet those of
            # the others, which the analysis must take as well.
            bad = wt.concatenated(f"{name}-corrupted", copies)
            scenarios.append((name, sum(wt.pcap_records(c) for c in copies)))
            merged.append(bad)
            files += len(copies)
        # Every scenario's file one after the other in one pcapng of several link types (an
        # interface each): one tshark start in all (under the sanitizers a start costs seconds).
        everything = wt.concatenated("all-corrupted", merged)
        out = wt.tshark("-r", everything, "-2", "-V", "-z", "conv,sue", "-z",
                        "endpoints,sue").stdout
        stacks = PROTOCOLS_IN_FRAME.findall(out)
        wt.check(len(stacks) == sum(n for _, n in scenarios),
                 f"tshark read {len(stacks)} frames of {sum(n for _, n in scenarios)}")
        frames = ours = 0
        for name, n in scenarios:
            k = sum(1 for st in stacks[frames:frames + n] if protocols & set(st.split(":")))
            wt.check(n > 0 and k > 0, f"{name}: {n} frames, {k} of ours in tshark")
            print(f"{name}: {n} frames of corrupted copies, {k} dissected by the plugin")
            frames += n
            ours += k
        wt.scaleup("dump", "-v", everything)
        wt.scaleup("stats", everything)
        print(f"{files} corrupted files, {frames} frames ({ours} dissected by the plugin) "
              f"through tshark -2 -V, scaleup dump -v and scaleup stats: no sanitizer report, "
              f"{time.monotonic() - started:.0f} s")
    finally:
        wt.shutil.rmtree(wt.TMP, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
