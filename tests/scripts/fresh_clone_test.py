#!/usr/bin/env python3
"""bench/fresh-clone: its .ninja_log reader, and a whole run on a stand-in checkout.

The stand-in is a small git repository with the README's quick-start block and a
scripts/setup that prints setup's phase lines and pip's wheel lines and writes a .ninja_log,
with ctest and build/ditbench as shell stubs: nothing is installed or compiled.

    python3 tests/scripts/fresh_clone_test.py [REPO]     (unittest; exit 0: all passed)
"""
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

README = """# stand-in

## Quick start
```sh
# 1. the quick start
scripts/setup && build/ditbench run sweeps/quickstart.yaml && build/ditbench report -o report.html

# 2. the tests
scripts/setup --tests && ctest --test-dir build --output-on-failure -j 2
```
"""
# Prints what scripts/setup prints, records its environment outside the clone, and writes
# build/.ninja_log: 3 steps (2 objects) for the quick start, 2 more (1 object) with --tests.
SETUP = """#!/bin/sh
env >"$STATE/setup-env"
mkdir -p build
[ -f build/.ninja_log ] || printf '# ninja log v5\n' >build/.ninja_log
if [ "$1" = --tests ]; then
  echo "setup: [1/4] Debian packages: 6 of 29 to install: chromium" >&2
  echo "setup: [1/4] Debian packages: done in 0 s" >&2
  echo "setup: [2/4] torch wheel: torch==2.11.0 already in $PWD/.venv" >&2
  echo "setup: [2/4] torch wheel: done in 0 s" >&2
  printf '100\\t900\\t0\\ttests/CMakeFiles/t.dir/a_test.cc.o\\th4\\n' >>build/.ninja_log
  printf '900\\t1000\\t0\\ttests/ditbench_core_tests\\th5\\n' >>build/.ninja_log
else
  echo "setup: [1/4] Debian packages: all 23 installed" >&2
  echo "setup: [1/4] Debian packages: done in 0 s" >&2
  echo "setup: [2/4] torch wheel: torch==2.11.0 into $PWD/.venv (pip's progress below)" >&2
  echo "Downloading torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl (900.5 MB)"
  echo "Using cached nvidia_nccl_cu12-2.27.3-py3-none-manylinux2014_x86_64.whl (300 MB)"
  echo "Downloading sympy-1.14.0-py3-none-any.whl (6.3 MB)"
  sleep 0.2
  echo "setup: [2/4] torch wheel: done in 0 s (.venv: 4.6G)" >&2
  mkdir -p .venv
  printf '0\\t2000\\t0\\tcli/CMakeFiles/c.dir/main.cc.o\\th1\\n' >>build/.ninja_log
  printf '0\\t3000\\t0\\tmodel_zoo/CMakeFiles/m.dir/a.cc.o\\th2\\n' >>build/.ninja_log
  printf '3000\\t3500\\t0\\tditbench\\th3\\n' >>build/.ninja_log
fi
echo "setup: [3/4] configure: build already configured" >&2
echo "setup: [3/4] configure: done in 0 s" >&2
echo "setup: [4/4] build: ditbench and ditbench-worker: 3 steps, 2 jobs" >&2
echo "setup: [4/4] build: done in 1 s (CPU 7 s)" >&2
cat >build/ditbench <<'EOF'
#!/bin/sh
echo "ditbench $*" >>"$STATE/ditbench-calls"
[ "$1" != run ] || [ -z "$FAIL_RUN" ] || exit 3
EOF
chmod +x build/ditbench
"""
CTEST = """#!/bin/sh
echo "100% tests passed, 0 tests failed out of 12"
"""


def load_fresh_clone(repo):
    loader = importlib.machinery.SourceFileLoader("fresh_clone", str(repo / "bench/fresh-clone"))
    spec = importlib.util.spec_from_loader("fresh_clone", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class NinjaLogTest(unittest.TestCase):
    def setUp(self):
        self.fresh_clone = load_fresh_clone(REPO)
        self.work = Path(tempfile.mkdtemp(prefix="ditbench-fresh-clone-test-"))
        self.log = self.work / ".ninja_log"

    def tearDown(self):
        shutil.rmtree(self.work)

    def test_newest_entry_per_output_and_one_per_step_of_several_outputs(self):
        self.log.write_text("# ninja log v5\n"
                            "0\t1000\t0\tcli/CMakeFiles/a.dir/x.cc.o\told\n"
                            "10\t30\t0\tCMakeFiles/build_id\th1\n"
                            "10\t30\t0\tgenerated/build_id.h\th1\n"
                            "0\t4000\t0\tcli/CMakeFiles/a.dir/x.cc.o\tnew\n"
                            "5\t2500\t0\tworker/CMakeFiles/w.dir/y.cc.o\th2\n"
                            "7\t9")  # cut short by an interrupted build
        steps = self.fresh_clone.read_ninja_log(self.log)
        self.assertEqual(len(steps), 3)
        self.assertEqual(self.fresh_clone.seconds_by_folder(steps),
                         [("cli", 1, 4.0), ("worker", 1, 2.495), ("(top)", 1, 0.02)])
        self.assertEqual(self.fresh_clone.step_counts(steps), "3 (2 objects)")

    def test_a_log_of_an_unknown_version_is_refused_with_its_header(self):
        self.log.write_text("# ninja log v4\n0\t1\t0\tx.o\n")
        with self.assertRaisesRegex(SystemExit, r"\.ninja_log:1: expected .* '# ninja log v4'"):
            self.fresh_clone.read_ninja_log(self.log)

    def test_an_absent_log_has_no_steps(self):
        self.assertEqual(self.fresh_clone.read_ninja_log(self.work / "none"), [])


class FreshCloneTest(unittest.TestCase):
    def setUp(self):
        self.work = Path(tempfile.mkdtemp(prefix="ditbench-fresh-clone-test-"))
        self.repo = self.work / "repo"
        (self.repo / "scripts").mkdir(parents=True)
        (self.repo / "README.md").write_text(README)
        (self.repo / "scripts/setup").write_text(SETUP)
        (self.repo / "scripts/setup").chmod(0o755)
        git = ["git", "-C", str(self.repo), "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run(git[:3] + ["init", "-q"], check=True)
        subprocess.run(git + ["add", "-A"], check=True)
        subprocess.run(git + ["commit", "-qm", "stand-in"], check=True)
        self.state = self.work / "state"
        self.state.mkdir()
        bin_dir = self.work / "bin"
        bin_dir.mkdir()
        (bin_dir / "ctest").write_text(CTEST)
        (bin_dir / "ctest").chmod(0o755)
        self.runs = self.work / "runs"
        self.runs.mkdir()
        # The caller's compiler-cache setting is not this test's (a ctest run under
        # bench/fresh-clone inherits CCACHE_DISABLE=1).
        outer = {k: v for k, v in os.environ.items() if k != "CCACHE_DISABLE"}
        self.env = {**outer, "PATH": f"{bin_dir}:{os.environ['PATH']}",
                    "STATE": str(self.state), "DITBENCH_PYTHON": "/usr/bin/python3"}

    def tearDown(self):
        shutil.rmtree(self.work)

    def fresh_clone(self, *args, expect=0, **env):
        proc = subprocess.run([str(REPO / "bench/fresh-clone"), "--repo", str(self.repo),
                               "--work", str(self.runs), *args], capture_output=True, text=True,
                              env={**self.env, **env}, timeout=120)
        self.assertEqual(proc.returncode, expect, proc.stdout + proc.stderr)
        return proc.stdout

    def row(self, out, start):
        """The cells of the table row whose first cell starts with `start`."""
        for line in out.splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if line.startswith("|") and cells[0].startswith(start):
                return cells
        self.fail(f"no row {start!r} in:\n{out}")

    def test_both_commands_phase_by_phase_and_the_clone_removed(self):
        out = self.fresh_clone()
        self.assertIn("## fresh-clone of", out)
        self.assertEqual(self.row(out, "[2/4] torch wheel")[4],
                         "torch==2.11.0 into .venv (pip's progress below); .venv: 4.6G")
        build = self.row(out, "[4/4] build")
        self.assertEqual(build[2:4], ["7.0", "3 (2 objects)"])
        self.assertGreaterEqual(float(self.row(out, "[2/4] torch wheel")[1]), 0.2)
        # The second command's build counts only the steps it added to build/.ninja_log.
        builds = [r for r in out.splitlines() if r.startswith("|   [4/4] build")]
        self.assertEqual(builds[1].split("|")[4].strip(), "2 (1 objects)")
        self.assertIn("all 23 installed before this run (not uninstallable here", out)
        self.assertIn("6 of 29 to install: chromium", out)
        self.assertEqual(self.row(out, "ctest")[4], "12 of 12 tests passed")
        self.assertTrue(self.row(out, "command 1 in all")[1])
        self.assertTrue(self.row(out, "command 2 in all")[1])
        self.assertIn("- pip: 2 wheels downloaded, 0.91 GB (torch, sympy); 1 from pip's cache", out)
        self.assertIn("- compiler cache: off (CCACHE_DISABLE=1)", out)
        self.assertRegex(out, r"\| cli \| 1 \| 2\.0 \| 31% \|")
        setup_env = (self.state / "setup-env").read_text().splitlines()
        self.assertIn("CCACHE_DISABLE=1", setup_env)
        self.assertFalse([line for line in setup_env if line.startswith("DITBENCH_PYTHON=")])
        self.assertEqual((self.state / "ditbench-calls").read_text().splitlines(),
                         ["ditbench run sweeps/quickstart.yaml", "ditbench report -o report.html"])
        [run] = list(self.runs.iterdir())
        self.assertEqual(sorted(p.name for p in run.iterdir()), ["OUTPUT.log"])

    def test_quick_only_keep_and_ccache(self):
        out = self.fresh_clone("--quick-only", "--keep", "--ccache")
        self.assertNotIn("command 2", out)
        self.assertIn("- compiler cache: on (--ccache)", out)
        [run] = list(self.runs.iterdir())
        self.assertTrue((run / "clone/build/.ninja_log").exists())
        self.assertNotIn("CCACHE_DISABLE=1", (self.state / "setup-env").read_text().splitlines())

    def test_tests_only_runs_the_test_command_in_a_new_clone(self):
        out = self.fresh_clone("--tests-only")
        self.assertNotIn("command 1", out)
        self.assertEqual(self.row(out, "ctest")[4], "12 of 12 tests passed")
        self.assertFalse((self.state / "ditbench-calls").exists())

    def test_db_free_runs_only_setup(self):
        out = self.fresh_clone("--db-free")
        self.assertFalse((self.state / "ditbench-calls").exists())
        self.assertEqual(self.row(out, "build/ditbench run")[4], "not run (--db-free)")
        self.assertEqual(self.row(out, "ctest")[4], "not run (--db-free)")

    def test_a_failing_part_stops_its_command_and_fails_the_bench(self):
        out = self.fresh_clone(expect=1, FAIL_RUN="1")
        self.assertEqual(self.row(out, "build/ditbench run")[4], "exit 3")
        self.assertNotIn("report -o report.html", (self.state / "ditbench-calls").read_text())
        self.assertNotIn("command 1 in all", out)
        [run] = list(self.runs.iterdir())
        self.assertFalse((run / "clone").exists())


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        REPO = Path(sys.argv.pop(1)).resolve()
    unittest.main()
