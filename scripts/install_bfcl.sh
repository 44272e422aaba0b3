#!/usr/bin/env bash
# Install BFCL's evaluation package (bfcl-eval, Apache-2.0) for stillweb/BFCL-v0, without its dependencies:
# bfcl-eval pins numpy 1.26.4, model-provider SDKs, sentence-transformers and faiss, none of which the
# multi-turn data, APIs and checker import. What they do import (mpmath) comes with the `bfcl` extra:
#   python3 -m pip install -e ".[bfcl]" && bash scripts/install_bfcl.sh
# The pin is BFCL_EVAL_VERSION in envs/bfcl/data.py (the version BFCL-v0's card and tests were made with).
set -euo pipefail
exec python3 -m pip install --no-deps "bfcl-eval==2026.3.23"
