"""Page hops on real pages (issue 49 item 4): which answers the data lets a question reach through two pages.

A real question that one infobox answers ("the GDP of the country whose capital is Luanda") is a look-up in
disguise. Where the snapshot's pages link each other, a question must read two pages or more; where they do
not, a one-page question is all the data allows, and it is kept and counted as such (the card's ``page hops``
line). The rule is decided per attempt, by its answer entity (the root of the query, from which every pivot
and spine of the attempt hangs): :func:`two_page_roots` lists the entities with a **keyed chain** through
another page, the chains composition builds (:mod:`~stillweb.corpora.tasks.compose.operations`):

- a spine of edges from the answer, each pinning the entity above it (:func:`~stillweb.corpora.tasks.prove.keys.pins`:
  "the country whose capital is V", "the city where V was born"), each stated on a page
  (:meth:`~stillweb.corpora.tasks.graph.FactGraph.stated_in`), its ends of classes the relation allows;
- ending in a key on the deepest entity: an exact constant pinning it (a name that does not name the entity
  nor many things, :func:`~stillweb.corpora.tasks.prove.real_world.constant_refusal`), or a reviewed date
  pair ("born on March 4, 1902 in Lunor");
- ``max_hops`` hops at most (the key counts as one, as in a task's ``hops``): at least one edge for an
  entity answer; a literal answer's fact counts one hop and its page counts among the pages.

The chain reads the pages stating its facts; the answer qualifies when some chain reads two or more. As
:meth:`~stillweb.corpora.tasks.graph.FactGraph.key_depth` does, a chain never steps straight back to the
entity it came from, but longer cycles are not excluded: an upper bound that is exact on trees. The walk
is memoized by (entity, parent, edges left): linear in the edges times ``max_hops``, in id order.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from stillweb.corpora.tasks.graph import FactGraph
from stillweb.corpora.tasks.prove.keys import functional, key_pairs, names, pins
from stillweb.corpora.tasks.prove.real_world import constant_refusal
from stillweb.corpora.tasks.types import entity_classes, fits, role_classes

__all__ = ["two_page_roots"]

_MULTI = (True, frozenset())  # a chain reading two pages or more
_CACHE: WeakKeyDictionary = WeakKeyDictionary()  # graph -> {max_hops: roots}


def two_page_roots(graph: FactGraph, max_hops: int) -> frozenset[int]:
    """The entities (pages) with a keyed chain of at most ``max_hops`` hops reading two pages or more, as
    an entity answer or as the holder of a literal answer (see the module docstring); computed once per graph."""
    found = _CACHE.setdefault(graph, {})
    if max_hops not in found:
        walk = _Walk(graph)
        found[max_hops] = frozenset(e for e in graph.entities if walk.reaches_two_pages(e, max_hops))
    return found[max_hops]


class _Walk:
    """Summaries of the keyed chains below an entity: (two pages or more?, the single pages one chain reads)."""

    def __init__(self, graph: FactGraph) -> None:
        self.graph = graph
        self.memo: dict[tuple[int, int, int], tuple[bool, frozenset[int]]] = {}

    def reaches_two_pages(self, root: int, max_hops: int) -> bool:
        """A chain from ``root`` as an entity answer (an edge first), or as a literal answer's holder."""
        if max_hops >= 2 and self._through_edges(root, -1, max_hops - 2)[0]:
            return True
        answers = {self.graph.stated_in(i) for i in self._answer_facts(root)} - {None}
        if not answers or max_hops < 2:
            return False
        multi, singles = self._below(root, -1, max_hops - 2)
        return multi or any(page != doc for page in singles for doc in answers)

    def _below(self, entity: int, parent: int, edges: int) -> tuple[bool, frozenset[int]]:
        """Chains keying ``entity`` with at most ``edges`` edges below it, never back to ``parent``."""
        key = (entity, parent, edges)
        if key not in self.memo:
            self.memo[key] = _merge(self._keys(entity, parent), self._through_edges(entity, parent, edges - 1)
                                    if edges > 0 else (False, frozenset()))
        return self.memo[key]

    def _through_edges(self, entity: int, parent: int, edges: int) -> tuple[bool, frozenset[int]]:
        """Chains whose first edge leaves ``entity`` (pinning it), with at most ``edges`` edges after it."""
        graph, summary = self.graph, (False, frozenset())
        for index in graph.edges_of(entity):
            fact = graph.facts[index]
            other, page = _other(fact, entity), graph.stated_in(index)
            if other in (parent, entity) or page is None or not pins(fact, entity) or not self._typed(entity, fact):
                continue
            multi, singles = self._below(other, entity, edges)
            summary = _merge(summary, _MULTI if multi or singles - {page} else (False, singles))
            if summary[0]:
                break
        return summary

    def _keys(self, entity: int, parent: int) -> tuple[bool, frozenset[int]]:
        """The pages of the constants that pin ``entity`` directly (one fact, or a reviewed date pair)."""
        graph, pages = self.graph, set()
        for index in graph.literals_of(entity) + graph.edges_of(entity):
            fact = graph.facts[index]
            if pins(fact, entity) and self._constant(fact, entity, parent) and (page := graph.stated_in(index)) is not None:
                pages.add(page)
        for date_relation, entity_relation in key_pairs():
            dates = {graph.stated_in(i) for i in graph.literals_of(entity) if graph.facts[i].relation == date_relation
                     and len(graph.facts[i].date or "") == 10} - {None}
            partners = {graph.stated_in(i) for i in graph.edges_of(entity) if graph.facts[i].relation == entity_relation
                        and graph.facts[i].subject == entity and self._constant(graph.facts[i], entity, parent)} - {None}
            if any(a != b for a in dates for b in partners):
                return _MULTI
            pages |= dates & partners
        return False, frozenset(sorted(pages)[:2])  # two pages stand for any: one differs from any edge's page

    def _constant(self, fact, entity: int, parent: int) -> bool:
        """A constant composition may name on ``entity`` (operations._constant_ok, without the query)."""
        if not fact.is_edge:
            return bool(fact.value.strip())
        other = _other(fact, entity)
        return other not in (parent, entity) and self._typed(entity, fact) \
            and not names(self.graph.label_of(other), self.graph.label_of(entity)) \
            and constant_refusal(self.graph, fact.relation, other, other == fact.subject) is None

    def _typed(self, entity: int, fact) -> bool:
        """Both ends of the edge of classes its relation allows; a backward verb only where it holds."""
        graph, as_subject = self.graph, fact.subject == entity
        if not as_subject and fact.index in graph.forward_only:
            return False
        return all(fits(entity_classes(graph, end), role_classes(fact.relation, is_subject)) != frozenset()
                   for end, is_subject in ((entity, as_subject), (_other(fact, entity), not as_subject)))

    def _answer_facts(self, holder: int) -> list[int]:
        """Facts that can hold a keyed literal answer (operations._attribute_ok, without the query)."""
        graph = self.graph
        return [i for i in graph.literals_of(holder) + graph.edges_of(holder)
                if (f := graph.facts[i]).subject == holder and (not f.is_edge or not graph.is_page(f.object))
                and functional(f.relation)]


def _merge(one: tuple[bool, frozenset[int]], two: tuple[bool, frozenset[int]]) -> tuple[bool, frozenset[int]]:
    if one[0] or two[0]:
        return _MULTI
    pages = one[1] | two[1]
    return (False, frozenset(sorted(pages)[:2]))


def _other(fact, entity: int) -> int:
    return fact.object if fact.subject == entity else fact.subject
