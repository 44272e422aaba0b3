#!/usr/bin/env bash
# Install Debian's chromium for the viewer's browser tests (Playwright drives it through
# executable_path; browser downloads from other hosts are not used). As root with apt-get;
# elsewhere, say how. The browser tests fail under STILLWEB_REQUIRE_EXTRAS=1 without it.
exec "$BASH" "$(dirname "${BASH_SOURCE[0]}")/install_debian_package.sh" chromium chromium "Debian" \
  "Until then the viewer's browser tests skip (and fail in CI, where STILLWEB_REQUIRE_EXTRAS=1)."
