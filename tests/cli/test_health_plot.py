"""``stillweb health --plot`` and the SVG it draws (stillweb.server.health_svg): thresholds and
warning markers in the markup, escaped labels, PNG of the drawn size, a bad suffix named,
the same bytes in two processes, no FastAPI on the CLI's path."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

from stillweb.cli.main import main
from stillweb.envs.runs.health import HealthConfig
from stillweb.envs.runs.health_series import run_plots
from stillweb.envs.runs.run_summary import summarize_recording
from stillweb.server.health_svg import HEIGHT, WIDTH, figure_svg, run_svg
from support.health_runs import collapsed, collapsing_run, healthy, write_run

SVG = "{http://www.w3.org/2000/svg}"
WINDOW = ["--window", "4", "--baseline", "4"]


@pytest.fixture
def collapse(tmp_path):
    return collapsing_run(tmp_path / "collapse.jsonl")


def figures_of(document: ElementTree.Element) -> dict[str, ElementTree.Element]:
    return {svg.get("data-figure"): svg for svg in document.iter(f"{SVG}svg") if svg.get("data-figure")}


def test_plot_svg_draws_the_thresholds_and_marks_the_warnings(collapse, tmp_path, capsys):
    out = tmp_path / "health.svg"
    assert main(["health", str(collapse), *WINDOW, "--json", "--plot", str(out)]) == 0
    captured = capsys.readouterr()
    reported = json.loads(captured.out)[str(collapse)]  # --json output stays one JSON object
    assert "wrote" in captured.err and "4 warning markers" in captured.err
    document = ElementTree.fromstring(out.read_text(encoding="utf-8"))
    figures = figures_of(document)
    assert list(figures) == ["success", "turns", "action_length", "truncation", "degenerate", "tool_use", "format"]
    thresholds = {key: sorted(g.get("data-code") for g in svg.iter(f"{SVG}g") if g.get("class") == "threshold")
                  for key, svg in figures.items()}
    assert thresholds == {"success": [], "turns": [], "truncation": [], "action_length": ["length_up"],
                          "degenerate": ["degenerate_actions"], "tool_use": ["tool_use_down"],
                          "format": ["format_errors_up", "repeated_calls"]}
    labels = "".join(figures["degenerate"].itertext())
    assert "degenerate_actions: above 20%" in labels and "length_up: 2 x baseline" in "".join(figures["action_length"].itertext())
    markers = {(g.get("data-code"), int(g.get("data-episode"))): g.find(f"{SVG}title").text
               for g in document.iter(f"{SVG}g") if g.get("class") == "warning-marker"}
    assert sorted(markers) == [("degenerate_actions", 9), ("format_errors_up", 9), ("length_up", 9), ("tool_use_down", 10)]
    assert {warning["code"] for warning in reported["warnings"]} == {code for code, _ in markers}
    for (code, episode), title in markers.items():  # the message stillweb health gives on the run cut at that episode
        cut = write_run(tmp_path / f"cut-{episode}.jsonl", [healthy(i) for i in range(8)] + [collapsed(i) for i in range(8, episode)])
        assert main(["health", str(cut), *WINDOW, "--json"]) == 0
        then = {warning["code"]: warning["message"] for warning in json.loads(capsys.readouterr().out)[str(cut)]["warnings"]}
        assert title == f"episode {episode}: WARNING {code}: {then[code]}"


def test_markers_sit_at_their_episode_and_value(collapse):
    plots = run_plots([summarize_recording(collapse)], HealthConfig(window=4, baseline=4))
    degenerate = next(figure for figure in plots.figures if figure.key == "degenerate")
    svg = ElementTree.fromstring(figure_svg(degenerate, plots))
    (marker,) = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "warning-marker"]
    circle = marker.find(f"{SVG}circle")
    left, right = 58, WIDTH - 200  # the plot area: episode 1 at the left edge, the last at the right
    assert float(circle.get("cx")) == pytest.approx(left + (9 - 1) / (16 - 1) * (right - left), abs=0.05)
    top, bottom = 38, HEIGHT - 50
    assert float(circle.get("cy")) == pytest.approx(bottom - 0.25 * (bottom - top), abs=0.05)  # 2 of 8 steps flagged


def test_labels_are_escaped(tmp_path):
    hostile = '<script>alert("x")</script>&'
    path = write_run(tmp_path / "x&<b>.jsonl", [collapsed(0, truncation_reason=hostile), healthy(1)])
    svg = run_svg(run_plots([summarize_recording(path)]))
    ElementTree.fromstring(svg)  # well-formed XML
    assert "<script>" not in svg and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in svg
    assert "x&amp;&lt;b&gt;.jsonl" in svg


def test_plot_png_decodes_to_the_drawn_size(collapse, tmp_path):
    from PIL import Image as image  # Pillow comes with CairoSVG, a core dependency: no skip

    svg, png = tmp_path / "health.svg", tmp_path / "health.PNG"
    assert main(["health", str(collapse), *WINDOW, "--plot", str(svg)]) == 0
    assert main(["health", str(collapse), *WINDOW, "--plot", str(png)]) == 0
    root = ElementTree.fromstring(svg.read_text(encoding="utf-8"))
    with image.open(io.BytesIO(png.read_bytes())) as decoded:
        assert decoded.format == "PNG" and decoded.size == (int(root.get("width")), int(root.get("height")))
        pixels = decoded.convert("RGB")
        reds = sum(1 for r, g, b in pixels.get_flattened_data() if r > 180 and g < 80 and b < 80)
        assert reds > 100  # the warning markers and threshold lines were drawn


def test_a_bad_plot_suffix_names_the_value(collapse, tmp_path, capsys):
    assert main(["health", str(collapse), "--plot", str(tmp_path / "health.pdf")]) == 2
    error = capsys.readouterr().err
    assert "health.pdf" in error and ".svg or .png" in error and "'.pdf'" in error
    assert not (tmp_path / "health.pdf").exists()
    assert main(["health", str(collapse), "--plot", str(tmp_path / "health")]) == 2
    assert "got 'none'" in capsys.readouterr().err


def test_missing_cairosvg_names_what_to_install(collapse, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "cairosvg", None)  # import cairosvg now raises ImportError
    assert main(["health", str(collapse), "--plot", str(tmp_path / "health.png")]) == 2
    assert "pip install cairosvg" in capsys.readouterr().err


def test_plot_svg_is_byte_identical_in_two_processes(tmp_path):
    run = write_run(tmp_path / "run.jsonl", [healthy(i, policy_version=i // 3) for i in range(6)]
                    + [collapsed(i, policy_version=2) for i in range(6, 12)])
    outputs = []
    for number in (1, 2):
        out = tmp_path / f"plot{number}.svg"
        subprocess.run([sys.executable, "-m", "stillweb.cli.main", "health", str(run), *WINDOW, "--plot", str(out)],
                       check=True, capture_output=True, cwd=tmp_path)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] and b"warning-marker" in outputs[0] and b"policy-version" in outputs[0]
    assert re.search(rb"\d\.\d{2,}", b"".join(re.findall(rb' (?:x|y|cx|cy|x1|y1|x2|y2)="[^"]*"', outputs[0]))) is None


def test_the_plot_path_imports_no_fastapi():
    code = ("import sys; import stillweb.cli.health, stillweb.server.health_svg, stillweb.envs.runs.health_series; "
            "assert 'fastapi' not in sys.modules, 'fastapi imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_help_shows_a_plot_example(capsys):
    with pytest.raises(SystemExit):
        main(["health", "--help"])
    assert "--plot health.svg" in capsys.readouterr().out


def test_config_window_and_baseline_apply_to_the_plot(collapse, tmp_path):
    config = tmp_path / "health.json"
    config.write_text(json.dumps({"max_degenerate_share": 0.6, "length_growth": 50, "window": 8}), encoding="utf-8")
    out = tmp_path / "health.svg"
    assert main(["health", str(collapse), "--config", str(config), "--baseline", "4", "--plot", str(out)]) == 0
    svg = out.read_text(encoding="utf-8")
    assert "degenerate_actions: above 60%" in svg and "length_up: 50 x baseline" in svg
    assert "window 8, baseline 4" in svg and "rolling over the last 8 finished episodes" in svg
    document = ElementTree.fromstring(svg)
    markers = sorted((g.get("data-code"), int(g.get("data-episode"))) for g in document.iter(f"{SVG}g")
                     if g.get("class") == "warning-marker")
    assert ("degenerate_actions", 13) in markers and not any(code == "length_up" for code, _ in markers)


def test_plot_by_policy_version(tmp_path, capsys):
    run = write_run(tmp_path / "run.jsonl", [healthy(i, policy_version=10 + i // 4) for i in range(8)]
                    + [collapsed(i, policy_version=12 + (i - 8) // 4) for i in range(8, 16)])
    out = tmp_path / "by-version.svg"
    assert main(["health", str(run), *WINDOW, "--plot", str(out), "--plot-by", "policy_version"]) == 0
    document = ElementTree.fromstring(out.read_text(encoding="utf-8"))
    success = next(svg for key, svg in figures_of(document).items() if key == "success")
    assert "policy version" in "".join(success.itertext()) and "one point per policy version" in "".join(success.itertext())
    ticks = [text.text for text in success.iter(f"{SVG}text") if text.get("text-anchor") == "middle" and (text.text or "").isdigit()]
    assert ticks == ["10", "11", "12", "13"]
    markers = [g.find(f"{SVG}title").text for g in document.iter(f"{SVG}g") if g.get("class") == "warning-marker"]
    assert markers and all("(policy version 12)" in title for title in markers)  # the collapse starts with version 12
    plain = write_run(tmp_path / "plain.jsonl", [healthy(0)])
    capsys.readouterr()
    assert main(["health", str(plain), "--plot", str(tmp_path / "x.svg"), "--plot-by", "policy_version"]) == 2
    assert "records a policy_version" in capsys.readouterr().err
    assert main(["health", str(plain), "--plot-by", "policy_version"]) == 2
    assert "give --plot too" in capsys.readouterr().err


def test_a_killed_runs_file_is_reported_and_plotted_up_to_the_damage(tmp_path, capsys):
    path = write_run(tmp_path / "killed.jsonl", [healthy(index) for index in range(8)] + [collapsed(8)],
                     tail='{"type": "step", "act')
    out = tmp_path / "killed.svg"
    assert main(["health", str(path), *WINDOW, "--json", "--plot", str(out)]) == 0
    captured = capsys.readouterr()
    reported = json.loads(captured.out)[str(path)]
    assert reported["episodes"] == 9 and "ends in the middle" in reported["problem"]
    assert "note:" in captured.err and "counting the 9 episodes before it" in captured.err
    assert ElementTree.fromstring(out.read_text(encoding="utf-8")) is not None
    intact = write_run(tmp_path / "intact.jsonl", [healthy(index) for index in range(8)] + [collapsed(8)])
    assert main(["health", str(intact), *WINDOW, "--json"]) == 0
    same = json.loads(capsys.readouterr().out)[str(intact)]
    assert same["problem"] is None and {**same, "problem": reported["problem"]} == reported


@pytest.mark.parametrize("content, named", [("", "empty"), ('{"type": "reset"}\n', "not a recording header")])
def test_a_file_that_is_no_recording_is_an_error_naming_it(tmp_path, capsys, content, named):
    path = tmp_path / "not-a-run.jsonl"
    path.write_text(content, encoding="utf-8")
    assert main(["health", str(path)]) == 2
    error = capsys.readouterr().err
    assert "not-a-run.jsonl" in error and named in error
    assert main(["health", str(tmp_path / "gone.jsonl")]) == 2 and "does not exist" in capsys.readouterr().err
