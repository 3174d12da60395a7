"""Builds the paulistrings Python package with CMake, offline.

``pip install --no-build-isolation .`` (or ``python3 setup.py build``) configures the repository
with CMake (tests and examples off), builds the ``paulistrings-python`` target — the pybind11
extension ``paulistrings._core`` linked with the C++ library — and packages what CMake assembled
in ``<cmake build dir>/python/paulistrings``. Needs CMake ≥ 3.25, a C++20 compiler, OpenMP,
nlohmann-json, CLI11 headers, pybind11 and the Python headers (Debian: cmake g++ ninja-build
nlohmann-json3-dev libcli11-dev pybind11-dev python3-dev python3-numpy); nothing is downloaded.
With libopenmpi-dev and python3-mpi4py installed, comm= (MPI through an mpi4py communicator) is
compiled in too.

Environment:
  PAULISTRINGS_CMAKE_BUILD_DIR  CMake build tree (default: build-wheel/cmake in the repository,
                                reused between installs so a second install only relinks)
  PAULISTRINGS_BUILD_JOBS       parallel build jobs (default: 2)
"""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(ROOT, "build-wheel")


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def run(self):
        cmake = shutil.which("cmake")
        if cmake is None:
            raise RuntimeError("building paulistrings needs CMake >= 3.25 (Debian: apt-get install cmake)")
        build_dir = os.environ.get("PAULISTRINGS_CMAKE_BUILD_DIR", os.path.join(WORK, "cmake"))
        os.makedirs(build_dir, exist_ok=True)
        configure = [
            cmake, "-S", ROOT, "-B", build_dir,
            "-DCMAKE_BUILD_TYPE=Release",
            "-DPAULISTRINGS_BUILD_TESTS=OFF",
            "-DPAULISTRINGS_BUILD_EXAMPLES=OFF",
            "-DPAULISTRINGS_BUILD_PYTHON=ON",
            f"-DPython3_EXECUTABLE={sys.executable}",
        ]
        cached = os.path.join(build_dir, "CMakeCache.txt")
        if not os.path.exists(cached) and shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        subprocess.check_call(configure)
        jobs = os.environ.get("PAULISTRINGS_BUILD_JOBS", "2")
        subprocess.check_call([cmake, "--build", build_dir, "--target", "paulistrings-python", "-j", jobs])

        package = os.path.join(build_dir, "python", "paulistrings")
        built = glob.glob(os.path.join(package, "_core*.so")) + glob.glob(os.path.join(package, "_core*.pyd"))
        if not built:
            raise RuntimeError(
                f"CMake did not produce the extension in {package}: is pybind11 installed "
                "(Debian: pybind11-dev) and are the Python headers present (python3-dev)?"
            )
        for ext in self.extensions:
            target = self.get_ext_fullpath(ext.name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(built[0], target)


os.makedirs(WORK, exist_ok=True)  # egg-info goes here rather than into python/

setup(
    package_dir={"": "python"},
    packages=["paulistrings"],
    ext_modules=[CMakeExtension("paulistrings._core")],
    cmdclass={"build_ext": CMakeBuild},
    options={
        "build": {"build_base": os.path.join("build-wheel", "setuptools")},
        "egg_info": {"egg_base": "build-wheel"},
    },
    zip_safe=False,
)
