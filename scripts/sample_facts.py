"""Print a fixed sample of a dump's typed facts next to the infobox lines they were read from.

With --append the figures (facts per page, mapped share; the baseline of main 3a1d039 beside them)
and the reader's verdict (--read "97/100 ...") go to BENCHMARKS.md under "Typed facts".

For the hand check of issue 35 item 1 (">= 97% of 100 sampled facts read their page right"): the
sample is chosen by a keyed hash of --seed (corpora/graph/fact_sample.py), so a second reader sees the
same facts. The header prints the figures (facts per page, mapped share, dropped by reason).

    python scripts/sample_facts.py ../shared/data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2 --n 100 --seed 35
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import append_section  # noqa: E402

from stillweb.corpora.graph.fact_sample import dump_facts, sample_facts  # noqa: E402

# The shared sample read by main 3a1d039 (before DBpedia's mappings, issue 35): `stillweb graph stats`.
BASELINE = {"facts": 438, "pages": 106, "mapped": 249, "unmapped": 813, "hand_check": "93.4% of all 438 facts right"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="example:\n  python scripts/"
                                     "sample_facts.py dump.xml.bz2 --n 100 --seed 35",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dump", help="a MediaWiki pages-articles dump (.xml or .xml.bz2)")
    parser.add_argument("--n", type=int, default=100, help="facts to sample (default 100)")
    parser.add_argument("--seed", type=int, default=35, help="sample seed (default 35)")
    parser.add_argument("--append", action="store_true", help="append the figures to BENCHMARKS.md")
    parser.add_argument("--read", default="", help="the hand check of the printed sample, for --append")
    args = parser.parse_args()
    figures = dump_facts(args.dump)
    print(f"pages {figures['pages']}, facts {len(figures['facts'])} ({figures['facts_per_page']} per page), "
          f"infobox fields: {figures['mapped_fields']} mapped, {figures['dropped_fields']} dropped, "
          f"{figures['unmapped_fields']} unmapped, mapped share {100 * figures['mapped_share']:.1f}%")
    print("dropped by reason: " + ", ".join(f"{k} {v}" for k, v in figures["dropped"].items()))
    for number, fact in enumerate(sample_facts(figures["facts"], args.n, args.seed), 1):
        print(f"\n{number:3d}. {fact['page']} | {fact['relation']} ({fact['domain']} -> {fact['range']}) = "
              f"{fact['value']} [{fact['value_type']}]")
        print(f"     {fact['template']}: {fact['line']}")
    if args.append:
        append_section("Typed facts: the shared Wikipedia sample (issue 35)", _section(figures, args.read))


def _section(figures: dict, read: str) -> str:
    before = BASELINE["mapped"] / (BASELINE["mapped"] + BASELINE["unmapped"])
    total = figures["mapped_fields"] + figures["dropped_fields"] + figures["unmapped_fields"]
    rows = [
        "| | main 3a1d039 (before) | now |",
        "|---|---|---|",
        f"| facts | {BASELINE['facts']} | {len(figures['facts'])} |",
        f"| facts per page | {BASELINE['facts'] / BASELINE['pages']:.2f} | {figures['facts_per_page']:.2f} |",
        f"| infobox fields mapped / dropped / unmapped | {BASELINE['mapped']} / - / {BASELINE['unmapped']} | "
        f"{figures['mapped_fields']} / {figures['dropped_fields']} / {figures['unmapped_fields']} |",
        f"| mapped share | {100 * before:.1f}% | {100 * figures['mapped_share']:.1f}% (of {total}; dropped counted) |",
        f"| hand check | {BASELINE['hand_check']} | {read or 'not recorded'} |",
    ]
    dropped = ", ".join(f"{reason} {count}" for reason, count in figures["dropped"].items())
    return "\n".join(rows) + f"\n\nDropped values by reason: {dropped}.\n"


if __name__ == "__main__":
    main()
