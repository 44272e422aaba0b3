"""``stillweb apps generate|verify``."""

from __future__ import annotations

import shutil

from stillweb.cli.main import main


def test_generate_writes_a_verified_set_and_verify_passes(small_snapshot, tmp_path, capsys):
    snapshot = tmp_path / "snap"
    shutil.copytree(small_snapshot, snapshot)
    assert main(["apps", "generate", str(snapshot), "--name", "mini", "--count", "16", "--users", "12"]) == 0
    output = capsys.readouterr().out
    assert "wrote 16 tasks" in output and "16/16 tasks passed" in output
    assert {path.name for path in (snapshot / "apps" / "mini").iterdir()} == {"train.jsonl", "dev.jsonl", "test.jsonl", "card.md"}
    assert main(["apps", "verify", str(snapshot), "mini"]) == 0
    assert main(["apps", "export", str(snapshot), "mini", "--out", str(tmp_path / "sft")]) == 0
    assert (tmp_path / "sft" / "train.parquet").is_file()


def test_bad_input_is_a_message_not_a_traceback(tmp_path, capsys):
    assert main(["apps", "generate", str(tmp_path / "nowhere"), "--name", "x"]) == 2
    assert "nowhere" in capsys.readouterr().err
    assert main(["apps", "verify", str(tmp_path), "missing"]) == 2
