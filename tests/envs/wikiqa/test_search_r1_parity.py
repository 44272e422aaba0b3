"""The ``search_r1`` tool format against Search-R1 itself: one table of turns read by both parsers (the
rollout parser of search_r1/llm_agent/generation.py and stillweb's strict one, the table docs/environments.md
shows), the observation Search-R1's loop appends (whole passages, its invalid-action message), and the
reward: EM and subEM equal verl's installed ``search_r1_like_qa_em`` on the full prompt + response string,
for the table and for generated turns (hypothesis)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stillweb.corpora.tasks.store.export import search_r1_prompt
from stillweb.envs.wikiqa.env import WikiQAEnv
from stillweb.sandboxes.formats import get_format
from stillweb.sandboxes.formats.search_r1 import INVALID_ACTION
from support.wiki18 import build_wiki18


DOCS = Path(__file__).resolve().parents[3] / "docs" / "environments.md"

# (case, turn text, Search-R1's rollout parser, stillweb's strict parser (one call per turn))
PARSER_TABLE = [
    ("search", "<think>I need the capital.</think>\n<search>capital of Velland</search>",
     "search: capital of Velland", "search: capital of Velland"),
    ("answer", "<think>It is Ostra.</think>\n<answer> Ostra </answer>", "answer: Ostra", "answer: Ostra"),
    ("text after the answer", "<answer>Ostra</answer> I am sure.", "answer: Ostra", "format error"),
    ("two answers", "<answer>Ostra</answer><answer>Lunor</answer>", "answer: Ostra", "format error"),
    ("search, then answer", "<search>capital of Velland</search><answer>Ostra</answer>",
     "search: capital of Velland", "format error"),
    ("answer, then search", "<answer>Ostra</answer><search>Velland</search>", "answer: Ostra", "format error"),
    ("two searches", "<search>Ostra</search><search>Velland</search>", "search: Ostra", "format error"),
    ("empty search", "<search></search>", "search: (empty)", "format error"),
    ("unclosed think", "<think>I know it.<answer>Ostra</answer>", "answer: Ostra", "format error"),
    ("end-of-turn token", "<answer>Ostra</answer><|im_end|>", "answer: Ostra", "format error"),
    ("search inside think", "<think>maybe <search>foo</search></think><answer>Ostra</answer>", "search: foo",
     "answer: Ostra"),
    ("no tag", "The capital is Ostra.", "invalid", "format error"),
    ("unclosed answer", "<answer>Ostra", "invalid", "format error"),
    ("abstain", "<abstain>No passage names it.</abstain>", "abstain", "abstain"),
]


def summary(parsed) -> str:
    if parsed.error is not None:
        return "invalid" if parsed.error == INVALID_ACTION else "format error"
    if parsed.abstained:
        return "abstain"
    if parsed.answer is not None:
        return f"answer: {parsed.answer}"
    return "; ".join(f"search: {call.arguments['query'] or '(empty)'}" for call in parsed.calls)


def test_the_parser_table():
    rollout, strict = get_format("search_r1"), get_format("search_r1", parser="strict")
    for case, text, expected_rollout, expected_strict in PARSER_TABLE:
        assert (summary(rollout.parse(text)), summary(strict.parse(text))) == (expected_rollout, expected_strict), case


def test_docs_show_the_table():
    """docs/environments.md holds the same table, row for row."""
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("<!-- search_r1 parser table -->")
    lines = text[start:].splitlines()[3:]
    rows = lines[: next((i for i, line in enumerate(lines) if not line.startswith("| ")), len(lines))]  # the whole table
    cells = [[cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip()[1:-1])] for row in rows]
    expected = [[case, "`" + text.replace("\n", "\\n").replace("|", "\\|") + "`", rollout, strict]
                for case, text, rollout, strict in PARSER_TABLE]
    assert cells == expected


@pytest.fixture(scope="module")
def wiki18(tmp_path_factory):
    return build_wiki18(tmp_path_factory.mktemp("parity"))[0]


TASKS = [{"task_id": "nq-0", "question": "what is the capital of velland", "answer": "Ostra", "aliases": ["Ostra city"],
          "source": "flashrag", "answer_match": "em"}]


def make_env(snapshot, **kwargs):
    return WikiQAEnv(snapshot, tasks=TASKS, tool_format="search_r1", max_turns=4, max_format_errors=None, **kwargs)


def test_a_search_shows_what_search_r1_appends(wiki18):
    env = make_env(wiki18)
    prompt, _ = env.reset(options={"task_id": "nq-0"})
    assert prompt == search_r1_prompt(TASKS[0]["question"])
    observation, *_ = env.step("<think>Find it.</think>\n<search>Lunor Bay lighthouse</search>")
    hits = env.snapshot.search("Lunor Bay lighthouse", 3)
    passages = "".join(f"Doc {rank}(Title: {env.snapshot.contents_of(hit.doc_id).split(chr(10))[0]}) "
                       f"{chr(10).join(env.snapshot.contents_of(hit.doc_id).split(chr(10))[1:])}\n"
                       for rank, hit in enumerate(hits, 1))
    assert len(hits) == 3 and observation == f"\n\n<information>{passages.strip()}</information>\n\n"
    assert 'Doc 1(Title: "Lunor Bay") ' in observation  # the row's own title line
    assert '(Title:   "Ostra"  ) Ostra is the capital' in env.step("<search>capital of Velland</search>")[0]
    observation, reward, terminated, *_ = env.step("I do not know.")
    assert observation == INVALID_ACTION and not terminated
    _, reward, terminated, _, info = env.step("<answer>Ostra</answer> done")
    assert terminated and reward == 1.0


def test_the_snippet_view_and_strict_parser_stay_available(wiki18):
    env = make_env(wiki18, format_options={"parser": "strict", "results": "snippets"})
    env.reset(options={"task_id": "nq-0"})
    observation, *_ = env.step("<search>capital of Velland</search>")
    assert observation.startswith("<information>Doc 1(Title: Ostra) ")
    observation, *_ = env.step("<answer>Ostra</answer> done")
    assert observation.startswith("<information>Format error: text after </answer>")


def test_recordings_from_before_replay_with_the_old_format(wiki18, tmp_path):
    """A recording of info version 3 or older (no format options) re-creates the strict parser and the snippet view."""
    from stillweb.envs.runs.recording_versions import replay_kwargs

    kwargs = replay_kwargs({"info_version": 3, "kwargs": {"tool_format": "search_r1", "snapshot": str(wiki18)}})
    env = WikiQAEnv(tasks=TASKS, max_turns=4, **kwargs)
    env.reset(options={"task_id": "nq-0"})
    assert env.step("<answer>Ostra</answer> done")[0].startswith("<information>Format error")
    assert replay_kwargs({"info_version": 4, "kwargs": {"tool_format": "search_r1"}}) == {"tool_format": "search_r1"}


def rollout_string(env, prompt: str, turns: list[str]) -> tuple[str, float | None]:
    """Play ``turns`` as Search-R1's loop does, building its full prompt + response string; (that string, the
    env's reward when it terminated, else None)."""
    sequence = prompt
    for turn in turns:
        cut = (turn.split("</search>")[0] + "</search>" if "</search>" in turn else
               turn.split("</answer>")[0] + "</answer>" if "</answer>" in turn else turn)  # _postprocess_responses
        observation, reward, terminated, truncated, _ = env.step(turn)
        sequence += cut
        if terminated:
            return sequence, reward
        sequence += observation
        if truncated:
            break
    return sequence, None


def verl_scores(sequence: str, golds: list[str]) -> tuple[float, float]:
    """verl's installed scorer (the verl extra), EM and subEM, on the full string."""
    qa_em = pytest.importorskip("verl.utils.reward_score.search_r1_like_qa_em")
    truth = {"target": golds}
    return qa_em.compute_score(sequence, truth), qa_em.compute_score_subem(sequence, truth)


@pytest.mark.extra
@pytest.mark.parametrize("case", PARSER_TABLE, ids=[row[0] for row in PARSER_TABLE])
def test_table_rewards_equal_verls(wiki18, case):
    for match in ("em", "subem"):
        env = make_env(wiki18, reward={"answer_match": match})
        prompt, _ = env.reset(options={"task_id": "nq-0"})
        sequence, reward = rollout_string(env, prompt, [case[1], "<answer>Ostra city</answer>"])
        em, subem = verl_scores(sequence, ["Ostra", "Ostra city"])
        assert reward == (em if match == "em" else subem), (case[0], match)


ANSWERS = st.sampled_from(["Ostra", " ostra. ", "The Ostra", "Ostra city", "Lunor", "Ostra, Velland", "", "ÖSTRA",
                           "Ostra\u00a0city", "a Ostra"])
PIECES = st.one_of(
    st.builds(lambda a: f"<answer>{a}</answer>", ANSWERS),
    st.builds(lambda q: f"<search>{q}</search>", st.sampled_from(["capital of Velland", "Lunor Bay", ""])),
    st.sampled_from(["<think>", "</think>", "<think>hmm</think>", "<answer>", "</answer>", "<search>", "</search>",
                     "<|im_end|>", " so ", "\n", "<abstain>", "Beijing"]),
)
TURNS = st.lists(st.lists(PIECES, min_size=1, max_size=6).map("".join), min_size=1, max_size=3)


@pytest.mark.extra
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=TURNS, match=st.sampled_from(["em", "subem"]))
def test_generated_turns_reward_equal_verls(wiki18, turns, match):
    """Where the episode ends with an answer turn, the env's reward is verl's on the same string (the answer it
    scores is the transcript's last <answer>, as verl reads it, even where the rollout acted on a first one).
    An episode that has not answered is not scored here (Search-R1 scores whatever its transcript holds at its
    last turn: the prompt's example, the invalid-action message's "<answer> and </answer>", a block inside a
    search query). verl's quarter for more than 10 answer tags (not in Search-R1's own qa_em.py) is the one
    documented difference."""
    env = make_env(wiki18, reward={"answer_match": match})
    prompt, _ = env.reset(options={"task_id": "nq-0"})
    sequence, reward = rollout_string(env, prompt, turns)
    em, subem = verl_scores(sequence, ["Ostra", "Ostra city"])
    if reward is None:
        return
    if sequence.count("<answer>") > 10 or sequence.count("</answer>") > 10:
        assert reward * 0.25 == (em if match == "em" else subem)  # verl's quarter for a flood of answer tags
    else:
        assert reward == (em if match == "em" else subem)


EPISODE_SCRIPT = r"""
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from stillweb.envs.wikiqa.env import WikiQAEnv
from support.wiki18 import build_wiki18
snapshot, _ = build_wiki18(Path(sys.argv[1]))
tasks = [{"task_id": "nq-0", "question": "what is the capital of velland", "answer": "Ostra", "source": "flashrag",
          "answer_match": "em"}]
env = WikiQAEnv(snapshot, tasks=tasks, tool_format="search_r1", max_turns=4)
outputs = [env.reset(options={"task_id": "nq-0"})[0]]
for turn in ["<search>Lunor Bay lighthouse</search>", "no tag", "<answer>Ostra</answer><answer>x</answer>"]:
    observation, reward, terminated, truncated, info = env.step(turn)
    outputs += [observation, repr(reward), repr(info.get("answer"))]
sys.stdout.write("\x00".join(outputs))
"""


def test_search_r1_episodes_are_identical_across_processes(tmp_path):
    import os
    import subprocess
    import sys

    tests = str(Path(__file__).resolve().parents[2])
    outputs = [subprocess.run([sys.executable, "-c", EPISODE_SCRIPT, str(tmp_path / seed), tests], capture_output=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}, check=True).stdout for seed in ("1", "2")]
    assert outputs[0] == outputs[1] and b"<information>Doc 1(Title: " in outputs[0]
