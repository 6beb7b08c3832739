#!/bin/sh
# Make sure the Mosquitto broker is there for the league's tests (Debian's package).
# Installs it when run as root on a Debian-like system; otherwise says what to install and
# lets the league's broker tests skip with that message. The tests start their own broker on
# a free port: the system service is not needed (and not started).
if command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ]; then
    exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing mosquitto for the league's tests..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq mosquitto >/dev/null && exit 0
    echo "warning: could not install mosquitto; the league's broker tests will be skipped." >&2
    exit 0
fi
echo "note: install Debian's 'mosquitto' package to run the league's broker tests." >&2
exit 0
