"""`tasks profile --retrieval`: each ablation profiled under its own name and compared side by side;
pass^k beside pass@k in every profile row and in the summary line."""

from __future__ import annotations

import json
import shutil

import pytest

from stillweb.cli.main import main
from stillweb.envs.profiles import episodes_path, read_episodes, read_profile
from stillweb.envs.profiles.passk import mean_pass_rates, pass_at_k, pass_hat_k


@pytest.fixture()
def snap(tasks_snapshot, tmp_path):
    path = tmp_path / "snap"
    shutil.copytree(tasks_snapshot, path)
    return path


def test_retrieval_modes_are_profiled_side_by_side(snap, capsys):
    argv = ["tasks", "profile", str(snap), "hard", "--agent", "reference", "--max-turns", "64", "-k", "2",
            "--split", "dev", "--retrieval", "golden", "--retrieval", "none"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    golden, none = read_profile(snap, "hard", "reference.golden"), read_profile(snap, "hard", "reference.none")
    assert golden and [row["task_id"] for row in golden] == [row["task_id"] for row in none]
    assert all(row["pass_at_1"] == 1.0 and row["pass_hat_k"] == 1.0 for row in golden)
    # the reference agent opens its evidence by title when search lists nothing: it passes closed-book too
    assert all(row["pass_at_1"] == 1.0 and row["pass_hat_k"] == 1.0 for row in none)
    header, _ = read_episodes(episodes_path(snap, "hard", "reference.none"))
    assert header["env_kwargs"]["retrieval"] == "none"
    assert f"| golden | {len(golden)} | 1.000 | 1.000 | 1.000 |" in out
    assert f"| none | {len(none)} | 1.000 | 1.000 | 1.000 |" in out
    assert out.count("pass^2 1.000") == 2 and "reference.none.parquet" in out


def test_a_bad_mode_is_refused_naming_the_modes(snap, capsys):
    with pytest.raises(SystemExit):
        main(["tasks", "profile", str(snap), "hard", "--agent", "reference", "--retrieval", "grep"])
    assert "golden" in capsys.readouterr().err


def test_pass_hat_k_is_below_pass_at_k_for_a_flaky_task():
    assert pass_hat_k(8, 4, 2) < 0.5 < pass_at_k(8, 4, 2)
    assert (pass_hat_k(8, 4, 2), pass_at_k(8, 4, 2)) == (pytest.approx(6 / 28), pytest.approx(1 - 6 / 28))  # C(4,2)/C(8,2)
    assert pass_hat_k(8, 8, 4) == pass_at_k(8, 8, 4) == 1.0
    assert pass_hat_k(8, 0, 4) == pass_at_k(8, 0, 4) == 0.0
    rates = mean_pass_rates([(4, 2), (2, 2), (0, 0)])
    assert rates["k"] == 2 and rates["tasks"] == 2
    assert rates["pass_hat_k"] == pytest.approx((1 / 6 + 1) / 2) and json.dumps(rates)
    assert rates["pass_at_k"] == pytest.approx((5 / 6 + 1) / 2)
