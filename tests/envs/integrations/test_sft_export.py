"""SFT export: `stillweb tasks export --format sft`, loaded with datasets and rendered with a chat template."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stillweb.cli.main import main
from stillweb.envs import WikiQAEnv

CLI = [sys.executable, "-c", "from stillweb.cli.main import main; raise SystemExit(main())"]


@pytest.mark.parametrize("shape", ["openai", "tongyi"])
def test_sft_export_loads_with_datasets_and_keeps_the_splits(tasks_snapshot, tmp_path, shape, capsys):
    from datasets import load_from_disk

    assert main(["tasks", "export", str(tasks_snapshot), "hard", "--format", "sft", "--shape", shape, "--out", str(tmp_path)]) == 0
    dataset = load_from_disk(str(tmp_path / "dataset"))
    train = WikiQAEnv(tasks_snapshot, "hard", "train").tasks
    assert set(dataset) <= {"train", "dev", "test"} and "train" in dataset
    assert set(dataset["train"]["task_id"]) <= {task.task_id for task in train}
    assert len(dataset["train"]) >= len(train) - 1  # the reference agent solves (nearly) every task
    row = dataset["train"][0]
    assert row["reward"] == 1.0 and [tool["function"]["name"] for tool in json.loads(row["tools"])][0] == "search"
    messages = row["messages"]
    assert messages[1]["content"] == train.by_id(row["task_id"]).question
    if shape == "openai":
        assert messages[2]["tool_calls"][0]["function"]["name"] == "search"
        assert messages[3]["role"] == "tool" and messages[3]["tool_call_id"] == messages[2]["tool_calls"][0]["id"]
        final = messages[-1]["tool_calls"][0]["function"]
        assert final["name"] == "answer" and json.loads(final["arguments"])["text"]
    else:
        assert messages[2]["content"].startswith("<tool_call>") and "<tool_response>" in messages[3]["content"]
        assert messages[-1]["content"].startswith("<answer>")


@pytest.mark.extra("trl")
def test_sft_rows_render_with_a_chat_template(tasks_snapshot, tmp_path):
    pytest.importorskip("transformers")
    from datasets import load_from_disk
    from transformers import PreTrainedTokenizerFast
    from tokenizers import Tokenizer, models

    from stillweb.envs.integrations.sft import export_sft

    export_sft(tasks_snapshot, "hard", tmp_path)
    row = load_from_disk(str(tmp_path / "dataset"))["train"][0]
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")))
    try:
        from trl.chat_template_utils import qwen3_chat_template as template
    except ImportError:  # any tool-aware template: a minimal one of our own
        template = ("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% for c in m.tool_calls or [] %}"
                    "<tool_call>{{ c.function.name }} {{ c.function.arguments }}</tool_call>{% endfor %}{% endfor %}")
    text = tokenizer.apply_chat_template(row["messages"], tools=json.loads(row["tools"]), tokenize=False, chat_template=template)
    assert row["messages"][1]["content"] in text
    assert json.loads(row["messages"][-1]["tool_calls"][0]["function"]["arguments"])["text"] in text
    assert row["messages"][3]["content"][:100] in text


@pytest.mark.slow
def test_sft_export_is_identical_across_processes(tasks_snapshot, tmp_path):
    outputs = []
    for run in ("a", "b"):
        out = tmp_path / run
        subprocess.run([*CLI, "tasks", "export", str(tasks_snapshot), "hard", "--format", "sft", "--out", str(out)],
                       check=True, capture_output=True)
        outputs.append({path.name: path.read_bytes() for path in sorted(out.glob("*.parquet"))})
    assert outputs[0] == outputs[1] and outputs[0]
