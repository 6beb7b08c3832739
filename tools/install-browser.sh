#!/bin/sh
# Make sure headless Chromium and ChromeDriver are there for the browser tests.
# Installs Debian's packages when run as root on a Debian-like system; otherwise says
# what to install and lets the browser tests skip with that message.
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing chromium and chromium-driver for the browser tests..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null && exit 0
    echo "warning: could not install chromium; the browser tests will be skipped." >&2
    exit 0
fi
echo "note: install Debian's 'chromium' and 'chromium-driver' packages to run the browser tests." >&2
exit 0
