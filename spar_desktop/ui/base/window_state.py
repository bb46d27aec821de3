"""Saving and restoring the main window's geometry and dock layout (ui-state.ini in the data dir),
with a check at both ends: a layout wider than the screen is never saved and never restored.

Why: a label that did not elide (a node's full path in the Relations tab) once made the central
widget wider than the screen. The docks were squeezed to "…", and that geometry was saved and
came back at every start, long after the label was gone.
"""

from __future__ import annotations

import logging
import struct
from typing import Optional

from PySide6.QtCore import QByteArray, QRect, QSettings, Qt
from PySide6.QtGui import QGuiApplication

log = logging.getLogger(__name__)
DEFAULT_SIDE_WIDTHS = (300, 340)  # tags dock, details/workspace docks
DEFAULT_BOTTOM_HEIGHT = 170  # issues dock
GEOMETRY_MAGIC = 0x1D9D0CB  # QWidget::saveGeometry's header
FRAME_ALLOWANCE = 32  # px of window frame a saved frame width may exceed the screen by


def available(window) -> QRect:
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QRect()


def saved_width(geometry: QByteArray) -> Optional[int]:
    """The frame width stored in a saveGeometry() blob (magic, version, then the frame QRect as
    left, top, right, bottom; big-endian), or None if it is not one. restoreGeometry() quietly
    shrinks a window to the screen, so this is the only way to know the layout was wider."""
    raw = bytes(geometry.data())
    if len(raw) < 24:
        return None
    magic, _major, _minor, left, _top, right, _bottom = struct.unpack(">IHHiiii", raw[:24])
    return right - left + 1 if magic == GEOMETRY_MAGIC else None


def too_wide(window) -> str:
    """Why the window's layout must not be kept ('' when it fits its screen)."""
    # The window's own width, not its frame's: the frame is unknown before the window is first
    # shown, and a maximized window's frame may equal the screen.
    room = available(window)
    if room.isValid() and window.width() > room.width():
        return f"window {window.width()} px wide on a {room.width()} px screen"
    return ""


def default_docks(window) -> None:
    window.resizeDocks([window.tags_dock, window.details_dock], list(DEFAULT_SIDE_WIDTHS), Qt.Orientation.Horizontal)
    window.resizeDocks([window.issues_dock], [DEFAULT_BOTTOM_HEIGHT], Qt.Orientation.Vertical)
    window.issues_dock.hide()  # opened from the status bar's badge, or by itself for a real error


def restore(window, qs: QSettings) -> bool:
    """Restore the saved layout when it fit its screen; else keep the default dock sizes and fit the
    window to the screen. True when the saved layout was used."""
    geometry, state = qs.value("window/geometry"), qs.value("window/state")
    if not isinstance(geometry, QByteArray):
        return False
    room = available(window)
    width = saved_width(geometry)  # the frame's: allow for a window frame of a few px
    if width is not None and room.isValid() and width > room.width() + FRAME_ALLOWANCE:
        log.info("not restoring the saved window layout: %d px wide on a %d px screen", width, room.width())
        window.resize(min(window.width(), room.width()), min(window.height(), room.height()))
        return False
    window.restoreGeometry(geometry)
    if isinstance(state, QByteArray):
        window.restoreState(state)
    return True


def save(window, qs: QSettings) -> bool:
    """Save geometry and dock layout unless they are broken (the last good ones are kept)."""
    problem = too_wide(window)
    if problem:
        log.info("not saving the window layout: %s", problem)
        return False
    qs.setValue("window/geometry", window.saveGeometry())
    qs.setValue("window/state", window.saveState())
    qs.sync()
    return True
