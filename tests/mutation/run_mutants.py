"""Mutation testing of the CPU-testable code: do the tests notice a realistic bug?

A mutant is one small change to one line: a comparison flipped or loosened (< to <=), a
logical operator swapped, a constant off by one, floor for ceil, min for max, a negation
dropped. A random sample of them (seeded; a fresh seed gives a fresh sample) is applied one
at a time and the tests that cover the file are run: a mutant is killed when they fail (or
run past their time), survives when they pass, and is invalid when it does not compile.
The score is killed / (killed + survived); the target is 90% or more.

    python tests/mutation/run_mutants.py                   # 40 Python + 40 C++ mutants, seed 1
    python tests/mutation/run_mutants.py --lang py --sample 100 --seed 7
    python tests/mutation/run_mutants.py --list            # every mutant, without running any

Python mutants are applied to the installed package (pip install . into .venv first), so
nothing is rebuilt, and only to lines the CPU tests run (coverage.py; lines reached only with
CUDA tensors are the GPU suites' to test): mutmut copies the source tree, which lacks the compiled extension, so this
scripted mutator is used instead. C++ mutants are applied to the reference code in the
checkout, rebuilt into test_cpu (build/, configured by .ci/setup) and the file is restored
after each run, whatever happens."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import random
import re
import subprocess
import sys
import time
from typing import Dict, Iterator, List, Sequence

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PY_TESTS = ["tests/python/test_size_rules.py", "tests/python/test_processors.py", "tests/python/test_limits.py",
            "tests/python/test_layouts.py", "tests/python/test_errors.py", "tests/python/test_fields.py",
            "tests/python/test_memory.py"]  # fmt: skip
# The modules under test, each with the tests that cover it.
PY_TARGETS: Dict[str, List[str]] = {
    "processors/_rules.py": PY_TESTS[:3],
    "processors/_common.py": PY_TESTS[:3],
    "processors/clip.py": PY_TESTS[:3],
    "processors/qwen2_vl.py": PY_TESTS[:3],
    "_checks.py": PY_TESTS,
    "layouts.py": PY_TESTS[2:5],
}
try:  # the Gaussian field's torch op and parametrisations are tested only where torch is
    import torch  # noqa: F401

    PY_TARGETS["fields.py"] = PY_TESTS[5:6]
except ImportError:
    pass
CPP_TARGETS = [
    "engine/sampling/tolerance.cpp", "engine/sampling/patch.cpp", "engine/sampling/layout_grid.cpp",
    "engine/sampling/layout_foveated.cpp", "engine/sampling/layout_batch.cpp", "engine/sampling/layout_resize.cpp",
    "engine/sampling/reference_sampling.cpp", "engine/mips/box_filter.cpp", "engine/mips/reference_mips.cpp",
    "engine/fields/gaussian_field.cpp", "engine/textures/half.cpp", "engine/textures/color.cpp",
    "engine/video/changed_tiles.cpp", "engine/video/fixation_schedule.cpp", "engine/overlay/knn_graph.cpp",
]  # fmt: skip

# (pattern, replacement, what): applied to one match on one code line.
COMMON = [
    (r" <= ", " < ", "<= to <"), (r" < ", " <= ", "< to <="), (r" >= ", " > ", ">= to >"), (r" > ", " >= ", "> to >="),
    (r" == ", " != ", "== to !="), (r" != ", " == ", "!= to =="),
    (r" \+ 1\b", " - 1", "+ 1 to - 1"), (r" - 1\b", " + 1", "- 1 to + 1"), (r"\+= ", "-= ", "+= to -="),
    (r"\bfloor\(", "ceil(", "floor to ceil"), (r"\bceil\(", "floor(", "ceil to floor"),
    (r"\bmin\(", "max(", "min to max"), (r"\bmax\(", "min(", "max to min"),
    (r"(?<![\w.])([2-9]|[1-9]\d+)(?![\w.])", None, "a constant off by one"),
]  # fmt: skip
PY_OPS = COMMON + [
    (r" and ", " or ", "and to or"), (r" or ", " and ", "or to and"), (r"\bnot ", "", "not dropped"),
    (r"\bround\(", "int(", "round to int"), (r"\bTrue\b", "False", "True to False"),
]  # fmt: skip
CPP_OPS = COMMON + [
    (r" && ", " || ", "&& to ||"), (r" \|\| ", " && ", "|| to &&"), (r"!(?=[\w(])", "", "! dropped"),
    (r"std::round\(", "std::floor(", "round to floor"), (r"\btrue\b", "false", "true to false"),
]  # fmt: skip


@dataclasses.dataclass
class Mutant:
    path: str  # relative to ROOT (C++) or to the package (Python)
    line: int  # 0-based
    start: int
    end: int
    replacement: str
    what: str

    def describe(self, text: str) -> str:
        original = text.splitlines()[self.line].strip()
        return f"{self.path}:{self.line + 1}: {self.what}: {original[:100]}"


def code_spans(line: str, python: bool) -> List[range]:
    """Column ranges of `line` outside comments and string literals (a line-level scanner:
    enough for the formatted sources here, where strings do not span lines)."""
    spans, start, i, quote = [], 0, 0, ""
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote, start = "", i + 1
        elif c in "\"'" and not (not python and c == "'" and i + 2 < len(line) and line[i + 2] == "'"):
            spans.append(range(start, i))
            quote = c
        elif (python and c == "#") or (not python and line.startswith("//", i)):
            spans.append(range(start, i))
            return spans
        i += 1
    if not quote:
        spans.append(range(start, len(line)))
    return spans


def mutants_of(path: str, text: str, python: bool) -> List[Mutant]:
    out = []
    in_docstring = False
    for n, line in enumerate(text.splitlines()):
        stripped = line.strip()
        if python and stripped.count('"""') % 2 == 1:
            in_docstring = not in_docstring
            continue
        if in_docstring or stripped.startswith(("#", "//", "*", "import ", "from ")) or not stripped:
            continue
        if re.match(r"\s*(#include|static_assert|assert\b|raise\b|throw\b|log\.)", line):
            continue  # messages and includes: not behaviour the tests should pin
        spans = code_spans(line, python)
        for pattern, replacement, what in PY_OPS if python else CPP_OPS:
            for m in re.finditer(pattern, line):
                if not any(m.start() in s and m.end() - 1 in s for s in spans):
                    continue
                new = str(int(m.group(0)) + 1) if replacement is None else replacement
                out.append(Mutant(path, n, m.start(), m.end(), new, what))
    return out


def apply(text: str, m: Mutant) -> str:
    lines = text.splitlines(keepends=True)
    line = lines[m.line]
    lines[m.line] = line[: m.start] + m.replacement + line[m.end :]
    return "".join(lines)


@contextlib.contextmanager
def mutated(path: str, m: Mutant) -> Iterator[str]:
    """`path` with mutant `m` applied while the block runs (yields the original text), put
    back afterwards whatever happens."""
    with open(path) as f:
        text = f.read()
    try:
        with open(path, "w") as f:
            f.write(apply(text, m))
        yield text
    finally:
        with open(path, "w") as f:
            f.write(text)


def run(cmd: Sequence[str], timeout: float) -> str:
    """'pass', 'fail' or 'timeout' of a test command."""
    try:
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    return "pass" if r.returncode == 0 else "fail"


def python_package() -> str:
    python = os.path.join(ROOT, ".venv", "bin", "python")
    where = subprocess.run([python, "-c", "import texturevlm, os; print(os.path.dirname(texturevlm.__file__))"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    return where.stdout.strip()


def covered_lines(python: str, package: str) -> "Dict[str, set] | None":
    """Lines of each Python target the CPU tests run (coverage.py), or None where coverage is
    not installed. Mutants go only there: lines reached only with CUDA tensors are the GPU
    suites' to test, and a CPU run cannot kill their mutants."""
    try:
        subprocess.run([python, "-c", "import coverage"], check=True, capture_output=True)
    except subprocess.CalledProcessError:
        print("coverage.py is not installed (pip install coverage): every line is mutated")
        return None
    data = os.path.join(ROOT, "build", "mutation.coverage")
    report = data + ".json"
    subprocess.run([python, "-m", "coverage", "run", f"--data-file={data}", f"--source={package}", "-m", "pytest",
                    "-q", "-p", "no:cacheprovider"] + PY_TESTS, cwd=ROOT, capture_output=True)  # fmt: skip
    subprocess.run([python, "-m", "coverage", "json", f"--data-file={data}", "-o", report], cwd=ROOT,
                   capture_output=True, check=True)  # fmt: skip
    import json

    with open(report) as f:
        files = json.load(f)["files"]
    covered: Dict[str, set] = {rel: set() for rel in PY_TARGETS}
    for path, info in files.items():
        rel = os.path.relpath(os.path.join(ROOT, path) if not os.path.isabs(path) else path, package)
        if rel in covered:
            covered[rel] = set(info["executed_lines"])
    return covered


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", choices=["py", "cpp", "all"], default="all")
    parser.add_argument("--sample", type=int, default=40, help="mutants per language")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    python = os.path.join(ROOT, ".venv", "bin", "python")
    totals = {"killed": 0, "survived": 0, "invalid": 0}
    survivors: List[str] = []

    def judge(m: Mutant, text: str, outcome: str) -> None:
        kind = "killed" if outcome in ("fail", "timeout") else "survived" if outcome == "pass" else "invalid"
        totals[kind] += 1
        line = f"{kind.upper():9} {m.describe(text)}"
        print(line, flush=True)
        if kind == "survived":
            survivors.append(line)

    if args.lang in ("py", "all"):
        package = python_package()
        covered = covered_lines(python, package)
        candidates = []
        for rel in PY_TARGETS:
            with open(os.path.join(package, rel)) as f:
                candidates += [
                    m for m in mutants_of(rel, f.read(), True) if covered is None or m.line + 1 in covered[rel]
                ]
        chosen = rng.sample(candidates, min(args.sample, len(candidates)))
        print(f"Python: {len(candidates)} mutants in {len(PY_TARGETS)} modules, {len(chosen)} sampled", flush=True)
        if not args.list:
            base = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
            start = time.monotonic()
            if run(base + PY_TESTS, 600) != "pass":
                print("the Python tests fail before any mutation: fix them first")
                return 2
            limit = 3 * (time.monotonic() - start) + 30
            for m in chosen:
                with mutated(os.path.join(package, m.path), m) as text:
                    judge(m, text, run(base + PY_TARGETS[m.path], limit))
        else:
            for m in chosen:
                with open(os.path.join(package, m.path)) as f:
                    print(m.describe(f.read()))

    if args.lang in ("cpp", "all"):
        candidates = []
        for rel in CPP_TARGETS:
            with open(os.path.join(ROOT, rel)) as f:
                candidates += mutants_of(rel, f.read(), False)
        chosen = rng.sample(candidates, min(args.sample, len(candidates)))
        print(f"C++: {len(candidates)} mutants in {len(CPP_TARGETS)} files, {len(chosen)} sampled", flush=True)
        build = ["cmake", "--build", "build", "--target", "test_cpu"]
        test = [os.path.join("build", "tests", "test_cpu")]
        if args.list:
            for m in chosen:
                with open(os.path.join(ROOT, m.path)) as f:
                    print(m.describe(f.read()))
        else:
            if run(build, 1800) != "pass" or run(test, 600) != "pass":
                print("test_cpu does not build or pass before any mutation: fix it first")
                return 2
            for m in chosen:
                with mutated(os.path.join(ROOT, m.path), m) as text:
                    outcome = run(build, 600)
                    judge(m, text, run(test, 120) if outcome == "pass" else "invalid")
            run(build, 1800)  # test_cpu as the checkout is again

    if args.list:
        return 0
    scored = totals["killed"] + totals["survived"]
    score = 100.0 * totals["killed"] / scored if scored else 100.0
    print(f"\nmutation score: {score:.0f}% ({totals['killed']} killed, {totals['survived']} survived, "
          f"{totals['invalid']} invalid; seed {args.seed})")  # fmt: skip
    for line in survivors:
        print(line)
    return 0 if score >= 90 else 1


if __name__ == "__main__":
    sys.exit(main())
