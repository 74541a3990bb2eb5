"""pip install . for the Python package hapticprep (docs/python.md, "Install with pip").

The package is the project's CMake target hapticprep_python: scikit-build configures the whole
project with its tests off and builds and installs only that target (the CMake component
`python`), so the executables are not built. Set HP_CMAKE_ARGS for extra CMake arguments
(e.g. "-DCMAKE_BUILD_TYPE=RelWithDebInfo") and CMAKE_BUILD_PARALLEL_LEVEL for the build's jobs.

HP_PREBUILT=DIR packages an extension that is already built instead, from DIR/hapticprep (a
build tree's <build>/python): the same package and metadata without a second compile. The
project's own install test uses it.
"""
import os
import re
import shlex
from pathlib import Path

HERE = Path(__file__).resolve().parent


def project_version():
    text = (HERE / "CMakeLists.txt").read_text()
    match = re.search(r"project\(hapticprep VERSION ([0-9.]+)", text)
    if not match:
        raise SystemExit("setup.py: CMakeLists.txt has no 'project(hapticprep VERSION x.y.z)'")
    return match.group(1)


METADATA = dict(
    name="hapticprep",
    version=project_version(),
    description="Haptic rendering data structures (voxelmaps, distance fields, pointshells, "
    "CFMs) and the VPS query, from Python",
    long_description=(HERE / "docs" / "python.md").read_text(),
    long_description_content_type="text/markdown",
    license="Proprietary",
    python_requires=">=3.9",
    install_requires=["numpy"],
    packages=["hapticprep"],
    zip_safe=False,
    # setuptools' own scratch directories outside the CMake build directory (build/)
    options={"build": {"build_base": "_skbuild/setuptools"},
             "egg_info": {"egg_base": "_skbuild"}},
)

(HERE / "_skbuild").mkdir(exist_ok=True)
prebuilt = os.environ.get("HP_PREBUILT")
if prebuilt:
    from setuptools import setup

    package_dir = Path(prebuilt).resolve() / "hapticprep"
    if not any(package_dir.glob("_hapticprep*.so")):
        raise SystemExit(f"setup.py: HP_PREBUILT={prebuilt}: no hapticprep/_hapticprep*.so there; "
                         "build the project first (make build) or unset HP_PREBUILT")
    setup(package_dir={"hapticprep": os.path.relpath(package_dir, HERE)},
          package_data={"hapticprep": ["_hapticprep*.so", "hapticprep_*.so"]},
          **METADATA)
else:
    from skbuild import setup

    # CMake installs the extension below the package's source directory, where scikit-build
    # takes the package's files from (given here too, over an older build's cached value).
    package_source = Path("python") / "hapticprep"
    setup(package_dir={"hapticprep": package_source.as_posix()},
          cmake_args=["-DHP_BUILD_TESTS=OFF", "-DHP_PYTHON_WHEEL=ON",
                      f"-DHP_PYTHON_INSTALL_DIR={package_source.parent.as_posix()}",
                      *shlex.split(os.environ.get("HP_CMAKE_ARGS", ""))],
          cmake_install_target="install-python",
          **METADATA)
