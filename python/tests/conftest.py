"""What the tests of the `scaleup` module share: the module built in the tree, the `scaleup`
command whose output is the module's contract, captures.

ctest (python/tests/CMakeLists.txt) says where the module and the command are:
SCALEUP_MODULE_DIR, SCALEUP_TOOL. By hand, from the source root after a build in build/
(-m "not pip" leaves out the pip install, which compiles the module again):
  /usr/bin/python3 -m pytest -q -p no:cacheprovider -m "not pip" python/tests
"""
import json
import os
import subprocess
import sys

import pytest

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODULE_DIR = os.environ.get("SCALEUP_MODULE_DIR",
                            os.path.join(SOURCE, "build", "python", "scaleup_ext"))
TOOL = os.environ.get("SCALEUP_TOOL", os.path.join(SOURCE, "build", "tools", "scaleup"))

sys.path.insert(0, MODULE_DIR)
# The RH and R-CRC packed by hand from the seed, independently of the library.
sys.path.insert(0, os.path.join(SOURCE, "tests", "cli"))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "pip: installs the module with pip into a venv (its own ctest)")


def tool(*args):
    """`scaleup ARGS`' standard output."""
    return subprocess.run([TOOL, *args], check=True, capture_output=True, text=True).stdout


def dump_json(path, *opts):
    return [json.loads(line) for line in tool("dump", "--json", *opts, path).splitlines()]


@pytest.fixture(scope="session")
def captures(tmp_path_factory):
    """gen basic (every encapsulation), gen session, and a capture scapy writes: 802.1ad and
    802.1Q tags, SUE over UDP on a port not SUE's, found by its RH."""
    from cli_test import rcrc, rh_bytes
    from scapy.all import IP, UDP, Dot1AD, Dot1Q, Ether, Raw, wrpcap

    d = tmp_path_factory.mktemp("captures")
    basic, session, tagged = str(d / "basic.pcap"), str(d / "session.pcap"), str(d / "tagged.pcap")
    tool("gen", "basic", "--encap", "all", "-o", basic)
    tool("gen", "session", "--commands", "300", "-o", session)
    frames = []
    for i in range(3):
        body = rh_bytes(op=2, xpuid=100 + i, npsn=1000 + i, vc=i % 4, partition=7, apsn=999 + i)
        body += bytes(range(1, i + 2))
        frames.append(Ether(src="02:00:00:00:00:0a", dst="02:00:00:00:00:0b") /
                      Dot1AD(vlan=100) / Dot1Q(vlan=200 + i) /
                      IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=40000 + i, dport=47931) /
                      Raw(body + rcrc(body)))
    wrpcap(tagged, frames)
    return basic, session, tagged
