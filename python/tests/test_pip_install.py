"""`python3 -m pip install --no-build-isolation .` from a copy of the source tree, into a venv
made with --system-site-packages (Debian's pip refuses to install into the system's Python,
PEP 668; the venv sees its numpy and setuptools). --no-index makes anything pip would have to
fetch an error. The installed module, imported outside any source tree, reads a capture as
`scaleup dump --json` does and builds a frame.

Its own ctest (python_pip_install): it compiles the module, which the others do not.
SCALEUP_PIP_WORK is where it works (ctest: in the build tree), SCALEUP_CMAKE_ARGS what ctest
passes to the module's CMake configure so that the compilations are the build tree's, which a
compiler cache then has."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import SOURCE, dump_json, tool

pytestmark = pytest.mark.pip

CHECK = """
import json, sys
import scaleup, scaleup_scapy
assert scaleup.__file__.startswith(sys.prefix), scaleup.__file__
assert scaleup_scapy.__file__.startswith(sys.prefix), scaleup_scapy.__file__
frame = scaleup.frame("afh1-shim", src_xpu=1, dst_xpu=2, tc=3, rh={"npsn": 5},
                      commands=[{"type": "BARRIER", "tag": 9}])
scaleup.write_pcap("built.pcap", [frame])
built = next(scaleup.read("built.pcap"))
assert (built["afh1.shim.tc"], built["sue.rh.npsn"], built["sue.cmds"][0]["sue.cmd.tag"]) == \\
    (3, 5, 9), built
print(json.dumps(list(scaleup.read(sys.argv[1]))))
"""


def source_copy(dst):
    """The source tree without its build trees (any directory with a CMakeCache.txt, build*/)
    and version control, as a fresh clone has it."""
    def ignore(directory, names):
        def build_tree(n):
            path = os.path.join(directory, n)
            return os.path.isdir(path) and (
                directory == SOURCE and n.startswith("build") or
                os.path.exists(os.path.join(path, "CMakeCache.txt")))
        return [n for n in names if n in (".git", "__pycache__") or build_tree(n)]
    shutil.copytree(SOURCE, dst, ignore=ignore)


def test_pip_install(tmp_path):
    work = os.environ.get("SCALEUP_PIP_WORK", str(tmp_path))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    src, venv = os.path.join(work, "src"), os.path.join(work, "venv")
    source_copy(src)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    venv], check=True)
    python = os.path.join(venv, "bin", "python3")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "SCALEUP_MODULE_DIR")}
    # The venv has no pip of its own: the system's runs in it and installs into it.
    r = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                        "--no-cache-dir", "."], cwd=src, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "Successfully installed scaleup-" in r.stdout

    capture = os.path.join(work, "basic.pcap")
    tool("gen", "basic", "--encap", "all", "-o", capture)
    r = subprocess.run([python, "-c", CHECK, capture], cwd=work, env=env, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == dump_json(capture)
