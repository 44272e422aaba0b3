"""``stillweb/WikiQA-v0``: multi-turn deep research over a corpus snapshot, and its solvability proof."""
