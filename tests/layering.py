#!/usr/bin/env python3
"""The folder layering of docs/architecture.md, checked against every #include.

Each folder may include only the folders listed for it below (and itself). Besides the folder
graph: no SQLite outside storage/, and no LibTorch header outside the torch folders, so that
the torch boundary is a folder boundary. Exits 1 naming every offending line.
"""
import os
import re
import sys

TORCH_MODEL_ZOO = ["model_zoo/layers", "model_zoo/parallel", "model_zoo/families",
                   "model_zoo/weights"]
SHAPES = "model_zoo/shapes"

# Bottom to top, as in the top-level CMakeLists.txt.
ALLOWED = {
    "base": [],
    "stats": [],
    SHAPES: ["base"],
    "experiments": ["base", SHAPES],
    "contract": ["base", SHAPES, "experiments"],
    "machine": ["base", SHAPES, "experiments"],
    "metrics": ["base", "stats", SHAPES, "experiments", "contract", "machine"],
    "storage": ["base", "stats", SHAPES, "experiments", "contract", "machine", "metrics"],
    "analysis": ["base", "stats", SHAPES, "experiments", "contract", "machine", "metrics",
                 "storage"],
    "report": ["base", "stats", SHAPES, "experiments", "contract", "machine", "metrics",
               "storage", "analysis"],
    "plan": ["base", "stats", SHAPES, "experiments", "contract", "machine", "metrics",
             "storage", "analysis"],
    "launch": ["base", SHAPES, "experiments", "contract", "machine"],
    "launch/slurm": ["base", SHAPES, "experiments", "contract", "machine", "launch"],
    "engine": ["base"],
    "runner": ["base", "stats", SHAPES, "experiments", "contract", "machine", "metrics",
               "storage", "analysis", "report", "plan", "launch", "launch/slurm", "engine"],
    "cli": ["base", "stats", SHAPES, "experiments", "contract", "machine", "metrics",
            "storage", "analysis", "report", "plan", "launch", "launch/slurm", "engine",
            "runner"],
    "worker": ["base", "stats", SHAPES, "experiments", "contract", "machine", "metrics"]
              + TORCH_MODEL_ZOO,
}
# The torch model zoo is one library: its folders may include each other.
for folder in TORCH_MODEL_ZOO:
    ALLOWED[folder] = ["base", SHAPES] + TORCH_MODEL_ZOO

TORCH_FOLDERS = set(TORCH_MODEL_ZOO) | {"worker"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
TORCH_HEADER = re.compile(r"^(torch|ATen|c10|caffe2)/")


def folder_of(path):
    """The layer a repository path belongs to: its deepest folder named in ALLOWED."""
    parent = os.path.dirname(path)
    while parent and parent not in ALLOWED:
        parent = os.path.dirname(parent)
    return parent or None


def main(root):
    problems = []
    for folder in ALLOWED:
        for name in sorted(os.listdir(os.path.join(root, folder))):
            if not name.endswith((".h", ".cc")):
                continue
            path = f"{folder}/{name}"
            with open(os.path.join(root, path), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if "sqlite3_" in line and folder != "storage":
                        problems.append(f"{path}:{number}: SQLite outside storage/")
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    kind, header = match.groups()
                    where = f"{path}:{number}: #include {header}"
                    if kind == "<":
                        if TORCH_HEADER.match(header) and folder not in TORCH_FOLDERS:
                            problems.append(f"{where}: LibTorch outside the torch folders")
                        if header == "sqlite3.h" and folder != "storage":
                            problems.append(f"{where}: SQLite outside storage/")
                        continue
                    target = folder_of(header)
                    if target is None or target == folder:
                        continue
                    if target not in ALLOWED[folder]:
                        problems.append(f"{where}: {folder}/ may not use {target}/ "
                                        f"(it may use: {', '.join(ALLOWED[folder]) or 'nothing'})")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} include(s) break the layering of docs/architecture.md")
        return 1
    print(f"layering holds over {len(ALLOWED)} folders")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
