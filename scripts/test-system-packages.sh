#!/usr/bin/env bash
# The Debian packages the test suite needs beyond Python: Debian's headless Chromium and a
# font for it (tests/bot/slack/test_preview_in_chromium.py drives /usr/bin/chromium through
# Playwright; no browser is downloaded). `make test` runs this before pytest: it installs
# what is missing when it can (root, or passwordless sudo), and otherwise stops with the one
# command to run.
set -euo pipefail

packages=(chromium fonts-liberation)

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for package in "${packages[@]}"; do
    installed "$package" || missing+=("$package")
  done
elif [ ! -x /usr/bin/chromium ]; then
  echo "make test: the tests need headless Chromium at /usr/bin/chromium; install your" \
       "system's chromium package there, then run 'make test' again" >&2
  exit 1
fi
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  echo "make test: the tests need the Debian packages ${missing[*]}; run" \
       "'sudo apt-get install -y --no-install-recommends ${missing[*]}', then 'make test' again" >&2
  exit 1
fi

echo "make test: installing ${missing[*]} (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
