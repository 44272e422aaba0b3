#!/usr/bin/env bash
# Install a Java 17 runtime (Pyserini 0.22.1, the `pyserini` extra, runs Lucene through pyjnius on Java 17; Pyserini
# 1.x needs Java 21, which Debian 12 does not package) where we can: as root with apt-get. Elsewhere, say how.
exec "$BASH" "$(dirname "${BASH_SOURCE[0]}")/install_debian_package.sh" openjdk-17-jdk-headless java "Debian 12/Ubuntu 22.04+" \
  "Until then 'stillweb eval retrieval --baseline pyserini' and scripts/bench_retrieval.py's Pyserini column fail, and their tests skip."
