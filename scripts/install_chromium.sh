#!/usr/bin/env bash
# Install Debian's chromium for the viewer's browser tests (Playwright drives it through
# executable_path; browser downloads from other hosts are not used). As root with apt-get;
# elsewhere, say how. The browser tests fail under STILLWEB_REQUIRE_EXTRAS=1 without it.
set -uo pipefail
if command -v chromium >/dev/null 2>&1; then
  echo "chromium: $(command -v chromium)"
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; }) \
    && echo "chromium installed: $(command -v chromium)" && exit 0
fi
echo "chromium is not installed and could not be installed here: run 'sudo apt-get install chromium' (Debian)." >&2
echo "Until then the viewer's browser tests skip (and fail in CI, where STILLWEB_REQUIRE_EXTRAS=1)." >&2
exit 0
