"""``stillweb/BFCL-v0``: BFCL v4 multi-turn tasks (needs the ``bfcl`` extra and ``scripts/install_bfcl.sh``)."""
