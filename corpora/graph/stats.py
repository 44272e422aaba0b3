"""How much of the infoboxes the knowledge graph holds: mapped share, dropped values, unmapped keys, facts per relation.

The build counts infobox fields as it parses (:class:`InfoboxCounts`, recorded
in the manifest under ``counts.infobox_fields``); :func:`graph_stats` joins
that with the facts table. ``stillweb graph stats SNAPSHOT`` prints it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow.compute as pc

from stillweb.corpora.snapshot.manifest import read_snapshot_table
from stillweb.corpora.snapshot.records import ParsedPage

__all__ = ["TOP_UNMAPPED", "InfoboxCounts", "graph_stats", "format_graph_stats"]

TOP_UNMAPPED = 25


class InfoboxCounts:
    """Mapped and unmapped infobox fields over the pages of a build."""

    def __init__(self) -> None:
        self.mapped = 0
        self.unmapped: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()  # mapped fields whose values did not fit, by reason

    def add(self, page: ParsedPage) -> None:
        """Count one parsed page's fields."""
        self.mapped += page.mapped_fields
        self.unmapped.update(key for key, _ in page.unmapped)
        self.dropped.update(reason for _, reason in page.dropped)

    def summary(self) -> dict:
        """Counts for the manifest (deterministic: ties broken by key)."""
        unmapped = sum(self.unmapped.values())
        top = sorted(self.unmapped.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_UNMAPPED]
        return {"mapped": self.mapped, "unmapped": unmapped, "top_unmapped": [[key, count] for key, count in top],
                "dropped": dict(sorted(self.dropped.items()))}


def graph_stats(snapshot_dir: str | Path) -> dict:
    """Mapped share of infobox fields, the top unmapped keys and facts per relation of a snapshot."""
    directory = Path(snapshot_dir)
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    fields = manifest.get("counts", {}).get("infobox_fields")
    facts = read_snapshot_table(directory / "facts.parquet", columns=["relation", "object"])
    per_relation = facts.group_by("relation").aggregate([("relation", "count")]).to_pylist()
    entity_rows = facts.filter(pc.greater_equal(facts["object"], 0)).group_by("relation").aggregate([("relation", "count")])
    entities = {row["relation"]: row["relation_count"] for row in entity_rows.to_pylist()}
    relations = sorted(((r["relation"], r["relation_count"]) for r in per_relation), key=lambda kv: (-kv[1], kv[0]))
    stats = {
        "facts": facts.num_rows,
        "relations": [{"relation": rel, "facts": n, "entity_facts": entities.get(rel, 0)} for rel, n in relations],
    }
    mismatches = manifest.get("counts", {}).get("object_type_mismatch", {})
    stats["object_type_mismatch"] = mismatches  # entity facts dropped: the object page's class contradicts the range
    if fields is not None:
        dropped = fields.get("dropped", {})  # absent in snapshots built before values were type-checked
        total = fields["mapped"] + fields["unmapped"] + sum(dropped.values())
        stats.update(mapped_fields=fields["mapped"], unmapped_fields=fields["unmapped"],
                     dropped_fields=sum(dropped.values()), dropped=dropped,
                     mapped_share=round(fields["mapped"] / total, 4) if total else 0.0,
                     top_unmapped=fields["top_unmapped"])
    return stats


def format_graph_stats(stats: dict) -> str:
    """The stats as readable lines."""
    lines = [f"facts: {stats['facts']} in {len(stats['relations'])} relations"]
    if "mapped_share" in stats:
        lines.append(f"infobox fields: {stats['mapped_fields']} mapped, {stats['dropped_fields']} dropped, "
                     f"{stats['unmapped_fields']} unmapped (mapped share {100 * stats['mapped_share']:.1f}%)")
        if stats["dropped"]:
            lines.append("dropped values (mapped fields whose values do not fit their relation's type), by reason:")
            lines += [f"  {reason}: {count}" for reason, count in stats["dropped"].items()]
        lines.append("top unmapped keys (template|key: fields):")
        lines += [f"  {key}: {count}" for key, count in stats["top_unmapped"]]
    else:
        lines.append("infobox fields: not recorded (snapshot built before the infobox mapping; rebuild it)")
    if stats.get("object_type_mismatch"):
        lines.append("entity facts dropped, the object's class contradicting the relation's range (relation: facts):")
        lines += [f"  {relation}: {count}" for relation, count in stats["object_type_mismatch"].items()]
    lines.append("facts per relation (relation: facts, of which entity-to-entity):")
    lines += [f"  {row['relation']}: {row['facts']}, {row['entity_facts']}" for row in stats["relations"]]
    return "\n".join(lines)
