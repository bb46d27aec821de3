"""Session coverage@k and calls-to-τ on hand cases; bootstrap CIs are seeded and sensible."""

from __future__ import annotations

import numpy as np
import pytest

from spar_desktop.core.relations.session_metrics import (
    EvalSession, bootstrap_ci, censored, evaluate_sessions, paired_bootstrap_ci,
    session_coverage, simulate_calls,
)


def test_session_coverage_hand_cases():
    assert session_coverage(["a", "x", "b", "y"], {"a", "b", "c", "d"}) == 0.5
    assert session_coverage(["a", "x", "b", "y"], {"a", "b", "c", "d"}, k=2) == 0.25
    assert session_coverage(["a"], {"a"}, k=8) == 1.0  # recall@k when |S| = 1
    assert session_coverage(["a"], set()) == 0.0


def test_unreached_sessions_are_censored_past_the_call_limit():
    assert censored([1, None, 3], max_calls=10).tolist() == [1, 11, 3]


def test_simulated_follow_ups_target_the_first_missing_document():
    ranks = {"entry": ["a", "z"], "about b": ["b"], "about c": ["c", "d"]}
    s = EvalSession("s1", ("a", "b", "c", "d"), "entry", {"b": "about b", "c": "about c", "d": "about d"})
    assert simulate_calls(s, lambda q: ranks.get(q, []), 0.5, k=8) == 2
    assert simulate_calls(s, lambda q: ranks.get(q, []), 1.0, k=8) == 3
    assert simulate_calls(s, lambda q: ranks.get(q, []), 1.0, k=8, max_calls=2) is None
    no_follow = EvalSession("s2", ("a", "b"), "entry")
    assert simulate_calls(no_follow, lambda q: ranks.get(q, []), 1.0, k=8) is None


def test_bootstrap_ci_is_seeded_and_brackets_the_mean():
    values = np.random.default_rng(0).random(200)
    lo, hi = bootstrap_ci(values)
    assert lo < values.mean() < hi and hi - lo < 0.2
    assert bootstrap_ci(values) == (lo, hi)
    assert bootstrap_ci([0.5] * 10) == (0.5, 0.5)
    assert bootstrap_ci([]) == (0.0, 0.0)
    dlo, dhi = paired_bootstrap_ci(values, values + 0.1)
    assert dlo == pytest.approx(0.1) and dhi == pytest.approx(0.1)
    with pytest.raises(ValueError):
        paired_bootstrap_ci([1.0], [1.0, 2.0])


def test_evaluate_sessions_reports_paired_deltas():
    sessions = [EvalSession(f"s{i}", (f"a{i}", f"b{i}"), f"q{i}", {f"b{i}": f"find b{i}"}) for i in range(20)]

    def vanilla(q: str):
        i = q.split("q")[-1] if q.startswith("q") else q.split("b")[-1]
        return [f"a{i}"] if q.startswith("q") else [f"b{i}"]

    def expanded(q: str):
        i = q[1:] if q.startswith("q") else q.split("b")[-1]
        return [f"a{i}", f"b{i}"]

    report = evaluate_sessions(sessions, {"vanilla": vanilla, "expand": expanded}, k=8, taus=(0.5, 1.0))
    v, e = report.systems["vanilla"], report.systems["expand"]
    assert report.sessions == 20 and report.mean_session_size == 2.0 and report.baseline == "vanilla"
    assert v.coverage == 0.5 and e.coverage == 1.0
    assert e.coverage_delta == 0.5 and e.coverage_delta_ci95 == (0.5, 0.5)
    assert v.calls["tau=1"]["mean"] == 2.0 and e.calls["tau=1"]["mean"] == 1.0
    assert v.calls["tau=0.5"]["reached"] == 1.0
    assert report.to_json()["systems"]["expand"]["coverage"] == 1.0
