"""Composing tasks: WebShaper's operations over the fact graph, attempts, generation of a set."""
