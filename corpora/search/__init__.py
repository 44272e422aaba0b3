"""Search: the tantivy index, analyzers, page ranking, snippets, the worker pool, dense vectors and embeddings, retrieval evaluation and baselines."""
