"""TRL: the environment factory and dataset through TRL's own tool-schema extraction and GRPO loop."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.extra

trl = pytest.importorskip("trl")
transformers = pytest.importorskip("transformers")

from stillweb.envs.integrations.episode import DEFAULT_TOOLS, tool_content  # noqa: E402
from stillweb.envs.integrations.trl import environment_factory, task_dataset  # noqa: E402
from stillweb.sandboxes import ToolRegistry  # noqa: E402
from stillweb.corpora import Snapshot  # noqa: E402


def test_tool_schemas_from_trl_extraction_match_the_registry(tasks_snapshot):
    from transformers.utils import get_json_schema

    env = environment_factory(tasks_snapshot, "hard")()
    ours = {item["function"]["name"]: item["function"] for item in ToolRegistry(Snapshot.open(tasks_snapshot), tools=DEFAULT_TOOLS).schemas()}
    for name, function in ours.items():
        extracted = get_json_schema(getattr(env, name))["function"]
        assert extracted["name"] == name
        assert extracted["description"] == function["description"]
        assert sorted(extracted["parameters"]["properties"]) == sorted(function["parameters"]["properties"])
        assert sorted(extracted["parameters"].get("required", [])) == sorted(function["parameters"].get("required", []))
    assert {"reset", "get_reward"} <= set(dir(env))


def test_dataset_rows_reset_the_env_and_the_reference_episode_matches_in_process(tasks_snapshot, reference_trace):
    dataset = task_dataset(tasks_snapshot, "hard")
    assert dataset.column_names == ["prompt", "task_id", "answer"]
    env = environment_factory(tasks_snapshot, "hard")()  # default limits: every task solved
    for row in dataset:
        assert env.reset(**row) is None
        assert row["prompt"][-1]["content"] == env.episode.env.tasks.by_id(row["task_id"]).question
        steps = reference_trace(tasks_snapshot, "hard", row["task_id"])
        for name, arguments, observation, reward, info in steps:
            text = getattr(env, name)(**arguments)
            if name != "answer":
                assert text == tool_content(observation)
        assert env.get_reward() == steps[-1][3] == 1.0
        # same actions and observations: the history equals the reference's steps' new messages, in order
        assert env.episode.env.unwrapped.messages[2:] == [message for *_, info in steps for message in info["messages"]]
        assert env.episode.info["reward_parts"] == steps[-1][4]["reward_parts"]


def test_bad_tool_arguments_reach_the_registry_as_error_observations(tasks_snapshot):
    env = environment_factory(tasks_snapshot, "hard")()
    env.reset(**task_dataset(tasks_snapshot, "hard")[0])
    assert env.search(qery="x").startswith("Invalid arguments for search: unexpected argument(s) 'qery'")
    assert "Invalid arguments for open" in env.open(doc=-5)
    assert env.get_reward() == 0.0
    with pytest.raises(ValueError, match="task_id"):
        env.reset(prompt=[])


@pytest.mark.slow
def test_qwen3_chat_template_renders_the_tools(tasks_snapshot):
    from trl.chat_template_utils import qwen3_chat_template

    tokenizer = _tiny_tokenizer(qwen3_chat_template)
    env = environment_factory(tasks_snapshot, "hard")()
    tools = [getattr(env, name) for name in DEFAULT_TOOLS]
    text = tokenizer.apply_chat_template(task_dataset(tasks_snapshot, "hard")[0]["prompt"], tools=tools, tokenize=False,
                                         add_generation_prompt=True)
    for name in DEFAULT_TOOLS:
        assert f'"name": "{name}"' in text


# -- a GRPO step on CPU with a tiny scripted model ----------------------------------------------------------

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
ADDED = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]


def _tiny_tokenizer(chat_template: str):
    """A byte-level BPE trained on a few lines, with Qwen's special tokens and TRL's chat template."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    lines = ['{"name": "search", "arguments": {"query": "the"}}', "user assistant system tool", "You are a research assistant."]
    tokenizer.train_from_iterator(lines, trainer)
    tokenizer.add_tokens([AddedToken(token, special=False, normalized=False) for token in ADDED])
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   padding_side="left")
    fast.chat_template = chat_template
    return fast


def _scripted_model(tokenizer, scripts: list[str]):
    """A 1-layer random Qwen2 whose sampling follows ``scripts[i]`` after the i-th tool response.

    In generation (no grad), the last position's logits get a large bonus on the next
    token of the script whose longest prefix ends the sequence; training forwards are untouched.
    """
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    token_scripts = [tokenizer.encode(script, add_special_tokens=False) + [tokenizer.eos_token_id] for script in scripts]
    response_id = tokenizer.convert_tokens_to_ids("<tool_response>")

    class ScriptedQwen2(Qwen2ForCausalLM):
        def forward(self, input_ids=None, **kwargs):
            output = super().forward(input_ids=input_ids, **kwargs)
            if torch.is_grad_enabled() or input_ids is None:
                return output
            for row, ids in enumerate(input_ids.tolist()):
                script = token_scripts[min(ids.count(response_id), len(token_scripts) - 1)]
                done = next((n for n in range(min(len(script), len(ids)), 0, -1) if ids[-n:] == script[:n]), 0)
                output.logits[row, -1, script[min(done, len(script) - 1)]] += 1e4
            return output

    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    return ScriptedQwen2(config)


@pytest.mark.slow
def test_grpo_trainer_step_runs_the_tools_and_takes_the_env_reward(tasks_snapshot, tmp_path, monkeypatch):
    import json

    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen3_chat_template

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    dataset = task_dataset(tasks_snapshot, "hard").select([0])
    task = dataset[0]
    factory = environment_factory(tasks_snapshot, "hard")
    query = {"query": task["prompt"][-1]["content"][:60], "k": 1}
    calls = [{"name": "search", "arguments": query}, {"name": "answer", "arguments": {"text": task["answer"], "citations": []}}]
    scripts = [f"<tool_call>\n{json.dumps(call)}\n</tool_call>" for call in calls]
    tokenizer = _tiny_tokenizer(qwen3_chat_template)
    model = _scripted_model(tokenizer, scripts)
    args = GRPOConfig(output_dir=str(tmp_path), use_cpu=True, per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=1024, max_steps=1, logging_steps=1, report_to="none", save_strategy="no",
                      bf16=False, generation_kwargs={"use_cache": False}, seed=0)
    trainer = GRPOTrainer(model=model, args=args, processing_class=tokenizer, train_dataset=dataset,
                          environment_factory=factory)
    trainer.train()

    expected = factory()
    expected.reset(**task)
    search_text = expected.search(**query)
    expected.answer(**calls[1]["arguments"])
    rollouts = trainer._environment_pool[None]
    assert len(rollouts) == 2
    for env in rollouts:
        assert env.episode.info["task_id"] == task["task_id"]
        assert env.episode.info["tool_calls"] == 1 and env.episode.info["answer"] == task["answer"]
        assert env.episode.env.unwrapped.messages[2:] == expected.episode.env.unwrapped.messages[2:]
        assert env.get_reward() == expected.get_reward() == 1.0
    logged = [entry for entry in trainer.state.log_history if "rewards/StillwebEnv/mean" in entry]
    assert logged and logged[0]["rewards/StillwebEnv/mean"] == 1.0
    assert search_text.startswith("[doc ") or "result" in search_text.lower()
