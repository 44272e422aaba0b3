#!/usr/bin/env bash
# Install Debian's chromium for the viewer's browser tests (Playwright drives it through
# executable_path; browser downloads from other hosts are not used), and a font with Han, Kana and
# Hangul glyphs (fonts-wqy-microhei) so that a Chinese snapshot's pages show their text, not boxes.
# As root with apt-get; elsewhere, say how. The browser tests fail under STILLWEB_REQUIRE_EXTRAS=1 without it.
here="$(dirname "${BASH_SOURCE[0]}")"
"$BASH" "$here/install_debian_package.sh" chromium chromium "Debian" \
  "Until then the viewer's browser tests skip (and fail in CI, where STILLWEB_REQUIRE_EXTRAS=1)."
if command -v fc-list >/dev/null 2>&1 && [ -z "$(fc-list :lang=zh 2>/dev/null)" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get install -y -qq fonts-wqy-microhei >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq fonts-wqy-microhei >/dev/null 2>&1; }) \
      && echo "fonts-wqy-microhei installed" && exit 0
  fi
  echo "no font with Chinese glyphs: run 'sudo apt-get install fonts-wqy-microhei' (Debian); until then the" \
       "Chinese viewer screenshot shows boxes and its test fails" >&2
fi
exit 0
