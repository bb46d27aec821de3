"""kill -9 at a random point of `spar index`, a workspace build, a relations build and key
evolution: every SQLite file stays sound and the resumed run ends exactly where an uninterrupted
one does (issue 17 item 3). A couple of trials per operation here; benchmarks/kill_trials.py runs
many more."""

from __future__ import annotations

import random
import sys

import pytest

from tests.support import kill_trials as kt

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
TRIALS = {"index": 2, "build": 1, "relations": 1, "evolution": 1}


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    base = tmp_path_factory.mktemp("kill")
    share = kt.write_share(base / "share", n_files=90)
    env = kt.child_env(base / "model-cache")
    samples = [str(p) for p in sorted(share.rglob("note-000*.md"))[:3]]
    return base, kt.scenarios(share, samples, list(kt.QUERIES) * 2), env


@pytest.mark.parametrize("operation", list(TRIALS))
def test_a_killed_operation_resumes_to_exactly_the_uninterrupted_result(setting, operation):
    base, scenarios, env = setting
    scenario = scenarios[operation]
    expected, took = kt.reference(scenario, base / f"{operation}-reference", env)
    assert kt.integrity_problems(base / f"{operation}-reference") == []
    rng = random.Random(operation)
    results = []
    for n in range(TRIALS[operation]):
        # Killed somewhere between the interpreter's start and the end of the work.
        after = rng.uniform(0.2, 0.95) * took
        results.append(kt.trial(scenario, base / f"{operation}-trial-{n}", env, expected, after))
    for r in results:
        assert r.integrity == [], r
        assert r.resumed_exactly, r.difference
