"""A tiny, random, locally made chat model for running trainers offline on CPU.

:func:`save_tiny_model` writes a Hugging Face model directory: a one-layer Qwen2
(random weights, seeded) and a byte-level BPE tokenizer trained on the
snapshot's own text, with Qwen's special tokens and TRL's Qwen3 chat template
(tool calls as ``<tool_call>``). Nothing is downloaded, so TRL's ``GRPOTrainer``
and ``SFTTrainer`` run end to end on a laptop: the plumbing is proven, the
model learns nothing useful. For real training, pass a checkpoint name instead
(``"Qwen/Qwen3-0.6B"``) and drop the CPU options (docs/trainers.md says which).
Needs the ``trl`` extra (torch, transformers, tokenizers).

>>> save_tiny_model("snap/", "tiny-qwen2/")  # doctest: +SKIP
PosixPath('tiny-qwen2')
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["save_tiny_model"]

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
ADDED_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]
TRAINING_DOCS = 300  # documents of the snapshot the tokenizer is trained on


def save_tiny_model(snapshot: str | Path, out: str | Path, vocab_size: int = 2000, seed: int = 0) -> Path:
    """Write a random one-layer Qwen2 and a tokenizer trained on ``snapshot``'s text to ``out``; return ``out``."""
    import torch
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from trl.chat_template_utils import qwen3_chat_template

    from stillweb.corpora.snapshot.reading import Snapshot

    opened = Snapshot.open(snapshot)
    lines = [opened.text_of(doc_id) for doc_id in range(min(TRAINING_DOCS, len(opened)))]
    lines += ['{"name": "search", "arguments": {"query": "river city"}}', "system user assistant tool"]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer.add_tokens([AddedToken(token, special=False, normalized=False) for token in ADDED_TOKENS])
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   padding_side="left")
    fast.chat_template = qwen3_chat_template
    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=8192,
                         pad_token_id=fast.pad_token_id, eos_token_id=fast.eos_token_id, bos_token_id=None)
    out = Path(out)
    Qwen2ForCausalLM(config).save_pretrained(out)
    fast.save_pretrained(out)
    return out
