"""Builds the `scaleup` Python module for pip: `python3 -m pip install --no-build-isolation .`

CMake builds the module here as it does in the project's own tree (python/scaleup_ext/
CMakeLists.txt), rather than setuptools compiling the sources itself: what the module is made of
(module.cpp, builders.cpp and the application library app/ they link), how libpcap, zlib,
nlohmann-json, Boost and pybind11 are found and which C++ standard and warnings apply are then
written once, in CMake. setuptools configures the project with the parts the module does not
need left out, builds the one target and puts the module in the wheel. Nothing is downloaded:
every dependency is the system's (Debian: pybind11-dev, libpcap-dev, zlib1g-dev,
nlohmann-json3-dev, libboost-dev, cmake; `./run deps` installs them).

Environment: SCALEUP_CMAKE_ARGS, more arguments for CMake's configure (shell words), e.g.
"-DCMAKE_BUILD_TYPE=Debug" or "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"; CMAKE_BUILD_PARALLEL_LEVEL,
the build's jobs.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
# setuptools' build directory, and CMake's build tree in it: not build/, where the project's own
# CMake tree usually is.
BUILD_BASE = "build-python"


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(scaleup\s+VERSION\s+([0-9.]+)", f.read()).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        # One level below the source, as the project's own build/ is: the compilations are then
        # the same as that tree's for a compiler cache that makes paths relative to a base.
        tree = os.path.abspath(os.path.join(ROOT, BUILD_BASE))
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        configure = [
            "cmake", "-S", ROOT, "-B", tree, *generator,
            "-DCMAKE_BUILD_TYPE=Release",
            # The interpreter pip runs (a venv's too) decides the module's name and headers.
            f"-DPYTHON_EXECUTABLE={sys.executable}",
            # Only the module and what it links: no tests, install rules, plugin or ns-3.
            "-DBUILD_TESTING=OFF", "-DSCALEUP_INSTALL=OFF", "-DSCALEUP_WIRESHARK=OFF",
            "-DSCALEUP_NS3=OFF",
            # A warning a newer compiler adds must not stop an install (the project's CI keeps
            # -Werror).
            "-DSCALEUP_WERROR=OFF",
            *shlex.split(os.environ.get("SCALEUP_CMAKE_ARGS", "")),
        ]
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", tree, "--target", "scaleup_python"], check=True)
        built = glob.glob(os.path.join(tree, "python", "scaleup_ext", "scaleup.*"))
        built = [p for p in built if p.endswith((".so", ".pyd", ".dylib"))]
        if len(built) != 1:
            raise RuntimeError(f"the scaleup_python target left {built or 'no module'} in {tree}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


os.makedirs(os.path.join(ROOT, BUILD_BASE), exist_ok=True)
setup(
    version=project_version(),
    ext_modules=[Extension("scaleup", sources=[])],
    # The scapy layer (generated, python/scaleup_scapy.py) beside it; no other Python package
    # in this tree is one.
    package_dir={"": "python"},
    py_modules=["scaleup_scapy"],
    packages=[],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}},
    zip_safe=False,
)
