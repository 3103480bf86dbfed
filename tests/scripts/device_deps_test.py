#!/usr/bin/env python3
"""What a GPU machine's build carries covers what scripts/setup installs.

The device machine has no network: scripts/fetch-device-deps downloads the Debian packages the
build needs, and scripts/device-build unpacks them there. A package added to scripts/setup's
APT_PACKAGES and not to fetch-device-deps' DEBS breaks the device build on a missing header,
minutes into a loan of 15. Every setup package (APT_PACKAGES, the quick start's, and
APT_TEST_PACKAGES, what --tests adds) must be carried (by its name, or by the versioned name
CARRIED_AS gives), or named in NOT_CARRIED with its reason.

    python3 tests/scripts/device_deps_test.py [REPO]     (exit 0: covered; 1: names the gaps)
"""
import re
import sys
from pathlib import Path


def bash_array(text: str, name: str) -> list[str]:
    """The words of the bash array `name=( ... )` in `text`, comments dropped."""
    match = re.search(rf"^{name}=\((.*?)^\)", text, re.S | re.M)
    if not match:
        raise SystemExit(f"no {name}=( ... ) array found")
    words = []
    for line in match.group(1).splitlines():
        words += line.split("#", 1)[0].split()
    return words


def main() -> int:
    repo = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2])
    setup = (repo / "scripts/setup").read_text()
    fetch = (repo / "scripts/fetch-device-deps").read_text()
    installed = bash_array(setup, "APT_PACKAGES") + bash_array(setup, "APT_TEST_PACKAGES")
    carried = set(bash_array(fetch, "DEBS"))
    not_carried = set(bash_array(fetch, "NOT_CARRIED"))
    carried_as = dict(word.split("=", 1) for word in bash_array(fetch, "CARRIED_AS"))
    gaps = [p for p in installed
            if p not in carried and p not in not_carried and carried_as.get(p) not in carried]
    stale = sorted(p for p in not_carried | set(carried_as) if p not in installed)
    for p in gaps:
        print(f"scripts/setup installs {p}; scripts/fetch-device-deps neither carries it (DEBS, "
              f"CARRIED_AS) nor says why not (NOT_CARRIED)")
    for p in stale:
        print(f"scripts/fetch-device-deps names {p}, which scripts/setup no longer installs")
    if not gaps and not stale:
        print(f"{len(installed)} setup packages: {len(installed) - len(not_carried)} carried, "
              f"{len(not_carried)} not needed by the device build")
    return 1 if gaps or stale else 0


if __name__ == "__main__":
    sys.exit(main())
