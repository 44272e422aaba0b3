"""The tools an agent can call: their types, validation, registry and implementations."""
