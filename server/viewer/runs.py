"""The runs table: every recorded episode of the viewer's trajectory files in one table
(``/view/episodes``), sorted, filtered and paged on the server, with aggregates over the
filtered rows.

:class:`RunIndex` takes the files' summaries from
:meth:`~stillweb.server.viewer.trajectories.TrajectoryFiles.summaries` (a file is read once, a
growing one only for its appended bytes) and keeps, while no file changes, one :class:`RunTable`: the episodes' columns as NumPy arrays, with a sort order
per key computed once. A request is then a mask, a lookup of a precomputed order and a
slice of :data:`PAGE_ROWS` rows, however many episodes there are.

>>> index = RunIndex(TrajectoryFiles([Path("runs")]), fingerprint="...")  # doctest: +SKIP
>>> index.table().select(RunQuery.parse({"sort": "reward", "order": "desc"}, index.table()))  # doctest: +SKIP
"""

from __future__ import annotations

import math
import threading
from urllib.parse import urlencode
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from stillweb.envs.profiles.passk import mean_pass_rates
from stillweb.envs.runs.run_summary import ENDINGS, EpisodeSummary, RecordingSummary
from stillweb.server.viewer.pages import error_page, render
from stillweb.server.viewer.run_query import (CHOICE_FILTERS, ORDERS, RANGE_FILTERS, SORT_KEYS, BadQuery, RunQuery,
                                              filter_number)
from stillweb.server.viewer.trajectories import TrajectoryFiles, other_snapshot_note

__all__ = ["router", "RunIndex", "RunTable", "FileColumns", "RunFile", "Selection", "PAGE_ROWS", "NONE"]

PAGE_ROWS = 100
NONE = "none"  # the filter value of a missing task, outcome, truncation reason, flag or policy version
MAX_OPTIONS = 200  # a filter with more choices than this is a text box, not a drop-down


@dataclass(frozen=True)
class RunFile:
    """One trajectory file as the table lists it: its episodes and what is wrong with it, if anything.

    ``problem``: why reading stopped (a cut last line, a damaged line, not a recording);
    ``other_snapshot``: set when its header's ``snapshot_fingerprint`` is not the viewer's.
    """

    name: str
    env_id: str | None
    episodes: int
    problem: str | None
    other_snapshot: str | None

    @property
    def note(self) -> str | None:
        """Everything wrong with the file in one sentence (``None``: nothing)."""
        notes = [text for text in (self.problem, self.other_snapshot) if text]
        return "; ".join(notes) or None


@dataclass(frozen=True)
class Selection:
    """What one request shows: the page's rows (episode, what is wrong with its file or ``None``),
    the count of filtered rows, the page and page count, and the aggregates over every filtered row."""

    rows: tuple[tuple[EpisodeSummary, str | None], ...]
    total: int
    page: int
    pages: int
    aggregates: dict[str, Any]


# The columns filtered by value: how an episode's value is written (None: missing) and how values sort.
_VALUE_COLUMNS = {
    "file": lambda episode: episode.file,
    "task": lambda episode: episode.task_id,
    "env": lambda episode: episode.env_id,
    "ending": lambda episode: episode.ending,
    "outcome": lambda episode: None if episode.outcome is None else filter_number(episode.outcome),
    "truncation": lambda episode: episode.truncation_reason,
    "policy": lambda episode: None if episode.policy_version is None else str(episode.policy_version),
}


def _number_order(text: str) -> tuple[bool, float]:
    """Numbers in order, ``nan`` last: a total order, so a recorded ``nan`` cannot make the order depend on set order."""
    number = float(text)
    return math.isnan(number), 0.0 if math.isnan(number) else number


_VALUE_ORDER = {"ending": ENDINGS.index, "outcome": _number_order, "policy": int}  # the others sort as text


class FileColumns:
    """One recording's episodes as arrays, value columns coded by rank among the file's own values
    (:class:`RunTable` remaps the codes when it puts files together, so a changed file is the only
    one turned into columns again)."""

    def __init__(self, summary: RecordingSummary) -> None:
        self.summary = summary
        episodes = summary.episodes
        size = len(episodes)
        self.values: dict[str, list[str]] = {}
        self.codes: dict[str, np.ndarray] = {}
        for name, value_of in _VALUE_COLUMNS.items():
            texts = [value_of(episode) for episode in episodes]
            self.values[name] = sorted({text for text in texts if text is not None})
            rank = {value: position for position, value in enumerate(self.values[name])}
            self.codes[name] = np.fromiter((-1 if text is None else rank[text] for text in texts), dtype=np.int64, count=size)
        self.flag_names = sorted({name for episode in episodes for name, _ in episode.flags})
        column = {name: position for position, name in enumerate(self.flag_names)}
        self.flag_counts = np.zeros((size, len(self.flag_names)), dtype=np.int64)
        for row, episode in enumerate(episodes):
            for name, count in episode.flags:
                self.flag_counts[row, column[name]] = count
        self.index = np.fromiter((episode.index for episode in episodes), dtype=np.int64, count=size)
        self.reward = np.fromiter((episode.reward for episode in episodes), dtype=np.float64, count=size)
        self.turns = np.fromiter((episode.turns for episode in episodes), dtype=np.int64, count=size)
        self.success = np.fromiter((episode.success for episode in episodes), dtype=bool, count=size)


class RunTable:
    """Every episode of the trajectory files, as columns (built once per set of file versions).

    ``files``: the :class:`RunFile` of every listed file, in listing order; ``episodes``:
    every :class:`~stillweb.envs.runs.run_summary.EpisodeSummary`, files in listing order;
    ``choices``: the valid values of each filter (sorted; ``none`` where a value can be missing).
    ``columns``: the :class:`FileColumns` of ``summaries`` where already made.
    """

    def __init__(self, summaries: Sequence[RecordingSummary], fingerprint: str | None,
                 columns: Sequence[FileColumns] | None = None) -> None:
        parts = list(columns) if columns is not None else [FileColumns(summary) for summary in summaries]
        self.files = tuple(_run_file(summary, fingerprint) for summary in summaries)
        self.episodes: tuple[EpisodeSummary, ...] = tuple(episode for summary in summaries for episode in summary.episodes)
        self.notes = {run.name: run.note for run in self.files if run.note}
        # codes: the rank of each row's value among the sorted values of every file (-1: missing), for filters and sorting
        self._values: dict[str, list[str]] = {}
        self._codes: dict[str, np.ndarray] = {}
        for name in _VALUE_COLUMNS:
            known = set().union(*(part.values[name] for part in parts), (run.name for run in self.files) if name == "file" else ())
            ordered = list(ENDINGS) if name == "ending" else sorted(known, key=_VALUE_ORDER.get(name, str))
            rank = {value: position for position, value in enumerate(ordered)}
            self._values[name] = ordered
            self._codes[name] = _joined([np.array([rank[value] for value in part.values[name]] + [-1], dtype=np.int64)[part.codes[name]]
                                         for part in parts], np.int64)
        self.flag_names = sorted(set().union(*(part.flag_names for part in parts)))
        column = {name: position for position, name in enumerate(self.flag_names)}
        self.flag_counts = np.zeros((len(self.episodes), len(self.flag_names)), dtype=np.int64)
        start = 0
        for part in parts:
            self.flag_counts[start:start + len(part.index), [column[name] for name in part.flag_names]] = part.flag_counts
            start += len(part.index)
        self.index = _joined([part.index for part in parts], np.int64)
        self.reward = _joined([part.reward for part in parts], np.float64)
        self.turns = _joined([part.turns for part in parts], np.int64)
        self.success = _joined([part.success for part in parts], bool)
        self.flag_total = self.flag_counts.sum(axis=1)
        self.choices: dict[str, tuple[str, ...]] = {
            **{name: tuple(values) for name, values in self._values.items()},
            "flag": tuple(self.flag_names),
        }
        for name in ("task", "outcome", "truncation", "policy", "flag"):
            self.choices[name] += (NONE,)
        self._orders: dict[tuple[str, str], np.ndarray] = {}
        self._lock = threading.Lock()

    def select(self, query: RunQuery) -> Selection:
        """The rows, counts and aggregates of ``query``; :class:`BadQuery` if its page is out of range."""
        mask = self.mask(query)
        order = self.order(query.sort, query.order)
        chosen = order[mask[order]]
        total = int(chosen.size)
        pages = max(1, -(-total // PAGE_ROWS))
        if not 1 <= query.page <= pages:
            raise BadQuery(f"page {query.page} is out of range: these {total:,} episodes fill pages 1 to {pages}", "page")
        shown = chosen[(query.page - 1) * PAGE_ROWS:query.page * PAGE_ROWS]
        rows = tuple((self.episodes[row], self.notes.get(self.episodes[row].file)) for row in shown.tolist())
        return Selection(rows, total, query.page, pages, self.aggregates(mask))

    def mask(self, query: RunQuery) -> np.ndarray:
        """Which rows pass every filter and range of ``query``."""
        mask = np.ones(len(self.episodes), dtype=bool)
        for name, value in query.filters.items():
            if name == "flag":
                mask &= (self.flag_total == 0) if value == NONE else (self.flag_counts[:, self.flag_names.index(value)] > 0)
            else:
                mask &= self._codes[name] == (-1 if value == NONE else self._values[name].index(value))
        for name, number in query.ranges.items():
            values = self.reward if name.startswith("reward") else self.turns
            mask &= (values >= number) if name.endswith("_min") else (values <= number)
        return mask

    def order(self, sort: str, order: str) -> np.ndarray:
        """Row numbers sorted by ``sort`` (ascending or descending), then file name, then episode index
        (always ascending): a total order, so every page is the same on every run."""
        with self._lock:
            if (sort, order) not in self._orders:
                key = self._sort_key(sort)
                key = -key if order == "desc" else key
                self._orders[(sort, order)] = np.lexsort((self.index, self._codes["file"], key))
            return self._orders[(sort, order)]

    def _sort_key(self, sort: str) -> np.ndarray:
        if sort == "episode":
            return self.index
        if sort == "reward":
            return self.reward
        if sort == "turns":
            return self.turns
        if sort == "flags":
            return self.flag_total
        return self._codes[sort].astype(np.int64)

    def aggregates(self, mask: np.ndarray) -> dict[str, Any]:
        """Figures over the rows of ``mask``: episodes, success rate, mean reward and turns, pass@k and pass^k over
        the tasks (:func:`_pass_rates`), the share
        of each ending and truncation reason, and per flag the episodes raising it and its total count."""
        count = int(mask.sum())
        endings = np.bincount(self._codes["ending"][mask], minlength=len(ENDINGS))
        reasons = np.bincount(self._codes["truncation"][mask] + 1, minlength=len(self._values["truncation"]) + 1)
        truncated = self._codes["ending"][mask] == ENDINGS.index("truncated")
        unnamed = int((truncated & (self._codes["truncation"][mask] == -1)).sum())
        truncation = [(reason, int(reasons[position + 1])) for position, reason in enumerate(self._values["truncation"]) if reasons[position + 1]]
        if unnamed:
            truncation.append((NONE, unnamed))
        tasks = self._codes["task"][mask]
        known = tasks >= 0  # an episode without a task id says nothing of a task's k tries
        tries = np.bincount(tasks[known], minlength=len(self._values["task"]))
        passes = np.bincount(tasks[known], weights=self.success[mask][known], minlength=len(self._values["task"]))
        chosen = mask.astype(np.int64)
        raising, raised = chosen @ (self.flag_counts > 0), chosen @ self.flag_counts  # per flag, without copying the rows
        return {
            "episodes": count,
            "success_rate": float(self.success[mask].mean()) if count else None,
            "mean_reward": float(self.reward[mask].mean()) if count else None,
            "mean_turns": float(self.turns[mask].mean()) if count else None,
            "pass_rates": _pass_rates(tries.tolist(), passes.astype(np.int64).tolist()),
            "endings": [(ending, int(endings[position])) for position, ending in enumerate(ENDINGS)],
            "truncation": truncation,
            "flags": [(name, int(raising[position]), int(raised[position]))
                      for position, name in enumerate(self.flag_names) if raising[position]],
        }


class RunIndex:
    """The current :class:`RunTable` of a set of trajectory files, rebuilt only when a file changes.

    ``fingerprint``: the viewer's snapshot fingerprint (files recorded on another snapshot are marked).
    """

    def __init__(self, files: TrajectoryFiles, fingerprint: str | None) -> None:
        self.files = files
        self.fingerprint = fingerprint
        self._lock = threading.Lock()
        self._summaries: tuple[RecordingSummary, ...] = ()
        self._columns: dict[str, FileColumns] = {}
        self._table: RunTable | None = None

    def table(self) -> RunTable:
        """The table of the files as they are now (each file stat-ed; changed files read for their new bytes)."""
        with self._lock:
            summaries = tuple(self.files.summaries())
            unchanged = len(summaries) == len(self._summaries) and all(a is b for a, b in zip(summaries, self._summaries))
            if self._table is None or not unchanged:
                columns = {summary.name: self._columns[summary.name] if summary.name in self._columns
                           and self._columns[summary.name].summary is summary else FileColumns(summary) for summary in summaries}
                self._table = RunTable(summaries, self.fingerprint, list(columns.values()))
                self._summaries, self._columns = summaries, columns
            return self._table


def router(files: TrajectoryFiles, fingerprint: str | None) -> APIRouter:
    """The runs table page, ``/episodes`` (its bad parameters get an error page naming them and the valid choices)."""
    index = RunIndex(files, fingerprint)
    pages = APIRouter(include_in_schema=False)

    @pages.get("/episodes", response_class=HTMLResponse)
    def runs_page(request: Request) -> HTMLResponse:
        table = index.table()
        try:
            query = RunQuery.parse(request.query_params, table)
            selection = table.select(query)
        except BadQuery as error:
            return error_page(422, "Cannot show these episodes", f"{error}.", back=_way_back(request.query_params, table, error))
        return render("episodes.html", table=table, wanted=query, selection=selection, configured=bool(files.paths),
                      sort_keys=SORT_KEYS, orders=ORDERS, max_options=MAX_OPTIONS)

    return pages


def _way_back(params: Mapping[str, str], table: RunTable, error: BadQuery) -> tuple[str, str]:
    """(url, label) of the table with the bad parameters of ``params`` left out and the valid ones kept:
    the parameter ``error`` names is dropped, and so is each one found bad after it, until the rest show."""
    kept = {name: value for name, value in params.items() if name in ("sort", "order", *CHOICE_FILTERS, *RANGE_FILTERS, "page")}
    dropped = [error.name]
    while True:
        kept.pop(dropped[-1], None)
        try:
            table.select(RunQuery.parse(kept, table))
        except BadQuery as again:
            if again.name not in kept:  # cannot happen (each bad value is a kept parameter); the plain table then
                return "/view/episodes", "Back to every episode"
            dropped.append(again.name)
            continue
        shown = {name: value for name, value in kept.items() if value}
        return (f"/view/episodes?{urlencode(shown)}" if shown else "/view/episodes",
                f"Back to the episodes without {', '.join(dict.fromkeys(dropped))}")


def _run_file(summary: RecordingSummary, fingerprint: str | None) -> RunFile:
    other = other_snapshot_note(summary.snapshot_fingerprint, fingerprint)
    problem = summary.problem
    if problem is None and not summary.episodes:
        problem = "no episodes" if summary.header else "empty"
    return RunFile(summary.name, summary.env_id, len(summary.episodes), problem, other)


def _pass_rates(tries: list[int], passes: list[int]) -> dict[str, Any]:
    """Mean pass@k and pass^k over the tasks tried at least twice (a single try has no k of 2), k being the
    fewest tries among them; over every task, k = 1, when none was tried twice
    (:func:`~stillweb.envs.profiles.passk.mean_pass_rates`)."""
    repeated = [(n, c) for n, c in zip(tries, passes) if n >= 2]
    return mean_pass_rates(repeated or zip(tries, passes))


def _joined(arrays: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.zeros(0, dtype=dtype)
