#!/usr/bin/env python3
"""scripts/setup's decisions, with every command it runs replaced by a stub on PATH.

Nothing is installed, downloaded or compiled: dpkg-query answers from a list of installed
packages, apt-get, pip and cmake record their arguments, cmake writes a CMakeCache.txt of the
-D values it was given. What is checked is what setup decides: which Debian packages the quick
start and --tests install, when it configures and with which options, which targets it builds,
and that every phase is announced and closed with its time.

    python3 tests/scripts/setup_test.py [REPO]     (unittest; exit 0: all passed)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from device_deps_test import bash_array  # noqa: E402  (one parser of setup's package lists)

REPO = Path(__file__).resolve().parents[2]

# The stubs. STATE is the folder where they keep what is installed and what was called.
DPKG_QUERY = """#!/bin/sh
package=$(for a in "$@"; do :; done; echo "$a")
grep -qx "$package" "$STATE/installed" 2>/dev/null || exit 1
echo "install ok installed"
"""
APT_GET = """#!/bin/sh
echo "apt-get $*" >>"$STATE/calls"
[ "$1" = install ] || exit 0
for a in "$@"; do
  case "$a" in install|-*) ;; *) echo "$a" >>"$STATE/installed" ;; esac
done
"""
SUDO = """#!/bin/sh
exec "$@"
"""
ID = """#!/bin/sh
echo 1000
"""
# python3 -m venv DIR: a venv whose python knows torch once pip has "installed" it.
PYTHON3 = """#!/bin/sh
[ "$1 $2" = "-m venv" ] || exit 1
mkdir -p "$3/bin"
cp "$STATE/venv_python" "$3/bin/python"
echo "python3 -m venv $3" >>"$STATE/calls"
"""
# It knows the reference engine's packages once pip has "installed" them.
VENV_PYTHON = """#!/bin/sh
case "$*" in
  *"-m pip install"*diffusers*)
    echo "pip $*" >>"$STATE/calls"
    touch "$STATE/engine" ;;
  *"-m pip install"*)
    echo "pip $*" >>"$STATE/calls"
    echo "Downloading torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl (1.0 MB)"
    touch "$STATE/torch" ;;
  *diffusers==*) [ -f "$STATE/engine" ] ;;
  *cmake_prefix_path*) [ -f "$STATE/torch" ] && echo /stub/torch/share/cmake ;;
  *) [ -f "$STATE/torch" ] ;;
esac
"""
CMAKE = """#!{python}
import os, re, sys
from pathlib import Path
args = sys.argv[1:]
with open(os.path.join(os.environ["STATE"], "calls"), "a") as calls:
    calls.write("cmake " + " ".join(args) + "\\n")
if "-B" in args:
    build = Path(args[args.index("-B") + 1])
    build.mkdir(parents=True, exist_ok=True)
    cache = build / "CMakeCache.txt"
    values = {{}}
    if cache.exists():
        for line in cache.read_text().splitlines():
            name, value = line.split("=", 1)
            values[name.split(":")[0]] = value
    for a in args:
        if a.startswith("-D"):
            name, value = a[2:].split("=", 1)
            values[name.split(":")[0]] = value
    cache.write_text("".join(f"{{n}}:STRING={{v}}\\n" for n, v in values.items()))
    (build / "build.ninja").write_text("")
elif args[:1] == ["--build"] and os.path.exists(os.path.join(os.environ["STATE"], "stale")):
    print("[1/1] Re-running CMake...")
elif args[:1] == ["--build"]:
    print("".join(f"[{{i}}/3] step {{i}}\\n" for i in range(1, 4)), end="")
"""


class SetupTest(unittest.TestCase):
    def setUp(self):
        self.work = Path(tempfile.mkdtemp(prefix="ditbench-setup-test-"))
        self.root = self.work / "checkout"
        (self.root / "scripts").mkdir(parents=True)
        shutil.copy(REPO / "scripts/setup", self.root / "scripts/setup")
        self.state = self.work / "state"
        self.state.mkdir()
        bin_dir = self.work / "bin"
        bin_dir.mkdir()
        stubs = {"dpkg-query": DPKG_QUERY, "apt-get": APT_GET, "sudo": SUDO, "id": ID,
                 "python3": PYTHON3, "cmake": CMAKE.format(python=sys.executable)}
        for name, text in stubs.items():
            (bin_dir / name).write_text(text)
            (bin_dir / name).chmod(0o755)
        (self.state / "venv_python").write_text(VENV_PYTHON)
        (self.state / "venv_python").chmod(0o755)
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("DITBENCH_") and not k.startswith("CCACHE_")}
        self.env.update(PATH=f"{bin_dir}:{os.environ['PATH']}", STATE=str(self.state))
        text = (REPO / "scripts/setup").read_text()
        self.quick_packages = bash_array(text, "APT_PACKAGES")
        self.test_packages = bash_array(text, "APT_TEST_PACKAGES")

    def tearDown(self):
        shutil.rmtree(self.work)

    def setup(self, *args, **env):
        """Runs the copied scripts/setup; returns its stderr (setup's own lines)."""
        (self.state / "calls").write_text("")
        proc = subprocess.run([str(self.root / "scripts/setup"), *args], capture_output=True,
                              text=True, env={**self.env, **env}, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stderr

    def calls(self, program):
        return [line for line in (self.state / "calls").read_text().splitlines()
                if line.split(" ", 1)[0] == program]

    def builds(self):
        """The cmake --build calls that build (not ninja's dry runs)."""
        return [c for c in self.calls("cmake")
                if c.startswith("cmake --build") and "-n" not in c.split()]

    def installed(self):
        path = self.state / "installed"
        return path.read_text().split() if path.exists() else []

    def cache(self, folder="build"):
        text = (self.root / folder / "CMakeCache.txt").read_text()
        return dict(line.split(":STRING=", 1) for line in text.splitlines())

    def assert_phases(self, log, names):
        for i, name in enumerate(names, 1):
            self.assertRegex(log, rf"setup: \[{i}/{len(names)}\] {name}: .*\n")
            self.assertRegex(log, rf"setup: \[{i}/{len(names)}\] {name}: done in \d+ s")

    def test_quick_start_installs_neither_test_packages_nor_tests(self):
        log = self.setup()
        self.assertEqual(sorted(self.installed()), sorted(self.quick_packages))
        for package in ("chromium", "slurm-wlm", "munge", "clang-format", "libgtest-dev",
                        "libgmock-dev"):
            self.assertNotIn(package, self.installed())
        self.assertEqual(self.cache()["DITBENCH_TESTS"], "OFF")
        self.assertNotIn("DITBENCH_ASAN_BUILD", self.cache())
        builds = self.builds()
        self.assertEqual(len(builds), 1)
        self.assertIn("--target ditbench ditbench-worker", builds[0])
        self.assert_phases(log, ["Debian packages", "torch wheel", "configure", "build"])
        self.assertRegex(log, r"\[4/4\] build: ditbench and ditbench-worker in .*: 3 steps")
        self.assertRegex(log, r"\[4/4\] build: done in \d+ s \(CPU \d+ s\)")

    def test_a_stale_build_ninja_leaves_the_step_count_unknown(self):
        self.setup()
        (self.state / "stale").touch()
        log = self.setup()
        self.assertIn("[4/4] build: ditbench and ditbench-worker in", log)
        self.assertIn("steps unknown (CMake configures again first), ", log)

    def test_torch_install_shows_pip_progress_and_the_venv_size(self):
        log = self.setup()
        [pip] = self.calls("pip")
        self.assertNotIn(" -q", pip)
        self.assertIn("--progress-bar on", pip)
        self.assertRegex(log, r"\[2/4\] torch wheel: done in \d+ s \(.*\.venv: \S+\)")

    def test_second_run_installs_and_configures_nothing(self):
        self.setup()
        log = self.setup()
        self.assertEqual(self.calls("apt-get"), [])
        self.assertEqual(self.calls("pip"), [])
        self.assertFalse([c for c in self.calls("cmake") if " -S " in c])
        self.assertIn(f"[1/4] Debian packages: all {len(self.quick_packages)} installed", log)
        self.assertIn("[2/4] torch wheel: torch==2.11.0 already in", log)
        self.assertIn("already configured", log)

    def test_tests_after_quick_start_add_only_the_test_packages_and_turn_tests_on(self):
        self.setup()
        quick = set(self.installed())
        log = self.setup("--tests", DITBENCH_JOBS="2")
        self.assertEqual(sorted(set(self.installed()) - quick), sorted(self.test_packages))
        self.assertEqual(self.cache()["DITBENCH_TESTS"], "ON")
        self.assertEqual(self.cache()["DITBENCH_ASAN_BUILD"], str(self.root / "build-asan"))
        self.assertEqual(self.cache("build-asan")["DITBENCH_SANITIZE"], "ON")
        self.assert_phases(log, ["Debian packages", "torch wheel", "engine packages",
                                 "configure", "build", "sanitizer build"])
        builds = self.builds()
        self.assertEqual(builds[0], f"cmake --build {self.root}/build -j 2")

    def test_engine_packages_only_with_tests_and_once(self):
        self.setup()
        self.assertFalse([c for c in self.calls("pip") if "diffusers" in c])
        log = self.setup("--tests")
        [pip] = [c for c in self.calls("pip") if "diffusers" in c]
        self.assertIn("diffusers==0.35.2", pip)
        self.assertIn("transformers==", pip)
        self.assertRegex(log, r"\[3/6\] engine packages: diffusers==0.35.2 .* into "
                              r".*/\.venv/bin/python")
        log = self.setup("--tests")
        self.assertEqual(self.calls("pip"), [])
        self.assertRegex(log, r"\[3/6\] engine packages: .* already in ")

    def test_quick_start_keeps_the_tests_of_an_earlier_tests_run(self):
        self.setup("--tests")
        self.setup()
        self.assertFalse([c for c in self.calls("cmake") if " -S " in c])
        self.assertEqual(self.cache()["DITBENCH_TESTS"], "ON")

    def test_asan_off_skips_and_unregisters_the_sanitizer_build(self):
        self.setup("--tests")
        log = self.setup("--tests", DITBENCH_ASAN="0")
        self.assertEqual(self.cache()["DITBENCH_ASAN_BUILD"], "")
        self.assert_phases(log, ["Debian packages", "torch wheel", "engine packages",
                                 "configure", "build"])
        self.assertNotIn("sanitizer", log)

    def test_a_build_folder_from_before_the_tests_option_is_not_configured_again(self):
        build = self.root / "build"
        build.mkdir()
        (build / "CMakeCache.txt").write_text(
            f"DITBENCH_ASAN_BUILD:PATH={self.root}/build-asan\n")
        self.setup("--tests")
        self.assertFalse([c for c in self.calls("cmake") if f"-B {build} " in c + " "])

    def test_ditbench_python_builds_against_its_torch_without_a_venv(self):
        python = self.state / "venv_python"
        (self.state / "torch").touch()
        log = self.setup(DITBENCH_PYTHON=str(python), DITBENCH_BUILD_DIR=str(self.work / "b"),
                         DITBENCH_JOBS="3")
        self.assertFalse((self.root / ".venv").exists())
        self.assertIn(f"[2/4] torch wheel: the torch of DITBENCH_PYTHON={python}", log)
        self.assertIn("-DCMAKE_PREFIX_PATH=/stub/torch/share/cmake", self.calls("cmake")[0])
        self.assertTrue((self.work / "b/CMakeCache.txt").exists())
        self.assertIn(f"cmake --build {self.work}/b -j 3 --target ditbench ditbench-worker",
                      self.calls("cmake"))

    def test_unknown_argument_is_refused(self):
        proc = subprocess.run([str(self.root / "scripts/setup"), "--test"], capture_output=True,
                              text=True, env=self.env, timeout=60)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("unknown argument --test", proc.stderr)


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        REPO = Path(sys.argv.pop(1)).resolve()
    unittest.main()
