"""The synthetic world: a seeded fictional encyclopedia, stillweb's embedded default corpus.

>>> from stillweb.corpora.synthetic import generate_world, iter_true_facts, world_pages
>>> world = generate_world(articles=200, seed=0)
>>> pages = list(world_pages(world))     # wikitext RawPages: articles, redirects,
>>> facts = list(iter_true_facts(world)) # disambiguation and list pages; ground truth

Entities (people, cities, countries, companies, universities, awards, books,
films, albums, events) have invented names, consistent relations (about 47 infobox
relations with dates and quantities), deliberate name collisions with qualified
titles and disambiguation pages, redirects, and varied prose. The same seed gives
the same world, byte for byte, on any machine. ``write_xml_dump`` writes any
``RawPage`` stream as a MediaWiki export (``.bz2`` when the path says so).
"""

from stillweb.corpora.synthetic.facts import TrueFact, iter_true_facts
from stillweb.corpora.synthetic.wikitext_pages import world_pages
from stillweb.corpora.synthetic.world import KINDS, MIN_ARTICLES, ListPage, World, generate_world
from stillweb.corpora.synthetic.xml_export import write_xml_dump
from stillweb.corpora.synthetic.wiki_habits import wikipedia_style_pages

__all__ = ["generate_world", "World", "TrueFact", "ListPage", "KINDS", "MIN_ARTICLES", "iter_true_facts", "world_pages",
           "write_xml_dump", "wikipedia_style_pages"]
