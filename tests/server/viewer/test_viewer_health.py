"""The viewer's run-health page (FastAPI TestClient): the same SVG figures as `stillweb health --plot`,
the report as the CLI prints it, one file or all merged, damaged files shown with their problem,
unknown names and no files answered with a page, the nav link."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient

from stillweb.cli.main import main
from stillweb.server.viewer import ViewerConfig, make_viewer_app
from support.health_runs import collapsed, collapsing_run, healthy, write_run

WINDOW = {"window": 4, "baseline": 4}


@pytest.fixture(scope="module")
def runs(small_snapshot, tmp_path_factory):
    """(client, episodes dir) of a viewer over a healthy run, a collapsing one and a file a killed run cut short."""
    folder = tmp_path_factory.mktemp("health-runs")
    write_run(folder / "a-healthy.jsonl", [healthy(index) for index in range(8)])
    collapsing_run(folder / "b-collapse.jsonl")
    write_run(folder / "c-killed.jsonl", [healthy(0), collapsed(1, truncation_reason="<b>cut</b>")], tail='{"type": "st')
    client = TestClient(make_viewer_app(ViewerConfig(small_snapshot, episodes=(folder,))))
    return client, folder


def figures_in(page: str) -> list[str]:
    return re.findall(r'<svg xmlns="http://www.w3.org/2000/svg" class="health-figure".*?</svg>', page, re.S)


def test_one_file_shows_the_cli_figures_and_report(runs, tmp_path, capsys):
    client, folder = runs
    page = client.get("/view/health", params={"file": f"{folder.name}/b-collapse.jsonl", **WINDOW})
    assert page.status_code == 200
    out = tmp_path / "plot.svg"
    assert main(["health", str(folder / "b-collapse.jsonl"), "--window", "4", "--baseline", "4", "--plot", str(out)]) == 0
    printed = capsys.readouterr().out
    shown = figures_in(page.text)
    assert len(shown) == 7 and shown == figures_in(out.read_text(encoding="utf-8"))  # the very same SVG
    assert page.text.count('class="warning-marker"') == 4 and page.text.count('class="threshold"') == 5
    report = html.unescape(re.search(r'<pre class="health-report">(.*?)</pre>', page.text, re.S).group(1))
    cli_lines = printed.strip().splitlines()
    assert report.splitlines()[1:] == cli_lines[1:]  # the same figures and warnings (the first line names the file)
    assert "WARNING length_up" in report


def test_all_files_merge_in_listing_order_and_damage_is_shown(runs):
    client, folder = runs
    page = client.get("/view/health", params=WINDOW)
    assert page.status_code == 200
    report = html.unescape(re.search(r'<pre class="health-report">(.*?)</pre>', page.text, re.S).group(1))
    assert report.startswith("merged: 26 episodes")  # 8 + 16 + the 2 before the damage
    assert 'class="problem"' in page.text and "c-killed.jsonl" in page.text and "is not JSON" in page.text
    assert "&lt;b&gt;cut&lt;/b&gt;" in page.text and "<b>cut</b>" not in page.text
    for name in ("a-healthy.jsonl", "b-collapse.jsonl", "c-killed.jsonl"):
        assert f"file={folder.name}%2F{name}" in page.text
    killed = client.get("/view/health", params={"file": f"{folder.name}/c-killed.jsonl"})
    assert killed.status_code == 200 and "is not JSON" in killed.text and len(figures_in(killed.text)) == 7


def test_unknown_names_and_bad_parameters_get_a_page(runs):
    client, folder = runs
    page = client.get("/view/health", params={"file": "../secret.jsonl"})
    assert page.status_code == 404 and "text/html" in page.headers["content-type"]
    assert "no trajectory file named &#39;../secret.jsonl&#39;" in page.text and f"{folder.name}/a-healthy.jsonl" in page.text
    bad = client.get("/view/health", params={"window": 0})
    assert bad.status_code == 422 and "text/html" in bad.headers["content-type"]


def test_without_files_the_page_says_how_to_give_them(small_snapshot):
    client = TestClient(make_viewer_app(ViewerConfig(small_snapshot)))
    page = client.get("/view/health")
    assert page.status_code == 200 and "--episodes" in page.text and not figures_in(page.text)
    assert '<a href="/view/health">Health</a>' in page.text


def test_a_growing_run_shows_its_new_episodes(small_snapshot, tmp_path):
    folder = tmp_path / "live"
    folder.mkdir()
    path = write_run(folder / "live.jsonl", [healthy(index) for index in range(6)])
    client = TestClient(make_viewer_app(ViewerConfig(small_snapshot, episodes=(path,))))
    first = client.get("/view/health", params=WINDOW)
    assert "live.jsonl: 6 episodes" in first.text and 'class="warning-marker"' not in first.text
    collapsing_run(path, healthy_episodes=6, collapsed_episodes=6)  # the same first lines, then a collapse
    grown = client.get("/view/health", params=WINDOW)
    assert "live.jsonl: 12 episodes" in grown.text and 'class="warning-marker"' in grown.text


def test_by_policy_version_and_bad_axes(small_snapshot, tmp_path):
    folder = tmp_path / "versions"
    folder.mkdir()
    write_run(folder / "v.jsonl", [healthy(i, policy_version=1 + i // 3) for i in range(9)])
    write_run(folder / "plain.jsonl", [healthy(0)])
    client = TestClient(make_viewer_app(ViewerConfig(small_snapshot, episodes=(folder,))))
    by_episode = client.get("/view/health", params={"file": "versions/v.jsonl"})
    assert "plot by policy version" in by_episode.text and by_episode.text.count('class="policy-version"') == 7 * 3
    page = client.get("/view/health", params={"file": "versions/v.jsonl", "by": "policy_version"})
    assert page.status_code == 200 and len(figures_in(page.text)) == 7 and "one point per policy version" in page.text
    assert "--plot-by policy_version" in page.text
    merged = client.get("/view/health", params={"by": "policy_version"})
    assert merged.status_code == 200 and "1 episode(s) without a policy version not plotted" in merged.text
    none = client.get("/view/health", params={"file": "versions/plain.jsonl", "by": "policy_version"})
    assert none.status_code == 422 and "records a policy_version" in none.text
    bad = client.get("/view/health", params={"by": "<time>"})
    assert bad.status_code == 422 and "by=&#39;&lt;time&gt;&#39;" in bad.text and "episode, policy_version" in bad.text


def test_the_start_page_links_the_health_page(runs):
    client, _ = runs
    assert '<a href="/view/health"><b>Health</b></a>' in client.get("/view/").text
