"""Chinese Wikipedia's template redirects to the English-named templates stillweb reads ->
``corpora/zhwiki_templates.json``.

DBpedia's ``mappings/Mapping_zh.xml`` (github.com/dbpedia/extraction-framework) is empty: the
mappings wiki has no Chinese mapping pages. What the framework does ship for zhwiki is
``server/src/main/statistics/mappingstats_zh.txt``: the redirects between zhwiki's templates
(``r|Template:人物信息框|Template:Infobox person``) and each template's use. zhwiki's own infoboxes
are mostly the English ones under their English names (``{{Infobox person}}``, with Chinese field
aliases: ``corpora/infobox_mapping_zh.toml``); this script keeps the Chinese names that redirect
to a template the readers know: an infobox DBpedia's English mappings map
(``corpora/dbpedia_mapping.json``), a date template, or ``{{Disambig}}``. Names are written in
simplified characters (looked up after conversion, :func:`~stillweb.corpora.wikitext.variants.to_simplified`).
CC BY-SA 3.0, as the DBpedia files.

    git show e3dfe8bb8dbc3e2e58d9abc188e00e5f9dd0d928:server/src/main/statistics/mappingstats_zh.txt > mappingstats_zh.txt
    python scripts/convert_zhwiki_template_names.py --statistics mappingstats_zh.txt \\
        --commit e3dfe8bb8dbc3e2e58d9abc188e00e5f9dd0d928 --out corpora/zhwiki_templates.json
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from stillweb.corpora.wikitext.dates import DATE_TEMPLATES
from stillweb.corpora.wikitext.ontology import ontology
from stillweb.corpora.wikitext.titles import is_infobox, template_key
from stillweb.corpora.wikitext.variants import to_simplified

REPOSITORY = "https://github.com/dbpedia/extraction-framework"
_HAN_RE = re.compile(r"[\u3400-\u9fff]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--statistics", required=True, type=Path, help="server/src/main/statistics/mappingstats_zh.txt")
    parser.add_argument("--commit", required=True, help="the extraction-framework commit the file comes from")
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    redirects = read_redirects(args.statistics.read_text(encoding="utf-8"))
    data = {"source": {"repository": REPOSITORY, "commit": args.commit,
                       "file": "server/src/main/statistics/mappingstats_zh.txt",
                       "license": "CC BY-SA 3.0 (https://creativecommons.org/licenses/by-sa/3.0/)",
                       "credit": "DBpedia extraction framework statistics of zhwiki's templates, converted by "
                                 "scripts/convert_zhwiki_template_names.py"},
            "templates": redirects}
    lines = ["{", f'"source": {json.dumps(data["source"], ensure_ascii=False, sort_keys=True)},', '"templates": {']
    lines.append(",\n".join(f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v)}" for k, v in redirects.items()))
    lines += ["}", "}"]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{args.out}: {len(redirects)} Chinese template names")


def read_redirects(statistics: str) -> dict[str, str]:
    """Simplified Chinese template name -> the lowercase English name it redirects to, sorted."""
    found: dict[str, str] = {}
    for line in statistics.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or parts[0] != "r" or not parts[1].startswith("Template:"):
            continue
        source = parts[1][len("Template:"):].replace("_", " ").strip()
        target = parts[2][len("Template:"):].replace("_", " ").strip().lower()
        if not _HAN_RE.search(source) or not _known(target):
            continue
        found.setdefault(to_simplified(source).lower(), target)
    return dict(sorted(found.items()))


def _known(target: str) -> bool:
    if target in DATE_TEMPLATES or target in ("disambig", "disambiguation"):
        return True
    return is_infobox(target) and ontology().template(template_key(target)) is not None


if __name__ == "__main__":
    main()
