"""Print a fixed sample of a dump's typed facts next to the infobox lines they were read from.

For the hand check of issue 35 item 1 (">= 97% of 100 sampled facts read their page right"): the
sample is chosen by a keyed hash of --seed (corpora/fact_sample.py), so a second reader sees the
same facts. The header prints the figures (facts per page, mapped share, dropped by reason).

    python scripts/sample_facts.py ../shared/data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2 --n 100 --seed 35
"""

from __future__ import annotations

import argparse

from stillweb.corpora.fact_sample import dump_facts, sample_facts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="example:\n  python scripts/"
                                     "sample_facts.py dump.xml.bz2 --n 100 --seed 35",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dump", help="a MediaWiki pages-articles dump (.xml or .xml.bz2)")
    parser.add_argument("--n", type=int, default=100, help="facts to sample (default 100)")
    parser.add_argument("--seed", type=int, default=35, help="sample seed (default 35)")
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


if __name__ == "__main__":
    main()
