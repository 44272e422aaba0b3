"""The knowledge graph: writing links and facts, the fact box, statistics of the infobox mapping."""
