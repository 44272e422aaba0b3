"""The emptiness proof of an unanswerable task, stored with it like the uniqueness proof.

Two kinds (see :mod:`stillweb.corpora.tasks.prove.unanswerable`):

- ``joint_empty``: every constraint of the question is satisfied by some entity
  (``constraints``: each with how many entities satisfy it alone and the
  smallest such entity id as a witness), but evaluating them together over the
  fact graph leaves no candidate (``candidates``: each variable's count, the
  root's 0);
- ``missing_attribute``: the question identifies exactly one ``entity`` (its
  candidates are 1) and asks for a ``relation`` the snapshot states for
  ``stated_for`` other entities of its kind but never for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

__all__ = ["ConstraintCheck", "EmptinessProof", "EMPTINESS_PROOF_TYPE", "UNANSWERABLE_KINDS"]

UNANSWERABLE_KINDS = ("joint_empty", "missing_attribute")


@dataclass(frozen=True)
class ConstraintCheck:
    """One constraint alone: ``node --relation--> condition`` and how many entities satisfy it."""

    node: str
    relation: str
    condition: str
    satisfied_by: int
    witness: int

    def to_dict(self) -> dict[str, Any]:
        """The check as a plain dict."""
        return {"node": self.node, "relation": self.relation, "condition": self.condition,
                "satisfied_by": self.satisfied_by, "witness": self.witness}


@dataclass(frozen=True)
class EmptinessProof:
    """Why the answer set is empty (see the module docstring); ``entity``/``relation``/``stated_for``
    are set for ``missing_attribute`` only."""

    kind: str
    constraints: tuple[ConstraintCheck, ...]
    candidates: tuple[tuple[str, int], ...]
    entity: int | None = None
    relation: str | None = None
    stated_for: int | None = None

    @classmethod
    def from_dict(cls, item: Mapping[str, Any]) -> "EmptinessProof":
        """A proof from its dict (a parquet struct or JSON)."""
        return cls(
            kind=str(item["kind"]),
            constraints=tuple(ConstraintCheck(str(c["node"]), str(c["relation"]), str(c["condition"]),
                                              int(c["satisfied_by"]), int(c["witness"])) for c in item.get("constraints") or ()),
            candidates=tuple((str(c["node"]), int(c["count"])) for c in item.get("candidates") or ()),
            entity=None if item.get("entity") is None else int(item["entity"]),
            relation=item.get("relation"),
            stated_for=None if item.get("stated_for") is None else int(item["stated_for"]),
        )

    def to_dict(self) -> dict[str, Any]:
        """The proof as a plain dict (the parquet struct's fields)."""
        return {
            "kind": self.kind,
            "constraints": [check.to_dict() for check in self.constraints],
            "candidates": [{"node": node, "count": count} for node, count in self.candidates],
            "entity": self.entity,
            "relation": self.relation,
            "stated_for": self.stated_for,
        }


EMPTINESS_PROOF_TYPE = pa.struct([
    ("kind", pa.string()),
    ("constraints", pa.list_(pa.struct([("node", pa.string()), ("relation", pa.string()), ("condition", pa.string()),
                                        ("satisfied_by", pa.int32()), ("witness", pa.int32())]))),
    ("candidates", pa.list_(pa.struct([("node", pa.string()), ("count", pa.int32())]))),
    ("entity", pa.int32()),
    ("relation", pa.string()),
    ("stated_for", pa.int32()),
])
