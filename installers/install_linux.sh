#!/usr/bin/env bash
# Install SPAR Desktop for the current user on Linux (no root needed).
#
#   installers/install_linux.sh [REPO_OR_WHEEL]      install / upgrade (default: this checkout)
#   installers/install_linux.sh --uninstall          remove venv, launchers, menu entry and icon
#
# What it does:
#   1. creates a virtualenv in ~/.local/share/spar-desktop/venv (override with SPAR_HOME)
#   2. installs torch==2.13.0 from the CPU wheel index FIRST (a plain `pip install torch` on Linux
#      pulls several GB of CUDA libraries; set TORCH_INDEX_URL to change the index)
#   3. installs SPAR Desktop itself: `pip install REPO_OR_WHEEL`
#   4. copies resources/ (sample corpus, icon) to ~/.local/share/spar-desktop/resources: a wheel
#      does not carry them; the launchers point the app at them through SPAR_RESOURCES
#   5. writes launchers spar-desktop and spar into ~/.local/bin, the menu entry
#      ~/.local/share/applications/spar-desktop.desktop and the 256x256 icon, so the app shows up
#      in the desktop menu and can be launched by double-click
#
# Environment: PYTHON (interpreter to use, default python3; needs 3.11+), SPAR_HOME,
# TORCH_INDEX_URL, PIP_EXTRA_ARGS (extra arguments for every pip install, e.g. a proxy).
set -euo pipefail

TORCH_VERSION="2.13.0"
TORCH_INDEX_URL="${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
SPAR_HOME="${SPAR_HOME:-$HOME/.local/share/spar-desktop}"
VENV="$SPAR_HOME/venv"
DATA_HOME="${XDG_DATA_HOME:-$HOME/.local/share}"
APPS_DIR="$DATA_HOME/applications"
ICON_DIR="$DATA_HOME/icons/hicolor/256x256/apps"
BIN_DIR="$HOME/.local/bin"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DEFAULT="$(cd "$HERE/.." && pwd)"
PYTHON="${PYTHON:-python3}"
MARKER="written by spar-desktop install_linux.sh"
read -r -a PIP_EXTRA <<< "${PIP_EXTRA_ARGS:-}"

say() { printf '\033[1;34m==>\033[0m %s\n' "$*"; }
die() { printf '\033[1;31merror:\033[0m %s\n' "$*" >&2; exit 1; }
pip_install() { "$VENV/bin/python" -m pip install "$@" ${PIP_EXTRA[@]+"${PIP_EXTRA[@]}"}; }

uninstall() {
    say "Removing $VENV, copied resources, launchers, menu entry and icon"
    rm -rf "$VENV" "$SPAR_HOME/resources"
    rmdir "$SPAR_HOME" 2>/dev/null || true
    rm -f "$APPS_DIR/spar-desktop.desktop" "$ICON_DIR/spar-desktop.png"
    for exe in spar-desktop spar; do
        # only remove launchers this script wrote
        if [ -f "$BIN_DIR/$exe" ] && grep -q "$MARKER" "$BIN_DIR/$exe" 2>/dev/null; then
            rm -f "$BIN_DIR/$exe"
        fi
    done
    if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database -q "$APPS_DIR" || true; fi
    say "Done. Your index and workspaces (the data dir, see 'spar status') were left in place."
}

case "${1:-}" in
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --uninstall) uninstall; exit 0 ;;
esac
SOURCE="${1:-$REPO_DEFAULT}"

# --- checks ------------------------------------------------------------------------------------
command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found; install Python 3.11 or newer (or set PYTHON=/path/to/python3.11)"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || die "Python 3.11 or newer is required (set PYTHON=/path/to/python3.11)"
"$PYTHON" -c "import venv, ensurepip" 2>/dev/null \
    || die "the venv module is missing; on Debian/Ubuntu: sudo apt install python3-venv"
if [ -d "$SOURCE" ] && [ ! -f "$SOURCE/pyproject.toml" ]; then
    die "$SOURCE has no pyproject.toml; pass the SPAR Desktop checkout or a wheel file"
fi
[ -e "$SOURCE" ] || die "$SOURCE does not exist"
if command -v ldconfig >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q 'libxcb-cursor\.so\.0'; then
    echo "warning: libxcb-cursor0 not found. Qt 6 needs it to open windows under X11:" >&2
    echo "         sudo apt install libxcb-cursor0   (Fedora: sudo dnf install xcb-util-cursor)" >&2
fi

# --- virtualenv ---------------------------------------------------------------------------------
say "Creating virtualenv in $VENV"
mkdir -p "$SPAR_HOME"
"$PYTHON" -m venv "$VENV"
pip_install --upgrade pip

say "Installing torch==$TORCH_VERSION (CPU) from $TORCH_INDEX_URL"
pip_install "torch==$TORCH_VERSION" --index-url "$TORCH_INDEX_URL"

say "Installing SPAR Desktop from $SOURCE"
pip_install --upgrade "$SOURCE"
[ -x "$VENV/bin/spar-desktop" ] || die "the spar-desktop launcher was not installed into $VENV/bin"

# --- resources ----------------------------------------------------------------------------------
RES_SRC=""
for candidate in "$SOURCE/resources" "$REPO_DEFAULT/resources"; do
    if [ -d "$candidate/sample_corpus" ] || [ -d "$candidate/icons" ]; then RES_SRC="$candidate"; break; fi
done
if [ -n "$RES_SRC" ]; then
    say "Copying resources (sample corpus, icon) to $SPAR_HOME/resources"
    rm -rf "$SPAR_HOME/resources"
    mkdir -p "$SPAR_HOME/resources"
    for part in sample_corpus icons; do
        if [ -d "$RES_SRC/$part" ]; then cp -r "$RES_SRC/$part" "$SPAR_HOME/resources/"; fi
    done
else
    echo "warning: no resources/ folder found; the sample corpus will not be offered" >&2
fi

# --- launchers, icon, menu entry ----------------------------------------------------------------
say "Writing launchers to $BIN_DIR and the desktop menu entry"
mkdir -p "$APPS_DIR" "$ICON_DIR" "$BIN_DIR"
for exe in spar-desktop spar; do
    [ -x "$VENV/bin/$exe" ] || continue
    rm -f "$BIN_DIR/$exe"   # may be a symlink or an older launcher
    printf '#!/bin/sh\n# %s launcher, %s\nexport SPAR_RESOURCES="${SPAR_RESOURCES:-%s}"\nexec "%s" "$@"\n' \
        "$exe" "$MARKER" "$SPAR_HOME/resources" "$VENV/bin/$exe" > "$BIN_DIR/$exe"
    chmod 755 "$BIN_DIR/$exe"
done

ICON_VALUE="spar-desktop"
if [ -f "$SPAR_HOME/resources/icons/spar-desktop.png" ]; then
    cp "$SPAR_HOME/resources/icons/spar-desktop.png" "$ICON_DIR/spar-desktop.png"
    ICON_VALUE="$ICON_DIR/spar-desktop.png"   # absolute path works even without an icon-cache refresh
else
    echo "warning: icon not found; the menu entry will use a generic icon" >&2
fi

DESKTOP_FILE="$APPS_DIR/spar-desktop.desktop"
# .desktop files need absolute paths; Exec is quoted in case the home directory contains spaces
{
    echo "[Desktop Entry]"
    echo "Type=Application"
    echo "Version=1.5"
    echo "Name=SPAR Desktop"
    echo "GenericName=Document Search and Chat"
    echo "Comment=Index a folder of legacy files, build task workspaces and chat over them with citations"
    echo "Exec=\"$BIN_DIR/spar-desktop\" %F"
    echo "TryExec=$BIN_DIR/spar-desktop"
    echo "Icon=$ICON_VALUE"
    echo "Terminal=false"
    echo "StartupNotify=true"
    echo "MimeType=inode/directory;"
    echo "Categories=Office;Utility;Qt;"
    echo "Keywords=search;documents;index;PDF;DOCX;chat;citations;archive;"
} > "$DESKTOP_FILE"
chmod 755 "$DESKTOP_FILE"   # some file managers only launch executable .desktop files
if command -v desktop-file-validate >/dev/null 2>&1; then desktop-file-validate "$DESKTOP_FILE" || true; fi
if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database -q "$APPS_DIR" || true; fi
if command -v gtk-update-icon-cache >/dev/null 2>&1; then gtk-update-icon-cache -q -t "$DATA_HOME/icons/hicolor" || true; fi

say "Installed."
echo "  Start it from the applications menu (\"SPAR Desktop\"), or run: $BIN_DIR/spar-desktop"
case ":$PATH:" in
    *":$BIN_DIR:"*) echo "  Command line: spar --help" ;;
    *) echo "  Command line: $BIN_DIR/spar --help   (add $BIN_DIR to PATH to type just 'spar')" ;;
esac
echo "  Desktop shortcut: cp \"$DESKTOP_FILE\" \"\$(xdg-user-dir DESKTOP 2>/dev/null || echo ~/Desktop)/\""
echo "  Chat answers need a local Ollama server (https://ollama.com); indexing and search work without it."
