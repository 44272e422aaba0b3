"""The synthetic world: a seeded fictional encyclopedia, stillweb's embedded default corpus.

>>> from stillweb.corpora.synthetic import generate_world
>>> world = generate_world(articles=200, seed=0)
>>> pages = list(world.pages())          # wikitext RawPages: articles, redirects,
>>> facts = world.true_facts()           # disambiguation and list pages; ground truth

Entities (people, cities, countries, companies, universities, awards, books,
films, albums, events) have invented names, consistent relations (about 47 infobox
relations with dates and quantities), deliberate name collisions with qualified
titles and disambiguation pages, redirects, and varied prose. The same seed gives
the same world, byte for byte, on any machine. ``write_xml_dump`` writes any
``RawPage`` stream as a MediaWiki export (``.bz2`` when the path says so).
"""

from stillweb.corpora.synthetic.world import KINDS, MIN_ARTICLES, ListPage, TrueFact, World, generate_world
from stillweb.corpora.synthetic.xml_export import wikipedia_style_pages, write_xml_dump

__all__ = ["generate_world", "World", "TrueFact", "ListPage", "KINDS", "MIN_ARTICLES", "write_xml_dump", "wikipedia_style_pages"]
