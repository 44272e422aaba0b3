"""One list per concept: every list of environments, call formats, import and export formats, answer-match
rules, corpus formats, retrieval modes, noise schedules, languages and Search-R1 data sources that README.md
and docs/ write out is marked ``<!-- registry: KIND -->`` ... ``<!-- /registry -->`` and must name exactly the
registry's entries; the CLI's choices and help and ``/openapi.json`` read the registries."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from stillweb.cli.main import make_parser
from stillweb.corpora.build.accounting import DEDUPE_POLICIES
from stillweb.corpora.build.from_source import DUMP_STYLES
from stillweb.corpora.search.analyzers import LANGUAGES
from stillweb.corpora.search.baselines import BASELINES
from stillweb.corpora.search.dense import SEARCH_MODES
from stillweb.corpora.sources.corpus_formats import CORPUS_FORMATS
from stillweb.corpora.tasks.answer_match import ANSWER_MATCH_RULES, ANSWER_MATCHES
from stillweb.corpora.tasks.compose.params import LEVELS
from stillweb.corpora.tasks.store.export import EXPORT_FORMATS, SEARCH_R1_DATA_SOURCES
from stillweb.corpora.tasks.store.splits import SPLITS
from stillweb.corpora.tasks.importers import FORMAT_NAMES
from stillweb.corpora.wikitext.variants import SCRIPTS
from stillweb.envs.integrations.sft import SFT_SHAPES
from stillweb.envs.profiles.players import AGENTS
from stillweb.envs.registration import ENV_IDS, SERVED_ENV_IDS
from stillweb.envs.runs.health_series import X_AXES
from stillweb.sandboxes.formats import FORMATS
from stillweb.sandboxes.frozen.replay import ON_MISS
from stillweb.sandboxes.tools.retrieval import RETRIEVAL_MODES, SCHEDULES

ROOT = Path(__file__).resolve().parent.parent
REGISTRIES = {
    "env-ids": ENV_IDS,  # envs/registration.py
    "tool-formats": tuple(FORMATS),  # sandboxes/formats/__init__.py
    "import-formats": FORMAT_NAMES,  # corpora/tasks/importers/reading.py
    "export-formats": EXPORT_FORMATS,  # corpora/tasks/store/export.py
    "answer-matches": ANSWER_MATCHES,  # corpora/tasks/answer_match.py
    "corpus-formats": CORPUS_FORMATS,  # corpora/sources/corpus_formats.py
    "retrieval-modes": tuple(RETRIEVAL_MODES),  # sandboxes/tools/retrieval.py
    "noise-schedules": SCHEDULES,  # sandboxes/tools/retrieval.py
    "languages": LANGUAGES,  # corpora/search/analyzers.py
    "search-r1-data-sources": SEARCH_R1_DATA_SOURCES,  # corpora/tasks/store/export.py
}
MARKED = re.compile(r"<!-- registry: ([\w-]+) -->(.*?)<!-- /registry -->", re.S)
CODE = re.compile(r"`([^`\n]+)`")


def marked_lists(text: str) -> list[tuple[str, list[str]]]:
    """``(kind, names)`` of every marked list of ``text``: a table's first column (below its header), else
    every name in backticks.

    >>> marked_lists("x <!-- registry: a -->`p`, `q`<!-- /registry -->")
    [('a', ['p', 'q'])]
    >>> marked_lists("<!-- registry: b -->\\n| `--f` | x |\\n|---|---|\\n| `p` | `k` |\\n<!-- /registry -->")
    [('b', ['p'])]
    """
    found = []
    for kind, body in MARKED.findall(text):
        rows = [line for line in body.splitlines() if line.startswith("|")]
        if rows:
            names = [name for row in rows[2:] for name in CODE.findall(row.split("|")[1])]
        else:
            names = CODE.findall(body)
        found.append((kind, names))
    return found


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_every_marked_list_names_exactly_its_registry():
    seen = set()
    for path in _docs():
        for kind, names in marked_lists(path.read_text(encoding="utf-8")):
            assert kind in REGISTRIES, f"{path.name}: unknown registry {kind!r}"
            expected = REGISTRIES[kind]
            missing, extra = sorted(set(expected) - set(names)), sorted(set(names) - set(expected))
            assert not missing and not extra and len(names) == len(set(names)), \
                f"{path.relative_to(ROOT)}'s {kind} list: missing {missing}, extra {extra} (the registry: {list(expected)})"
            seen.add(kind)
    assert seen == set(REGISTRIES), f"registries no doc lists: {sorted(set(REGISTRIES) - seen)}"


def test_the_environments_page_names_every_registered_environment():
    """docs/environments.md lists envs/registration.py's ``ENTRY_POINTS`` (a registered id it leaves out, as it
    once left out Remote-v0, fails here; a list naming one too many fails the test above)."""
    import stillweb.envs.registration as registration

    page = (ROOT / "docs" / "environments.md").read_text(encoding="utf-8")
    listed = [name for kind, names in marked_lists(page) if kind == "env-ids" for name in names]
    assert sorted(listed) == sorted(registration.ENTRY_POINTS), \
        f"docs/environments.md leaves out {sorted(set(registration.ENTRY_POINTS) - set(listed))}"


def test_a_list_missing_a_name_or_naming_one_too_many_is_found():
    good = "<!-- registry: tool-formats -->`tongyi`, `openai`, `search_r1`<!-- /registry -->"
    assert sorted(marked_lists(good)[0][1]) == sorted(FORMATS)
    assert sorted(marked_lists(good.replace(", `openai`", ""))[0][1]) != sorted(FORMATS)
    assert sorted(marked_lists(good.replace("`tongyi`", "`tongyi`, `harmony`"))[0][1]) != sorted(FORMATS)


def _subparser(parser: argparse.ArgumentParser, *path: str) -> argparse.ArgumentParser:
    for name in path:
        actions = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = actions.choices[name]
    return parser


def _choices(parser: argparse.ArgumentParser, option: str) -> tuple:
    return tuple(next(a for a in parser._actions if option in a.option_strings).choices)


CLI_CHOICES = [  # (subcommand path, option, the registry it must offer): every choice list of the CLI
    (("tasks", "import"), "--format", FORMAT_NAMES),
    (("tasks", "import"), "--answer-match", ANSWER_MATCHES),
    (("tasks", "export"), "--format", (*EXPORT_FORMATS, "sft")),
    (("tasks", "import"), "--data-source", SEARCH_R1_DATA_SOURCES),
    (("tasks", "export"), "--data-source", SEARCH_R1_DATA_SOURCES),
    (("tasks", "profile"), "--tool-format", tuple(FORMATS)),
    (("build", "corpus"), "--format", CORPUS_FORMATS),
    (("build", "corpus"), "--language", LANGUAGES),
    (("build", "wikipedia"), "--script", SCRIPTS),
    (("tasks", "export"), "--shape", SFT_SHAPES),
    (("apps", "export"), "--shape", SFT_SHAPES),
    (("bfcl", "export"), "--shape", SFT_SHAPES),
    (("build", "synthetic"), "--dump-style", DUMP_STYLES),
    (("tasks", "generate"), "--level", LEVELS),
    (("tasks", "profile"), "--agent", AGENTS),
    (("tasks", "profile"), "--split", SPLITS),
    (("eval", "retrieval"), "--baseline", tuple(BASELINES)),
    (("eval", "retrieval"), "--retriever", SEARCH_MODES),
    (("freeze", "serve"), "--on-miss", ON_MISS),
    (("health",), "--plot-by", X_AXES),
    (("build", "corpus"), "--dedupe", DEDUPE_POLICIES),
    (("build", "parquet"), "--format", CORPUS_FORMATS),
    (("build", "parquet"), "--dedupe", DEDUPE_POLICIES),
    (("build", "parquet"), "--language", LANGUAGES),
    (("build", "synthetic"), "--language", LANGUAGES),
    (("build", "wikipedia"), "--language", LANGUAGES),
    (("tasks", "profile"), "--retrieval", tuple(RETRIEVAL_MODES)),
]


@pytest.mark.parametrize(("path", "option", "expected"), CLI_CHOICES)
def test_cli_choices_are_the_registries(path, option, expected):
    assert _choices(_subparser(make_parser(), *path), option) == tuple(expected)


def _choice_options(parser: argparse.ArgumentParser, path: tuple = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _choice_options(sub, (*path, name))
        elif action.choices is not None:
            yield path, action.option_strings[0]


def test_every_cli_choice_list_is_checked_against_a_registry():
    """A choice list added to the CLI must join :data:`CLI_CHOICES` (read from its registry, not typed by hand)."""
    found = set(_choice_options(make_parser()))
    assert ((("tasks", "export"), "--shape") in found and (("health",), "--plot-by") in found)  # the walk sees nested ones
    assert found == {(path, option) for path, option, _ in CLI_CHOICES}, \
        f"unchecked: {sorted(found - {(p, o) for p, o, _ in CLI_CHOICES})}"


def test_cli_help_names_every_import_format_and_answer_rule():
    parser = _subparser(make_parser(), "tasks", "import")
    text = parser.format_help()
    assert all(re.search(rf"\b{re.escape(name)} \(", text) for name in FORMAT_NAMES), text
    assert all(f"{name}: {rule.summary}" in " ".join(text.split()) for name, rule in ANSWER_MATCH_RULES.items())


def test_openapi_names_the_served_environments_and_formats():
    from stillweb.server.models import CreateSessionRequest

    schema = CreateSessionRequest.model_json_schema()["properties"]
    assert all(env_id in schema["env_id"]["description"] for env_id in SERVED_ENV_IDS)
    assert all(name in schema["kwargs"]["description"] for name in FORMATS)
