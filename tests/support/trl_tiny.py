"""A GRPO step on CPU for the TRL tests (tests/envs/integrations/test_integrations_trl.py, the Apps and BFCL tests):
a tiny byte-level tokenizer with Qwen's special tokens and TRL's chat template, a 1-layer Qwen2 whose sampling
follows a script of tool calls, and :func:`grpo_step`, which runs one ``GRPOTrainer`` step with an environment
factory (TRL extracts the tools from the factory's methods and calls them as the model asks)."""

from __future__ import annotations

import contextlib
import json

TOOL_JSON = "{{- tool | tojson }}"  # how Qwen3's chat template writes each tool into the prompt
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
ADDED = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]


def tiny_tokenizer(chat_template: str, texts: tuple[str, ...] = (), vocab_size: int = 400):
    """A byte-level BPE trained on a few lines (and ``texts``: a long prompt then takes fewer tokens), with Qwen's
    special tokens and TRL's chat template."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    lines = ['{"name": "search", "arguments": {"query": "the"}}', "user assistant system tool", "You are a research assistant."]
    tokenizer.train_from_iterator(lines + list(texts), trainer)
    tokenizer.add_tokens([AddedToken(token, special=False, normalized=False) for token in ADDED])
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   padding_side="left")
    fast.chat_template = chat_template
    return fast


def scripted_model(tokenizer, scripts: list[str], max_positions: int = 4096):
    """A 1-layer random Qwen2 whose sampling follows ``scripts[i]`` after the i-th tool response.

    In generation (no grad), the last position's logits get a large bonus on the next
    token of the script whose longest prefix ends the sequence; training forwards are untouched.
    Generation keeps its KV cache: a decoding step passes only the new token, so the model keeps each row's
    sequence from the step that starts with an empty cache (the whole prompt) on.
    """
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    token_scripts = [tokenizer.encode(script, add_special_tokens=False) + [tokenizer.eos_token_id] for script in scripts]
    response_id = tokenizer.convert_tokens_to_ids("<tool_response>")

    class ScriptedQwen2(Qwen2ForCausalLM):
        sequences: list[list[int]] = []

        def forward(self, input_ids=None, **kwargs):
            cache = kwargs.get("past_key_values")
            cached = cache.get_seq_length() if cache is not None and kwargs.get("use_cache", True) else 0
            output = super().forward(input_ids=input_ids, **kwargs)
            if torch.is_grad_enabled() or input_ids is None:
                return output
            new = input_ids.tolist()
            self.sequences = new if cached == 0 else [seen + ids for seen, ids in zip(self.sequences, new, strict=True)]
            for row, ids in enumerate(self.sequences):
                script = token_scripts[min(ids.count(response_id), len(token_scripts) - 1)]
                done = next((n for n in range(min(len(script), len(ids)), 0, -1) if ids[-n:] == script[:n]), 0)
                output.logits[row, -1, script[min(done, len(script) - 1)]] += 1e4
            return output

    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=max_positions,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    return ScriptedQwen2(config)



def grpo_step(factory, dataset, calls: list[dict], output_dir, monkeypatch, tool_names_only: bool = False):
    """One GRPO step (2 generations of ``dataset``'s first row) whose model makes ``calls`` in turn, each a
    ``{"name", "arguments"}`` tool call; returns the trainer (its environments: ``trainer._environment_pool[None]``).

    ``tool_names_only``: the prompt lists each tool by name, not its whole JSON schema (Apps-v0's 92 endpoints
    would make a prompt of ~30,000 tiny-tokenizer tokens); TRL still extracts every schema from the factory's
    methods (``get_json_schema``, inside ``apply_chat_template``) and parses the calls as Qwen3's."""
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import add_response_schema, get_training_chat_template, qwen3_chat_template

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    # after the last call's response the model ends its turn (an empty script: end of sequence), so the tool loop stops
    scripts = [f"<tool_call>\n{json.dumps(call)}\n</tool_call>" for call in calls] + [""]
    tokenizer = tiny_tokenizer(qwen3_chat_template)
    if tool_names_only:
        tokenizer = add_response_schema(tokenizer)  # Qwen3's tool-call parsing, matched on the template it has now
        training = get_training_chat_template(tokenizer)  # what TRL would train with (prefix-preserving)
        assert TOOL_JSON in training
        tokenizer.chat_template = training.replace(TOOL_JSON, "{{- tool.function.name }}")
    model = scripted_model(tokenizer, scripts)
    args = GRPOConfig(output_dir=str(output_dir), use_cpu=True, per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=1024, max_steps=1, logging_steps=1, report_to="none", save_strategy="no",
                      bf16=False, seed=0)
    trainer = GRPOTrainer(model=model, args=args, processing_class=tokenizer, train_dataset=dataset.select([0]),
                          environment_factory=factory)
    with one_torch_thread():
        trainer.train()
    return trainer


@contextlib.contextmanager
def one_torch_thread():
    """Torch on one thread inside: the tiny model's operations are too small to split, and two threads per operation
    wait on each other at every one when the cores are busy (pytest-xdist runs a worker per core): a GRPO step took
    twice the CPU time and several times the wall time with torch's default of one thread per core."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def logged_env_reward(trainer) -> float:
    """The mean environment reward TRL logged for the step."""
    logged = [entry for entry in trainer.state.log_history if "rewards/StillwebEnv/mean" in entry]
    assert logged, trainer.state.log_history
    return logged[0]["rewards/StillwebEnv/mean"]
