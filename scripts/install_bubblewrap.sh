#!/usr/bin/env bash
# Install bubblewrap (the python tool's sandbox) where we can: as root with apt-get.
# Elsewhere, say how; the python tool then refuses to run code (it never runs it unisolated
# unless isolation="none-unsafe" is chosen explicitly).
set -uo pipefail
if command -v bwrap >/dev/null 2>&1; then
  echo "bubblewrap: $(command -v bwrap)"
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get install -y -qq bubblewrap >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq bubblewrap >/dev/null 2>&1; }) \
    && echo "bubblewrap installed: $(command -v bwrap)" && exit 0
fi
echo "bubblewrap is not installed and could not be installed here: run 'sudo apt-get install bubblewrap' (Debian/Ubuntu)." >&2
echo "Until then the python tool refuses to run code; its tests check that refusal." >&2
exit 0
