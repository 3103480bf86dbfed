#!/usr/bin/env python3
"""scripts/code-size's measurements, on small stand-in source trees.

    python3 tests/scripts/code_size_test.py [REPO]     (unittest; exit 0: all passed)
"""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(sys.argv.pop(1)).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "code-size"


def function_of(name, body_lines, head="void {}() {{"):
    """A function `name` of exactly body_lines + 2 lines (signature, body, closing brace)."""
    return "\n".join([head.format(name)] + ["  ++x;"] * body_lines + ["}"]) + "\n"


class CodeSizeTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = Path(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def write(self, path, text):
        (self.root / path).parent.mkdir(parents=True, exist_ok=True)
        (self.root / path).write_text(text)

    def run_script(self, *args):
        result = subprocess.run([sys.executable, str(SCRIPT), str(self.root), *args],
                                capture_output=True, text=True)
        return result.returncode, result.stdout

    def test_function_over_the_limit_is_reported_and_fails(self):
        self.write("a/long.cc", "namespace x {\n" + function_of("Long", 99) + function_of("Fits", 98) +
                   "}  // namespace x\n")
        code, out = self.run_script()
        self.assertEqual(code, 1)
        self.assertIn("function a/long.cc:2 Long 101 lines", out)
        self.assertNotIn("Fits", out)

    def test_code_within_the_limits_passes(self):
        self.write("a/short.cc", function_of("Fits", 98))
        self.assertEqual(self.run_script(), (0, ""))

    def test_braces_in_literals_and_comments_do_not_end_a_function(self):
        text = ('#define OPEN {\n'
                'int Tricky(int x) {\n'
                '  const char* s = "}}}";  // }\n'
                '  /* } */ char c = \'}\';\n'
                '  const char* raw = R"(\n}\n}\n)";\n'
                '  int n = 1\'000;\n'
                '  auto lambda = [](int y) {\n    return y;\n  };\n'
                + "  ++x;\n" * 92 +
                '  return lambda(x) + c + n;\n'
                '}\n'
                'int After() { return 1; }\n')
        self.write("a/tricky.cc", text)
        code, out = self.run_script("--all")
        self.assertEqual(code, 1)
        self.assertIn("function a/tricky.cc:2 Tricky 105 lines", out)
        self.assertIn("function a/tricky.cc:107 After 1 lines", out)

    def test_members_are_named_by_their_class(self):
        self.write("a/member.h", "class Box {\n public:\n" +
                   function_of("Fill", 99, "  void {}() const {{") + "};\n")
        self.write("a/member.cc", function_of("Box", 99, "Box::{}(int a) : a_(a), b_{{a}} {{"))
        code, out = self.run_script()
        self.assertIn("function a/member.h:3 Box::Fill 101 lines", out)
        self.assertIn("function a/member.cc:1 Box::Box 101 lines", out)

    def test_tests_bench_and_build_folders_are_not_production(self):
        for folder in ("tests", "bench", "build", "build-asan"):
            self.write(f"{folder}/long.cc", function_of("Long", 200) + "\n" * 700)
        self.assertEqual(self.run_script(), (0, ""))

    def test_file_over_the_limit_is_reported(self):
        self.write("a/big.h", "int x;\n" * 601)
        self.write("a/fits.h", "int x;\n" * 600)
        code, out = self.run_script()
        self.assertEqual(code, 1)
        self.assertEqual(out, "file a/big.h 601 lines (limit 600)\n")

    def test_allowed_offender_passes_until_it_grows(self):
        self.write("a/long.cc", function_of("Long", 110))
        self.write("a/big.h", "int x;\n" * 610)
        allowed = self.root / "allowed"
        allowed.write_text("# known\na/long.cc Long 112\na/big.h 610\n")
        self.assertEqual(self.run_script("--allow", str(allowed))[0], 0)
        allowed.write_text("a/long.cc Long 111\na/big.h 609\n")
        code, out = self.run_script("--allow", str(allowed))
        self.assertEqual(code, 1)
        self.assertIn("Long 112 lines (limit 100, grown past the allowed 111)", out)
        self.assertIn("a/big.h 610 lines (limit 600, grown past the allowed 609)", out)


if __name__ == "__main__":
    unittest.main()
