"""The Rust crates compiled into the Python module, with their licences, for THIRD-PARTY-NOTICES.md.

    python3 python/third_party_notices.py           rewrites the crates' table in THIRD-PARTY-NOTICES.md
    python3 python/third_party_notices.py --check   fails (exit 1) if the table, or pyproject.toml's licence
                                                    expression, is not what the current Cargo.lock gives

The crates are those `cargo tree` lists for the binding crate (python/) as the wheels build it (features `cuda`
and `static-ffmpeg`, Linux on x86-64 and aarch64): the libraries linked into the module, not build scripts'
dependencies, proc-macros or dev-dependencies. Each row is a crate's name, version and the licence expression
its own Cargo.toml declares. The wheel's licence expression (pyproject.toml's `license`) is framefeed's own,
`(MIT OR Apache-2.0)`, AND the licences of what is linked in: FFmpeg's LGPL-2.1-or-later and dav1d's
BSD-2-Clause (python/build-wheel.sh) and, for each crate, its licence, MIT taken where a crate offers it (else
Apache-2.0), as a choice its dual licence allows. Reads the Cargo.lock as it is (`--locked`); needs cargo.
"""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOTICES = REPO / "THIRD-PARTY-NOTICES.md"
PYPROJECT = REPO / "python" / "pyproject.toml"
BEGIN = "<!-- crates: begin (written by python/third_party_notices.py) -->"
END = "<!-- crates: end -->"
# What the self-contained wheel links in besides the crates (python/build-wheel.sh).
C_LIBRARIES = {"LGPL-2.1-or-later", "BSD-2-Clause"}
OWN = "(MIT OR Apache-2.0)"
TARGETS = ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"]


def crates() -> list[tuple[str, str, str]]:
    """(name, version, licence) of every crate linked into the module, sorted, the workspace's own left out."""
    out = subprocess.run(
        ["cargo", "tree", "--locked", "-p", "framefeed-python", "--features", "cuda,static-ffmpeg",
         "-e", "normal,no-proc-macro", *[a for t in TARGETS for a in ("--target", t)],
         "--prefix", "none", "-f", "{p}\t{l}"],
        cwd=REPO, check=True, capture_output=True, text=True,
    ).stdout
    found = set()
    for line in out.splitlines():
        if "\t" not in line:
            continue
        package, licence = line.split("\t", 1)
        licence = licence.removesuffix("(*)").strip()
        name, version, *source = package.split()
        if source:  # a path dependency: framefeed itself or the binding crate
            continue
        found.add((name, version.removeprefix("v"), normalized(licence)))
    return sorted(found)


def normalized(licence: str) -> str:
    """Cargo's old `/` separator as SPDX's `OR`."""
    return re.sub(r"\s*/\s*", " OR ", licence)


def chosen(licence: str) -> set[str]:
    """The licences a crate's expression puts on the module: each AND term, MIT (else Apache-2.0, else the
    first) of each OR."""
    terms = set()
    for term in re.split(r"\s+AND\s+", licence.strip()):
        inner = term[1:-1] if term.startswith("(") and term.endswith(")") else term
        options = [o.strip() for o in re.split(r"\s+OR\s+", inner)]
        if "(" in inner or ")" in inner or not all(options):
            raise SystemExit(f"cannot read the licence expression {licence!r}")
        terms.add("MIT" if "MIT" in options else "Apache-2.0" if "Apache-2.0" in options else options[0])
    return terms


def expression(rows) -> str:
    """The wheel's SPDX licence expression."""
    terms = set(C_LIBRARIES)
    for _, _, licence in rows:
        terms |= chosen(licence)
    return " AND ".join([OWN, *sorted(terms)])


def table(rows) -> str:
    lines = [BEGIN, "", "| Crate | Version | Licence |", "|---|---|---|"]
    lines += [f"| {name} | {version} | {licence} |" for name, version, licence in rows]
    return "\n".join(lines + ["", END])


def main() -> int:
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] not in ([], ["--check"]):
        print(__doc__, file=sys.stderr)
        return 2
    rows = crates()
    text = NOTICES.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    fresh = text[:start] + table(rows) + text[end:]
    wanted = expression(rows)
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["license"]
    if check:
        failures = []
        if fresh != text:
            failures.append(f"{NOTICES.name}'s crates differ from Cargo.lock's: run python3 python/third_party_notices.py")
        if declared != wanted:
            failures.append(f"python/pyproject.toml's license is {declared!r}; the wheel's crates make it {wanted!r}")
        for failure in failures:
            print(f"third_party_notices.py: {failure}", file=sys.stderr)
        if not failures:
            print(f"third_party_notices.py: {len(rows)} crates, licence {wanted}")
        return 1 if failures else 0
    NOTICES.write_text(fresh)
    print(f"{NOTICES.name}: {len(rows)} crates")
    if declared != wanted:
        print(f"set python/pyproject.toml's license to: {wanted!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
