#!/usr/bin/env bash
# Install bubblewrap (the python tool's sandbox) where we can: as root with apt-get.
# Elsewhere, say how; the python tool then refuses to run code (it never runs it unisolated
# unless isolation="none-unsafe" is chosen explicitly).
exec "$BASH" "$(dirname "${BASH_SOURCE[0]}")/install_debian_package.sh" bubblewrap bwrap "Debian/Ubuntu" \
  "Until then the python tool refuses to run code; its tests check that refusal."
