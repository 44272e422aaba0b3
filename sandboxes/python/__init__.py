"""The Python code-execution sandbox: bubblewrap namespaces, rlimits, seccomp and a bootstrap."""
