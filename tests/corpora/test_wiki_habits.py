"""The synthetic world written in Wikipedia's infobox habits reads back to the same true facts."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from stillweb.corpora.build.from_source import build_synthetic
from stillweb.corpora.synthetic import generate_world
from stillweb.corpora.synthetic.wiki_habits import wikipedia_infobox
from stillweb.corpora.tasks.compose.generate import generate_task_list
from stillweb.corpora.tasks.compose.attempts import GenerationParams
from stillweb.corpora.tasks.store.quality import task_set_stats


@pytest.fixture(scope="module")
def wiki_style_snapshot(tmp_path_factory):
    out = tmp_path_factory.mktemp("habits") / "syn-300-wikipedia"
    build_synthetic(300, 0, out, workers=1, progress=False, dump_style="wikipedia")
    return out


def test_infoboxes_use_real_templates_keys_and_habits():
    world = generate_world(300, 0)
    boxes = "\n".join(wikipedia_infobox(world, gid) for gid in range(world.entity_count))
    for habit in ("{{Infobox settlement", "{{Infobox officeholder", "{{Infobox musical artist", "| released = ",
                  "| label = ", "| hq_location_city = ", "| leader_title1 = President", "| leader_name1 = ",
                  "| established_event1 = Independence", "| subdivision_type = Country", "{{birth date and age|",
                  "{{death date and age|", "<ref name=", "{{hlist|", "{{plainlist|", " minutes"):
        assert habit in boxes, habit


def test_wikipedia_habits_give_back_every_true_fact(wiki_style_snapshot, small_snapshot):
    import json

    manifest = json.loads((wiki_style_snapshot / "manifest.json").read_text())
    assert manifest["counts"]["fact_recovery"]["precision"] == 1.0
    assert manifest["counts"]["fact_recovery"]["recall"] == 1.0
    fields = manifest["counts"]["infobox_fields"]
    assert "infobox settlement|settlement_type" in {key for key, _ in fields["top_unmapped"]}
    columns = ["subject", "relation", "value", "value_type", "object"]
    direct = pq.read_table(small_snapshot / "facts.parquet", columns=columns).sort_by([(c, "ascending") for c in columns])
    habits = pq.read_table(wiki_style_snapshot / "facts.parquet", columns=columns).sort_by([(c, "ascending") for c in columns])
    assert habits.equals(direct)  # the same graph as the direct synthetic build


def test_tasks_from_the_wikipedia_style_dump_have_the_direct_build_figures(wiki_style_snapshot, small_snapshot):
    figures = []
    for snapshot in (small_snapshot, wiki_style_snapshot):
        stats = task_set_stats(generate_task_list(snapshot, GenerationParams(count=80, seed=4)).tasks)
        assert stats["malformed"] == 0
        figures.append(stats)
    # 5 words: since questions are minimal (issue 21) the medians are ~33 words and 40 tasks vary more
    assert abs(figures[0]["words_p50"] - figures[1]["words_p50"]) <= 5
    # the nouns differ ("a scientist" for "a person"), so the shortcut search keeps slightly different tasks
    assert set(figures[0]["hops"]) == set(figures[1]["hops"])
    assert all(abs(figures[0]["hops"][h] - figures[1]["hops"][h]) <= 4 for h in figures[0]["hops"])


_SCRIPT = (
    "import sys; from stillweb.corpora.synthetic import generate_world, wikipedia_style_pages, write_xml_dump; "
    "write_xml_dump(wikipedia_style_pages(generate_world(300, 3)), sys.argv[1])"
)


def test_wikipedia_style_dump_is_identical_across_processes(tmp_path):
    digests = []
    for name in ("a.xml", "b.xml"):
        subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path / name)], check=True)
        digests.append(hashlib.sha256((tmp_path / name).read_bytes()).hexdigest())
    assert digests[0] == digests[1]
