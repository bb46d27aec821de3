#!/usr/bin/env bash
# Install SPAR Desktop for the current user from this unpacked bundle. No root, no Python needed.
#
#   ./install.sh            install, or upgrade an earlier install (your data is never touched)
#   ./install.sh --help
#
# What it writes (every path goes into the manifest, which uninstall.sh reads back):
#   ~/.local/lib/spar-desktop/app/                        the app (this bundle's spar-desktop/ folder)
#   ~/.local/lib/spar-desktop/uninstall.sh                the uninstaller
#   ~/.local/lib/spar-desktop/install-manifest.txt        the list of what was written
#   ~/.local/share/applications/spar-desktop.desktop      the menu entry; folders can be dropped on it
#   ~/.local/share/icons/hicolor/NxN/apps/spar-desktop.png  the icon (48 to 512 px)
#   ~/.local/bin/spar-desktop, ~/.local/bin/spar          symlinks into the app (not when a file of
#                                                         another install is already there)
# Your index, workspaces and settings live in the data dir (~/.local/share/spar-desktop unless
# SPAR_DATA_DIR is set); this script neither writes nor deletes anything there.
#
# Environment: SPAR_PREFIX (default ~/.local/lib/spar-desktop), XDG_DATA_HOME, SPAR_BIN_DIR
# (default ~/.local/bin).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
APP_SRC="$HERE/spar-desktop"
DATA_HOME="${XDG_DATA_HOME:-$HOME/.local/share}"
PREFIX="${SPAR_PREFIX:-$HOME/.local/lib/spar-desktop}"
APP_DIR="$PREFIX/app"
BIN_DIR="${SPAR_BIN_DIR:-$HOME/.local/bin}"
APPS_DIR="$DATA_HOME/applications"
ICONS_DIR="$DATA_HOME/icons/hicolor"
MANIFEST="$PREFIX/install-manifest.txt"
DESKTOP_FILE="$APPS_DIR/spar-desktop.desktop"

say() { printf '==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

case "${1:-}" in
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    "") ;;
    *) die "unknown option $1 (try --help)" ;;
esac

[ -x "$APP_SRC/spar-desktop" ] || die "$APP_SRC/spar-desktop not found: run install.sh from the unpacked bundle"
if [ -f "$HERE/ARCH" ] && [ "$(cat "$HERE/ARCH")" != "$(uname -m)" ]; then
    die "this bundle is for $(cat "$HERE/ARCH"), this machine is $(uname -m)"
fi
case "$PREFIX" in
    /|"$HOME"|"$DATA_HOME"|"$DATA_HOME/spar-desktop") die "SPAR_PREFIX=$PREFIX would mix the app with other files" ;;
esac

written=()   # every path this run writes, for the manifest; folders it created end with /
note() { written+=("$1"); }
mkd() {      # mkdir -p that records each folder it creates (uninstall.sh removes them if empty)
    local d="$1" missing=()
    while [ ! -d "$d" ]; do missing=("$d" "${missing[@]}"); d="$(dirname "$d")"; done
    for d in "${missing[@]}"; do mkdir "$d"; note "$d/"; done
}
# folders an earlier install created are still ours
if [ -f "$MANIFEST" ]; then
    while IFS= read -r old; do
        case "$old" in
            */|*/icon-theme.cache|*/mimeinfo.cache) if [ -e "$old" ]; then note "$old"; fi ;;
        esac
    done < "$MANIFEST"
fi

# --- the app: copy beside the old one, then swap (a running old version keeps its open files) ---
say "Installing the app in $APP_DIR"
mkd "$PREFIX"
rm -rf "$PREFIX/app.new" "$PREFIX/app.old"
cp -a "$APP_SRC" "$PREFIX/app.new"
if [ -f "$HERE/THIRD_PARTY_LICENSES" ]; then cp "$HERE/THIRD_PARTY_LICENSES" "$PREFIX/app.new/"; fi
if [ -d "$APP_DIR" ]; then mv "$APP_DIR" "$PREFIX/app.old"; fi
mv "$PREFIX/app.new" "$APP_DIR"
rm -rf "$PREFIX/app.old"
note "$APP_DIR"
cp "$HERE/uninstall.sh" "$PREFIX/uninstall.sh"
chmod 755 "$PREFIX/uninstall.sh"
note "$PREFIX/uninstall.sh"

# --- icons ---------------------------------------------------------------------------------------
ICON_VALUE="spar-desktop"
for png in "$HERE"/icons/hicolor/*/apps/spar-desktop.png; do
    [ -f "$png" ] || continue
    size="$(basename "$(dirname "$(dirname "$png")")")"
    mkd "$ICONS_DIR/$size/apps"
    cp "$png" "$ICONS_DIR/$size/apps/spar-desktop.png"
    note "$ICONS_DIR/$size/apps/spar-desktop.png"
    # an absolute path shows at once, without waiting for an icon-cache refresh
    if [ "$size" = "256x256" ]; then ICON_VALUE="$ICONS_DIR/$size/apps/spar-desktop.png"; fi
done

# --- menu entry: double-click to start; folders dropped on it are opened (%F) ---------------------
say "Writing the menu entry $DESKTOP_FILE"
mkd "$APPS_DIR"
{
    echo "[Desktop Entry]"
    echo "Type=Application"
    echo "Version=1.5"
    echo "Name=SPAR Desktop"
    echo "GenericName=Document Search and Chat"
    echo "Comment=Index a folder of legacy files, build task workspaces and chat over them with citations"
    # Exec is quoted in case the home directory has spaces; %F = the dropped folders/files
    echo "Exec=\"$APP_DIR/spar-desktop\" %F"
    echo "TryExec=$APP_DIR/spar-desktop"
    echo "Icon=$ICON_VALUE"
    echo "Terminal=false"
    echo "StartupNotify=true"
    echo "StartupWMClass=spar-desktop"
    echo "MimeType=inode/directory;"
    echo "Categories=Office;Utility;Qt;"
    echo "Keywords=search;documents;index;PDF;DOCX;chat;citations;archive;"
} > "$DESKTOP_FILE"
chmod 755 "$DESKTOP_FILE"   # some file managers only launch executable .desktop files
note "$DESKTOP_FILE"
if command -v desktop-file-validate >/dev/null 2>&1; then desktop-file-validate "$DESKTOP_FILE" || true; fi

# --- command-line launchers ------------------------------------------------------------------------
mkd "$BIN_DIR"
for exe in spar-desktop spar; do
    link="$BIN_DIR/$exe"
    if [ -e "$link" ] || [ -L "$link" ]; then
        target="$(readlink "$link" 2>/dev/null || true)"
        case "$target" in
            "$APP_DIR"/*) ;;   # ours from an earlier install: replace
            *) echo "note: $link exists and is not from this installer; left as it is" >&2; continue ;;
        esac
    fi
    ln -sfn "$APP_DIR/$exe" "$link"
    note "$link"
done

if command -v gtk-update-icon-cache >/dev/null 2>&1; then
    if [ ! -e "$ICONS_DIR/icon-theme.cache" ]; then note "$ICONS_DIR/icon-theme.cache"; fi   # ours if we create it
    gtk-update-icon-cache -q -t "$ICONS_DIR" 2>/dev/null || true
fi

if command -v update-desktop-database >/dev/null 2>&1; then   # makes folders openable with the app
    if [ ! -e "$APPS_DIR/mimeinfo.cache" ]; then note "$APPS_DIR/mimeinfo.cache"; fi
    update-desktop-database -q "$APPS_DIR" || true
fi

# --- manifest: what an upgrade or uninstall.sh may remove, and nothing else ------------------------
if [ -f "$MANIFEST" ]; then   # an upgrade: drop what the old version wrote and this one did not
    while IFS= read -r old; do
        case "$old" in ""|*/|*/icon-theme.cache|*/mimeinfo.cache) continue ;; esac
        keep=0
        for p in "${written[@]}"; do if [ "$p" = "$old" ]; then keep=1; break; fi; done
        if [ "$keep" = 0 ] && { [ -f "$old" ] || [ -L "$old" ]; }; then rm -f "$old"; fi
    done < "$MANIFEST"
fi
note "$MANIFEST"
printf '%s\n' "${written[@]}" > "$MANIFEST"

if command -v ldconfig >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q 'libxcb-cursor\.so\.0'; then
    echo "warning: libxcb-cursor0 not found. Qt 6 needs it to open windows under X11:" >&2
    echo "         sudo apt install libxcb-cursor0   (Fedora: sudo dnf install xcb-util-cursor)" >&2
fi

say "Installed SPAR Desktop ($(cat "$APP_DIR/VERSION" 2>/dev/null || echo '?'))."
echo "  Start it from the applications menu (\"SPAR Desktop\"), or run: $APP_DIR/spar-desktop"
echo "  Command line: $BIN_DIR/spar --help"
echo "  Uninstall: $PREFIX/uninstall.sh   (your data dir is kept)"
