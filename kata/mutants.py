"""`kata validate --mutants SLUG`: score a hidden suite by mutation testing the reference.

mutmut (3.x) mutates the reference one small change at a time (`<` to `<=`, `+ 1` to `+ 2`, a
dropped `not`...) and runs the hidden suite against each mutant; a suite that fails on a mutant
"kills" it. The mutation score is killed / (mutants - the ones the author marked equivalent in
kata.toml). A surviving mutant is a mistake a candidate could make that the suite would not catch.

mutmut traces calls by module name, so the reference is copied into a scratch project under the
learner's module name, next to a copy of the grader, and the `impl` fixture loads it under that
same name (`--kata-impl-module`). Nothing in the workbook is modified.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from kata.catalog import CatalogError, Kata

NOT_KILLED = {0: "survived", 33: "no tests", 34: "skipped"}


@dataclass
class Mutant:
    name: str
    status: str  # killed | survived | no tests | skipped | equivalent | not checked
    diff: str = ""
    reason: str = ""  # the author's reason, for an equivalent mutant


@dataclass
class MutationReport:
    slug: str
    mutants: list[Mutant] = field(default_factory=list)
    # kata.toml marks that no longer fit: a name mutmut did not make, or a mutant the suite kills
    # (the reference changed and mutmut renumbered its mutants, or a new test catches it)
    stale_marks: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(m.status == status for m in self.mutants)

    @property
    def scored(self) -> int:
        """Mutants that count: all but the equivalent and the skipped ones."""
        return sum(m.status not in ("equivalent", "skipped") for m in self.mutants)

    @property
    def score(self) -> float | None:
        return round(self.count("killed") / self.scored, 4) if self.scored else None

    def to_json(self) -> dict:
        return {
            "slug": self.slug, "score": self.score, "mutants": len(self.mutants),
            "killed": self.count("killed"), "survived": self.count("survived"),
            "no_tests": self.count("no tests"), "equivalent": self.count("equivalent"),
            "survivors": [{"name": m.name, "diff": m.diff} for m in self.mutants if m.status == "survived"],
            "stale_marks": self.stale_marks,
        }


MUTANT_TEST_TIMEOUT = 15  # seconds one hidden test may run on a mutant (the slowest take ~2 s)


def _mutmut() -> list[str]:
    try:
        import mutmut  # noqa: F401
    except ImportError:
        raise CatalogError(
            "mutation testing needs mutmut 3: pip install -e '.[mutants]' (or pip install 'mutmut>=3,<4')"
        ) from None
    return [sys.executable, "-m", "mutmut"]


def _project(kata: Kata, where: Path) -> None:
    """A scratch workbook: <module>.py = the reference (the file mutmut mutates), beside copies of
    the kata's folder, its reference and its grader at their usual paths (graders often load the
    unmutated reference, e.g. to compare a policy's figures or timings with it)."""
    shutil.copyfile(kata.solution, where / kata.module)
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(kata.dir, where / "katas" / kata.slug, ignore=ignore)
    shutil.copytree(kata.grader, where / "graders" / kata.slug, ignore=ignore)
    (where / "solutions").mkdir()
    shutil.copyfile(kata.solution, where / "solutions" / kata.solution.name)
    # Complexity tests compare timings with the reference; mutmut's trampolines slow every call
    # of the mutated module, so those tests would fail on the unmutated code too: left out.
    # A mutant that loops forever fails its test after MUTANT_TEST_TIMEOUT s (pytest-timeout),
    # counted as killed, instead of running into mutmut's own CPU limit, which is 30x the
    # estimated time of all the tests it selects (minutes for one mutant of a busy function).
    # In one process with the tests (--kata-boundary off): mutmut's trampolines report to the
    # process that runs them; the suite's power is the question here, not its isolation.
    args = ["--kata-impl", kata.module, "--kata-impl-module", kata.module_name, "--kata-boundary", "off",
            "-p", "no:cacheprovider", "-p", "no:randomly", "-q", "-m", "not complexity",
            "--timeout", str(MUTANT_TEST_TIMEOUT), "--timeout-method", "signal"]
    (where / "pyproject.toml").write_text(
        "[tool.mutmut]\n"
        f"source_paths = [{json.dumps(kata.module)}]\n"
        "timeout_multiplier = 5.0\n"
        'also_copy = ["katas", "graders", "solutions"]\n'
        f"pytest_add_cli_args = {json.dumps(args)}\n"
        f"pytest_add_cli_args_test_selection = [{json.dumps('graders/' + kata.slug)}]\n"
    )


def classify(slug: str, codes: dict[str, int | None], equivalent: dict[str, str],
             diff_of=lambda name: "") -> MutationReport:
    """A report from mutmut's exit code per mutant and the author's equivalent marks."""
    report = MutationReport(slug)
    for name in sorted(codes):
        code = codes[name]
        status = "not checked" if code is None else NOT_KILLED.get(code, "killed")
        if name in equivalent:
            if status != "killed":
                report.mutants.append(Mutant(name, "equivalent", reason=equivalent[name]))
                continue
            report.stale_marks.append(f"{name} is marked equivalent but the hidden suite kills it")
        report.mutants.append(Mutant(name, status, diff=diff_of(name) if status == "survived" else ""))
    report.stale_marks += [f"{name} is marked equivalent but mutmut made no such mutant"
                           for name in equivalent if name not in codes]
    return report


def run_mutants(kata: Kata, workers: int = 2, keep: Path | None = None) -> MutationReport:
    """Mutation-test the kata's reference against its hidden suite."""
    command = _mutmut()
    if not kata.solution.is_file() or not kata.grader.is_dir():
        raise CatalogError(f"{kata.slug}: mutation testing needs solutions/ and graders/ for the kata")
    tmp = Path(tempfile.mkdtemp(prefix=f"kata-mutants-{os.getpid()}-{kata.slug}-"))  # swept if this process dies
    try:
        _project(kata, tmp)
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(tmp / ".hypothesis")
        env["PYTHONHASHSEED"] = "0"
        run = subprocess.run([*command, "run", "--max-children", str(max(1, workers))], cwd=tmp,
                             env=env, capture_output=True, text=True)
        meta_path = tmp / "mutants" / f"{kata.module}.meta"
        if not meta_path.is_file():
            tail = (run.stdout + run.stderr).strip()[-800:]
            raise CatalogError(f"{kata.slug}: mutmut produced no results (exit {run.returncode}): {tail}")
        codes = json.loads(meta_path.read_text())["exit_code_by_key"]
        if codes and all(code is None for code in codes.values()):
            tail = (run.stdout + run.stderr).strip()[-800:]
            raise CatalogError(f"{kata.slug}: mutmut checked no mutant (does the hidden suite pass "
                               f"on the reference?): {tail}")

        def diff_of(name: str) -> str:
            show = subprocess.run([*command, "show", name], cwd=tmp, env=env,
                                  capture_output=True, text=True)
            return "\n".join(line for line in show.stdout.splitlines()
                             if not line.startswith("#")).strip()

        equivalent = {m.name: m.reason for m in kata.equivalent_mutants}
        survivors = [name for name, code in codes.items()
                     if NOT_KILLED.get(code) == "survived" and name not in equivalent]
        with ThreadPoolExecutor(max(1, workers)) as pool:  # one `mutmut show` process each
            diffs = dict(zip(survivors, pool.map(diff_of, survivors), strict=True))
        return classify(kata.slug, codes, equivalent, diffs.__getitem__)
    finally:
        if keep is not None:
            shutil.copytree(tmp, keep, dirs_exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
