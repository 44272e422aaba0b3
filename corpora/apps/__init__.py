"""The seeded world of apps: per-user state of contacts, calendar, mail, files, payments,
shop, travel and to-do apps over the synthetic world's people, places, companies and works
(AppWorld-style), stored in SQLite, and the tasks checked against that state
(tau-bench-style: the final state, not the trajectory, is what counts).

- :mod:`.schema`: the tables, their columns and the state fingerprint of rows.
- :mod:`.generate`: :func:`build_base` makes the seeded base database of a snapshot.
- :mod:`.templates` and :mod:`.tasks`: task templates by category and the task-set writer.
"""

from stillweb.corpora.apps.generate import AppWorldBase, build_base
from stillweb.corpora.apps.schema import TABLES, Table

__all__ = ["AppWorldBase", "TABLES", "Table", "build_base"]
