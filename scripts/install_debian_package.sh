#!/usr/bin/env bash
# install_debian_package.sh PACKAGE COMMAND SYSTEMS UNTIL: make COMMAND available by installing the
# Debian package PACKAGE where we can (as root with apt-get; `apt-get update` first only if the
# install fails). Elsewhere say how ("run 'sudo apt-get install PACKAGE' (SYSTEMS)."), then UNTIL,
# the consequence of going without it. Exits 0 either way. Used by install_bubblewrap.sh and
# install_chromium.sh.
set -uo pipefail
package=$1 command_name=$2 systems=$3 until=$4
if command -v "$command_name" >/dev/null 2>&1; then
  echo "$package: $(command -v "$command_name")"
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get install -y -qq "$package" >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "$package" >/dev/null 2>&1; }) \
    && echo "$package installed: $(command -v "$command_name")" && exit 0
fi
echo "$package is not installed and could not be installed here: run 'sudo apt-get install $package' ($systems)." >&2
echo "$until" >&2
exit 0
