"""`make mutate`: mutation testing (mutmut 3) of the pure safety core against its own tests.

mutmut names a mutant after its file's dotted path and knows only the ``./``, ``src/`` and ``source/``
layouts, so the run happens in a staging tree, ``var/mutate/work``: ``src/diagnosis_server`` (a copy of
``server/diagnosis_server``), ``tests/`` (a copy) and a ``pyproject.toml`` that names what to mutate and
which tests to run. The result is written to ``var/mutate/summary.json``::

    {"killed": N, "survived": N, "timeout": N, "score": 0.0-1.0, "survivors": [...], ...}

``score`` is (killed + timeout) / (killed + survived + timeout); the mutants that no test covers ("no
tests") count as survivors. ``not_checked`` counts the mutants a run did not reach (an interrupted run:
``complete`` is false); ``--summary`` rewrites the summary of the last run without running anything.
Mutants listed in ``tests/mutation_survivors.md`` (equivalent mutants, each with its reason) are reported
apart under ``equivalent``; they still count as survivors in ``score``.

The run stops at ``MUTATE_MINUTES`` (29) minutes whatever it reached; the whole core took 27-28 minutes on two
cores. Run again over the same code and tests (``var/mutate/work/tree.sha256``), it goes on from the
results it has (mutmut checks only the mutants without one), so two runs make a complete one; a change to the
package or the tests, or ``MUTATE_FRESH=1``, starts afresh. ``--recheck`` (``make mutate MUTATE_ARGS=--recheck``)
runs the last run's survivors again against the tests as they are now, while the mutated files are unchanged:
the way to see that new tests kill them without a whole run.

Run: ``make mutate`` (or ``.venv/bin/python -m tests.mutation.mutate``); ``MUTATE_ARGS`` passes on
mutant-name globs (e.g. ``diagnosis_server.gatekeeper.*``) to run a part.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "var" / "mutate"
WORK = OUT / "work"
SURVIVORS_FILE = ROOT / "tests" / "mutation_survivors.md"
PACKAGE = ROOT / "server" / "diagnosis_server"
PACKAGE_DIGEST_FILE = "package.sha256"
DIGEST_FILE = "tree.sha256"

# The pure safety core (paths inside src/ of the staging tree).
CORE = [
    "src/diagnosis_server/gatekeeper/*.py",
    "src/diagnosis_server/verification/*.py",
    "src/diagnosis_server/composition/*.py",
    "src/diagnosis_server/text/*.py",
    "src/diagnosis_server/graph/routing.py",
    "src/diagnosis_server/graph/engine.py",
    "src/diagnosis_server/protocols/*.py",
]
# Their own tests: the directories mirroring them, the route and engine tests, the golden cases' checks.
TESTS = [
    "tests/gatekeeper",
    "tests/verification",
    "tests/composition",
    "tests/protocols",
    "tests/text",
    "tests/graph/test_routing.py",
    "tests/graph/test_engine.py",
    "tests/graph/test_nodes.py",
    "tests/graph/test_projections.py",
    "tests/graph/test_retries.py",
    "tests/graph/test_result_mapping.py",
    "tests/graph/test_composer_input.py",
    "tests/graph/test_fabrication.py",
    "tests/graph/test_engine_events.py",
    "tests/graph/test_attempt_reliability.py",
    "tests/graph/test_engine_spans.py",
    "tests/graph/test_spec.py",
    "tests/golden/test_core_snapshot.py",
    "tests/test_evaluation.py",
    "tests/test_evidence_check.py",
    "tests/agents/openai/test_openai_contracts.py",
    # text/redaction.py and text/matching.py: their own tests stand beside the sources and attacks that use them
    "tests/sources/test_redaction_formats.py",
    "tests/sources/test_redaction_markers.py",
    "tests/safety_attacks/test_backtracking.py",
]

_CONFTEST = """
from hypothesis import settings  # noqa: E402

settings.register_profile(
    "mutate", derandomize=True, database=None, deadline=None, print_blob=False, max_examples=25
)
settings.load_profile("mutate")
"""


# Each mutant is one pytest.main in a forked child, so pytest's own cost per session counts thousands of times:
# only the plugins the tests use are loaded (entry points are not scanned: PYTEST_DISABLE_PLUGIN_AUTOLOAD), and
# not unraisableexception, whose clean-up runs gc.collect() over the whole inherited heap five times a session
# (about half of a fast mutant's time).
_PLUGINS = [
    "pytest_asyncio.plugin",
    "_hypothesis_pytestplugin",
    "anyio.pytest_plugin",
    "pytest_timeout",
    "tests.mutation.order_plugin",
]
_UNUSED = ["unraisableexception", "doctest", "junitxml", "pastebin", "stepwise", "faulthandler"]
_PYTEST_ARGS = [
    *(arg for name in _PLUGINS for arg in ("-p", name)),
    *(arg for name in _UNUSED for arg in ("-p", f"no:{name}")),
    "-W",
    "ignore",
]
_ENV = {"HYPOTHESIS_PROFILE": "mutate", "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}

MUTATE_EXAMPLES = 25
# The whole run is bounded (the 30 minutes on these machines): mutmut is stopped at the budget and the
# summary says how many mutants it did not reach (``not_checked``, ``complete``).
DEFAULT_MINUTES = 29
_MAX_EXAMPLES = re.compile(r"max_examples=(\d+)")
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", "mutants")


# mutmut stops a mutant at (its tests' measured seconds + constant) x multiplier x 2 CPU seconds; a mutant that
# makes a loop endless is killed sooner by the test that bounds it (``@pytest.mark.timeout``, pytest-timeout).


def _pyproject() -> str:
    def toml_list(items: list[str]) -> str:
        return "[" + ", ".join(json.dumps(i) for i in items) + "]"

    tests = [t for t in TESTS if (WORK / t).exists()]
    return f"""
[tool.mutmut]
source_paths = ["src/diagnosis_server"]
only_mutate = {toml_list(CORE)}
pytest_add_cli_args_test_selection = {toml_list(tests)}
pytest_add_cli_args = {toml_list(_PYTEST_ARGS)}
timeout_multiplier = 3.0
timeout_constant = 3.0
use_git_change_detection = false

[tool.pytest.ini_options]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "function"
addopts = "-q -p no:cacheprovider"
markers = ["postgres: needs PostgreSQL", "slow: long-running"]
"""


def tree_digest() -> str:
    """What a run's results depend on: every file of the package and of the tests, and this module's settings."""
    digest = hashlib.sha256(_pyproject_settings().encode())
    for base in (PACKAGE, ROOT / "tests"):
        for path in sorted(base.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _pyproject_settings() -> str:
    return json.dumps([CORE, TESTS, _PYTEST_ARGS, _ENV, MUTATE_EXAMPLES, _CONFTEST])


def resumable(digest: str) -> bool:
    """An earlier run over the same code and tests that did not check every mutant: mutmut goes on from its
    results (it runs only the mutants that have none)."""
    marker = WORK / DIGEST_FILE
    return marker.exists() and marker.read_text(encoding="utf-8") == digest and (WORK / "mutants").is_dir()


def stage(digest: str) -> None:
    if WORK.exists():
        shutil.rmtree(WORK)
    (WORK / "src").mkdir(parents=True)
    shutil.copytree(PACKAGE, WORK / "src" / "diagnosis_server", ignore=_IGNORE)
    (WORK / PACKAGE_DIGEST_FILE).write_text(core_digest(), encoding="utf-8")
    stage_tests(digest)


def stage_tests(digest: str) -> None:
    """The staging tree's tests: a copy of ``tests/`` as the run needs it."""
    if (WORK / "tests").exists():
        shutil.rmtree(WORK / "tests")
    shutil.copytree(ROOT / "tests", WORK / "tests", ignore=_IGNORE)
    # Property tests at a few examples each: a mutant runs every test that reaches its function, so a test of
    # hundreds of examples would cost every mutant of the text and composition core its whole run.
    for path in (WORK / "tests").rglob("test_*.py"):
        text = path.read_text(encoding="utf-8")
        capped = _MAX_EXAMPLES.sub(lambda m: f"max_examples={min(int(m.group(1)), MUTATE_EXAMPLES)}", text)
        if capped != text:
            path.write_text(capped, encoding="utf-8")
    (WORK / "pyproject.toml").write_text(_pyproject(), encoding="utf-8")
    # Deterministic property tests: a mutant is killed or not, never by chance. The suite's own conftest (its
    # fixtures and options) stays; the profile is added after it.
    conftest = WORK / "tests" / "conftest.py"
    own = conftest.read_text(encoding="utf-8") if conftest.exists() else ""
    conftest.write_text(own + "\n" + _CONFTEST, encoding="utf-8")
    (WORK / DIGEST_FILE).write_text(digest, encoding="utf-8")


def _mutmut(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, **_ENV)
    return subprocess.run(
        [sys.executable, "-m", "mutmut", *args], cwd=WORK, env=env, text=True, capture_output=True, check=False
    )


_STATUS_LINE = re.compile(r"^\s*(\S+__mutmut_\d+): (.+)$")


def equivalent_mutants() -> set[str]:
    """Mutant names listed in tests/mutation_survivors.md (a table whose first column is the name)."""
    if not SURVIVORS_FILE.exists():
        return set()
    names: set[str] = set()
    for line in SURVIVORS_FILE.read_text(encoding="utf-8").splitlines():
        # A row names one mutant in full, then maybe more of the same function by number: `_9`, `11`.
        first = re.search(r"`([\w.ǁ]+)__mutmut_(\d+)`", line)
        if first is None:
            continue
        cell = line.split("|")[1] if line.startswith("|") else line
        numbers = {first.group(2), *re.findall(r"`_?(\d+)`", cell)}
        names.update(f"{first.group(1)}__mutmut_{n}" for n in numbers)
    return names


def summarize(seconds: float) -> dict[str, object]:
    listing = _mutmut("results", "--all", "true")
    status: dict[str, str] = {}
    for line in listing.stdout.splitlines():
        match = _STATUS_LINE.match(line)
        if match:
            status[match.group(1)] = match.group(2).strip()
    counts: dict[str, int] = {}
    for value in status.values():
        counts[value] = counts.get(value, 0) + 1
    killed = counts.get("killed", 0) + counts.get("caught by type check", 0)
    timeout = counts.get("timeout", 0)
    surviving = sorted(name for name, s in status.items() if s in ("survived", "no tests", "suspicious"))
    survived = len(surviving)
    tested = killed + survived + timeout
    equivalent = equivalent_mutants()
    not_checked = counts.get("not checked", 0)
    return {
        "killed": killed,
        "survived": survived,
        "timeout": timeout,
        "score": round((killed + timeout) / tested, 4) if tested else 0.0,
        "survivors": [n for n in surviving if n not in equivalent],
        "equivalent": [n for n in surviving if n in equivalent],
        "not_checked": not_checked,
        "complete": not_checked == 0,
        "statuses": counts,
        "seconds": round(seconds),
    }


def summarize_only() -> int:
    """The summary of the last (possibly interrupted) run in var/mutate/work, without running anything."""
    summary = summarize(0.0)
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in summary.items() if k not in ("survivors", "equivalent")}))
    return 0


def _is_core(relative: Path) -> bool:
    """A file of the package (``gatekeeper/check.py``) that the run mutates."""
    staged = Path("src") / "diagnosis_server" / relative
    return any(staged.match(pattern) for pattern in CORE)


def core_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        if _is_core(path.relative_to(PACKAGE)):
            digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def recheck_names() -> list[str] | None:
    """``--recheck``: the last run's surviving mutants, to run again against the tests as they are now (the
    tests written to kill them), and the package's other files as they are now; None when the mutated files
    changed since (or there was no run): their mutants are not these any more."""
    marker = WORK / PACKAGE_DIGEST_FILE
    if not (WORK / "mutants").is_dir() or not marker.exists() or marker.read_text(encoding="utf-8") != core_digest():
        return None
    for path in PACKAGE.rglob("*"):
        relative = path.relative_to(PACKAGE)
        if path.is_file() and "__pycache__" not in path.parts and not _is_core(relative):
            for tree in (WORK / "src", WORK / "mutants" / "src"):
                target = tree / "diagnosis_server" / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
    last = summarize(0.0)
    names = [str(name) for key in ("survivors", "equivalent") for name in last[key]]  # type: ignore[attr-defined]
    stage_tests(tree_digest())
    return names


def main(argv: list[str]) -> int:
    if argv == ["--summary"]:
        return summarize_only()
    started = time.monotonic()
    if argv == ["--recheck"]:
        names = recheck_names()
        if names is None:
            print("no earlier run of this code to recheck: run make mutate first", file=sys.stderr)
            return 2
        print(f"rechecking the {len(names)} surviving mutants of the last run against the current tests")
        if not names:
            return summarize_only()
        argv = names
    else:
        digest = tree_digest()
        if os.environ.get("MUTATE_FRESH") or not resumable(digest):
            stage(digest)
        else:
            print("going on from the last run's results (same code and tests); MUTATE_FRESH=1 starts afresh")
    children = os.environ.get("MUTATE_CHILDREN", str(os.cpu_count() or 2))
    budget = float(os.environ.get("MUTATE_MINUTES", DEFAULT_MINUTES)) * 60
    with open(OUT / "mutmut.log", "w", encoding="utf-8") as log:
        run = subprocess.Popen(
            [sys.executable, "-m", "mutmut", "run", "--max-children", children, *argv],
            cwd=WORK,
            env=dict(os.environ, **_ENV),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        returncode = _wait_within(run, budget - (time.monotonic() - started))
    summary = summarize(time.monotonic() - started)
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(
        f"mutation score {summary['score']:.3f}: {summary['killed']} killed, {summary['survived']} survived, "
        f"{summary['timeout']} timeout in {summary['seconds']} s (var/mutate/summary.json)"
    )
    if returncode is None:
        print(
            f"stopped at the {budget / 60:.0f}-minute budget (MUTATE_MINUTES) with {summary['not_checked']} mutants "
            "not checked: the score is over the checked ones; run a part with MUTATE_ARGS to finish it",
            file=sys.stderr,
        )
        return 0
    if returncode != 0:
        print(f"mutmut run exited {returncode}; see var/mutate/mutmut.log", file=sys.stderr)
        return returncode
    return 0


def _wait_within(run: subprocess.Popen[bytes], seconds: float) -> int | None:
    """The run's exit code, or None when the budget ended it (its whole process group: mutmut forks)."""
    try:
        return run.wait(timeout=max(seconds, 1.0))
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGTERM)
        try:
            run.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
        return None


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
