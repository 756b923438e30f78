#!/bin/sh
# Makes sure `bwrap` (bubblewrap) is on PATH: the computers package never runs a command
# unsandboxed, so without it the shell tool and its tests cannot work at all.
set -eu

if command -v bwrap >/dev/null 2>&1; then
  exit 0
fi

# Only install on our own when that is safe to do unattended: root on Debian/Ubuntu (CI).
if [ "$(id -u)" = "0" ] && [ -f /etc/debian_version ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-bubblewrap: bwrap not found, installing the Debian package 'bubblewrap'" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq bubblewrap >/dev/null
  if command -v bwrap >/dev/null 2>&1; then
    exit 0
  fi
  echo "ensure-bubblewrap: apt-get install finished but bwrap is still not on PATH" >&2
  exit 1
fi

cat >&2 <<'MSG'
ensure-bubblewrap: bubblewrap (`bwrap`) is required by @opencomputer/computers but is not installed.
Install it, then retry:
  Debian/Ubuntu:  sudo apt-get install bubblewrap
  Fedora/RHEL:    sudo dnf install bubblewrap
  Arch:           sudo pacman -S bubblewrap
  Alpine:         sudo apk add bubblewrap
MSG
exit 1
