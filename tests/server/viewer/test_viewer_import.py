"""The viewer's task page of an imported set shows where it came from and its solvability report."""

from __future__ import annotations

from fastapi.testclient import TestClient

from stillweb.corpora.tasks.importers import ImportOptions, import_tasks
from stillweb.server.viewer import ViewerConfig, make_viewer_app
from support.qa_files import context_snapshot, kilt_rows, write_jsonl


def test_the_viewer_task_page_shows_the_solvability_report(shared_data, tmp_path):
    snapshot = context_snapshot(shared_data, tmp_path / "snap")
    import_tasks(snapshot, [write_jsonl(tmp_path / "nq-dev-kilt.jsonl", kilt_rows())], "viewed", ImportOptions(progress=False))
    client = TestClient(make_viewer_app(ViewerConfig(snapshot, tasks="viewed")))
    page = client.get("/view/tasks/-102")
    assert page.status_code == 200, page.text
    assert "imported from</th><td>kilt · answer match <code>em</code>" in page.text
    assert "gold evidence: 1 of 2 items in the snapshot (unmapped: missing_title)" in page.text
    assert "answer in an evidence doc: yes" in page.text
