"""Write ``corpora/synthetic/name_lists.py``: the given and family names the synthetic world draws from.

The lists are copied (not imported at run time) from Faker's person providers, so a world's names, and
so its fingerprint, never change with the installed Faker. Faker is MIT-licensed (Copyright (c) 2012
Daniele Faraglia); its English lists come from public-domain US Census and Social Security name data.

Example (Faker in a scratch folder, never a dependency of stillweb)::

    pip download faker==40.63.0 --no-deps -d /tmp/faker && unzip -q /tmp/faker/faker-*.whl -d /tmp/faker/x
    python scripts/make_name_lists.py --faker /tmp/faker/x
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path

LOCALES = ("en_US", "en_GB", "en_IE", "de_DE", "fr_FR", "it_IT", "es_ES", "nl_NL", "sv_SE", "fi_FI")
GIVEN_PER_LOCALE, FAMILY_PER_LOCALE = 300, 400
_NAME = re.compile(r"^[^\W\d_][^\W\d_' -]*(?:[ '-][^\W\d_]+)*$")  # letters, with inner spaces, hyphens, apostrophes
OUT = Path(__file__).resolve().parent.parent / "corpora" / "synthetic" / "name_lists.py"


def _names(provider, *attributes: str, limit: int) -> list[str]:
    """The valid names of the first of ``attributes`` the provider has (female and male lists interleaved),
    thinned evenly to ``limit`` (lists are often alphabetical: the first ``limit`` would all start with A)."""
    lists = [list(getattr(provider, attribute)) for attribute in attributes if getattr(provider, attribute, None)]
    interleaved = [name for group in zip(*lists) for name in group] if len(lists) > 1 else lists[0]
    seen = list(dict.fromkeys(name for name in interleaved if _NAME.match(name) and len(name) <= 20 and name[0].isupper() and not name.isupper()))
    return [seen[i * len(seen) // limit] for i in range(limit)] if len(seen) > limit else seen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--faker", required=True, help="a folder holding the faker package (an unpacked wheel)")
    args = parser.parse_args(argv)
    sys.path.insert(0, args.faker)
    import faker

    lines = [
        f'"""Given and family names by locale, copied from Faker {faker.VERSION}\'s person providers by',
        "``scripts/make_name_lists.py`` (do not edit by hand; regenerate with that script).",
        "",
        "Faker is MIT-licensed, Copyright (c) 2012 Daniele Faraglia; its English lists come from public-domain",
        "US Census and Social Security name data. Copied, not imported, so a synthetic world's names never",
        'change with an installed Faker. Order is part of the world\'s definition: regenerate only with a new world."""',
        "",
        "# fmt: off",
        f"LOCALES = {LOCALES!r}",
        "GIVEN_NAMES = {",
    ]
    given, family = {}, {}
    for locale in LOCALES:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        sexes = ("first_names_female", "first_names_male") if getattr(provider, "first_names_female", None) else ("first_names",)
        given[locale] = _names(provider, *sexes, limit=GIVEN_PER_LOCALE)
        family[locale] = _names(provider, "last_names", limit=FAMILY_PER_LOCALE)
    for table, name in ((given, "GIVEN_NAMES"), (family, "FAMILY_NAMES")):
        if name == "FAMILY_NAMES":
            lines.append("FAMILY_NAMES = {")
        for locale in LOCALES:
            lines.append(f"    {locale!r}: {tuple(table[locale])!r},")
        lines.append("}")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {sum(map(len, given.values()))} given and {sum(map(len, family.values()))} family names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
