"""The stillweb viewer: web pages to look at what an agent sees.

``stillweb view SNAPSHOT [--tasks NAME] [--episodes PATH]`` serves, beside the
tool and session API of ``stillweb serve``:

- ``/view/search`` and ``/view/doc/{id or title}``: search the snapshot with the
  agent's own ``search`` tool (same ranking, same snippets; k up to the engine's 100)
  and open documents with their facts, links, redirects and source id, the query's
  words marked as the index matches them (``?q=`` carries the query to a document);
- ``/view/tasks`` and ``/view/tasks/{task_id}``: a task set with filters, one
  task's question, answers, formalization graph (SVG), evidence and the
  reference agent's tool calls;
- ``/view/episodes``: every recorded episode of the trajectory files in one table
  (sorted, filtered and paged on the server, with aggregates over the filtered rows);
  ``/view/episodes/{file}``: replay one step by step or all steps on
  one page (``?view=all``, under a strip of per-step rewards and flags), and compare
  two side by side from their first difference;
- ``/view/health``: the run-health report and plots of the recordings (one file or all
  merged): success, turns, action length, truncations, degenerate flags, with the health
  thresholds drawn and the episodes where ``stillweb health`` warns marked;
- ``/view/play``: play a task by hand through the ``/sessions`` API remote
  trainers use, and save the episode as a recording ``stillweb replay`` checks.

Pages are server-rendered Jinja2 templates with autoescaping; every asset is
package data (no CDN, no build step, a few lines of JavaScript).

>>> app = make_viewer_app("snapshots/syn", tasks="default")   # doctest: +SKIP
"""

from stillweb.server.viewer.app import ViewerConfig, make_viewer_app

__all__ = ["ViewerConfig", "make_viewer_app"]
