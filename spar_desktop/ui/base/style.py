"""Look and feel: Fusion with a calm palette, one accent colour and a readable font size, light or
dark as the system is (and switching when the system does).

Kept deliberately small: a stylesheet only for things the palette cannot express (spacing,
headers, the empty state), so native dialogs and widgets still look like themselves. Every colour
comes from one of two named palettes, so both are checked for contrast in one place
(tests/ui/test_theme.py: body text at least 4.5:1, WCAG 2.1 AA).
"""

from __future__ import annotations

from typing import Mapping

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

ACCENT = "#2f6fde"

LIGHT: Mapping[str, str] = {
    "window": "#f5f6f8", "base": "#ffffff", "alt_base": "#f7f8fa", "text": "#1f2328", "muted": "#5f6674",
    "section": "#3b4150", "tab": "#545b68", "border": "#dcdfe4", "separator": "#e3e5e9", "header": "#f1f2f5",
    "title_bar": "#eceef2", "hover": "#e4e7ec", "input_border": "#cfd3da", "button": "#ffffff",
    "button_border": "#c9ced6", "button_hover": "#f0f3f8", "disabled": "#8a909b", "accent": ACCENT,
    "accent_hover": "#275fc0", "accent_disabled": "#a9c1ec", "accent_text": "#ffffff", "link": "#2258b8",
    "error": "#b3261e", "warn_bg": "#fff4d6", "warn_border": "#f0d48a", "warn_text": "#7a4f00",
    "info_bg": "#eef3fc", "info_border": "#c9d7f2", "chip_text": "#27466e", "chip_hover": "#dbe7fb",
    "user_bubble": "#e8f0fe", "user_border": "#cddcf8", "pdf_bg": "#e6e8ec", "selected_row": "#dbe7fb",
    "mark": "#fff3b0", "placeholder": "#6e7482", "cluster_bg": "#e4f1dc", "cluster_text": "#2e6b1f",
    "invalid_bg": "#fdf0ef", "invalid_border": "#e0a39e", "graph_bg": "#ffffff",
}
DARK: Mapping[str, str] = {
    "window": "#1f2127", "base": "#26292f", "alt_base": "#2b2e35", "text": "#e6e8ec", "muted": "#aab0bb",
    "section": "#cdd2da", "tab": "#aab0bb", "border": "#3a3e47", "separator": "#353941", "header": "#2b2e35",
    "title_bar": "#2b2e35", "hover": "#363a44", "input_border": "#4b505b", "button": "#2d3139",
    "button_border": "#4b505b", "button_hover": "#373b45", "disabled": "#8a909b", "accent": ACCENT,
    "accent_hover": "#3d7ae6", "accent_disabled": "#34476b", "accent_text": "#ffffff", "link": "#8cb4f8",
    "error": "#ff8a80", "warn_bg": "#3d3315", "warn_border": "#6b5a1e", "warn_text": "#f3d98b",
    "info_bg": "#223149", "info_border": "#35507d", "chip_text": "#c9dafc", "chip_hover": "#2c4266",
    "user_bubble": "#223149", "user_border": "#35507d", "pdf_bg": "#2b2e35", "selected_row": "#2c4266",
    "mark": "#6b5800", "placeholder": "#9aa0ab", "cluster_bg": "#24391c", "cluster_text": "#b6e0a2",
    "invalid_bg": "#3d2322", "invalid_border": "#7a3b36", "graph_bg": "#26292f",
}
# Text and the backgrounds it is read on: what the contrast test checks in both palettes.
TEXT_PAIRS = (
    ("text", "window"), ("text", "base"), ("text", "alt_base"), ("text", "button"), ("muted", "window"),
    ("muted", "base"), ("section", "window"), ("section", "header"), ("tab", "window"), ("error", "base"),
    ("error", "window"), ("warn_text", "warn_bg"), ("text", "warn_bg"), ("text", "info_bg"),
    ("chip_text", "info_bg"), ("text", "user_bubble"), ("text", "selected_row"), ("text", "mark"),
    ("accent_text", "accent"), ("link", "base"), ("cluster_text", "cluster_bg"), ("error", "invalid_bg"),
    ("placeholder", "base"), ("muted", "selected_row"),
)

_current: dict[str, str] = dict(LIGHT)


def colours() -> Mapping[str, str]:
    """The palette in use (light until apply_style chose one): widgets that draw their own text
    (search hits, chat notes) read their colours here, so both themes stay readable."""
    return _current


def stylesheet(c: Mapping[str, str]) -> str:
    return f"""
QMainWindow::separator {{ background: {c['separator']}; width: 1px; height: 1px; }}
QDockWidget {{ font-weight: 600; }}
QDockWidget::title {{ padding: 6px 8px; background: {c['title_bar']}; border-bottom: 1px solid {c['border']}; }}
QToolBar {{ spacing: 4px; padding: 3px 6px; border: none; border-bottom: 1px solid {c['border']}; background: {c['window']}; }}
QToolButton {{ padding: 4px 6px; border-radius: 4px; }}
QToolButton:hover {{ background: {c['hover']}; }}
QToolButton#issuesBadge {{ padding: 1px 6px; color: {c['muted']}; }}
QToolButton#issuesBadge[tone="warn"] {{ color: {c['warn_text']}; background: {c['warn_bg']}; border: 1px solid {c['warn_border']}; }}
QHeaderView::section {{ background: {c['header']}; border: none; border-right: 1px solid {c['separator']};
    border-bottom: 1px solid {c['border']}; padding: 4px 6px; font-weight: 600; color: {c['section']}; }}
QTableView, QTreeView, QTreeWidget {{ border: none; selection-background-color: {c['accent']}; }}
QTableView::item, QTreeView::item {{ padding: 0px 4px; }}
QLineEdit {{ padding: 4px 6px; border: 1px solid {c['input_border']}; border-radius: 4px; background: {c['base']}; }}
QLineEdit:focus {{ border: 1px solid {c['accent']}; }}
QPushButton {{ padding: 5px 12px; border: 1px solid {c['button_border']}; border-radius: 5px; background: {c['button']}; }}
QPushButton:hover {{ background: {c['button_hover']}; }}
QPushButton:disabled {{ color: {c['disabled']}; }}
QPushButton#primaryButton {{ background: {c['accent']}; color: {c['accent_text']}; border: 1px solid {c['accent']}; font-weight: 600; }}
QPushButton#primaryButton:hover {{ background: {c['accent_hover']}; }}
QPushButton#primaryButton:disabled {{ background: {c['accent_disabled']}; border: 1px solid {c['accent_disabled']}; color: {c['info_bg']}; }}
QPushButton[flat="true"] {{ border: none; color: {c['link']}; background: transparent; }}
QGroupBox {{ font-weight: 600; border: 1px solid {c['border']}; border-radius: 6px; margin-top: 12px; padding: 8px; }}
QGroupBox::title {{ subcontrol-origin: margin; left: 10px; padding: 0 4px; }}
QTabWidget::pane {{ border: none; border-top: 1px solid {c['border']}; }}
QTabBar::tab {{ padding: 6px 16px; border: none; background: transparent; color: {c['tab']}; }}
QTabBar::tab:selected {{ color: {c['text']}; border-bottom: 2px solid {c['accent']}; font-weight: 600; }}
QStatusBar {{ border-top: 1px solid {c['border']}; background: {c['window']}; }}
QProgressBar {{ border: 1px solid {c['input_border']}; border-radius: 4px; background: {c['base']}; }}
QProgressBar::chunk {{ background: {c['accent']}; border-radius: 3px; }}
QLabel#emptyTitle {{ font-size: 17pt; font-weight: 600; color: {c['text']}; }}
QLabel#emptyText, QLabel#placeholder, QLabel#muted {{ color: {c['muted']}; }}
QLabel#placeholder {{ font-size: 11pt; padding: 24px; }}
QLabel#detailsTitle {{ font-size: 13pt; font-weight: 600; }}
QLabel#sectionTitle {{ font-weight: 600; color: {c['section']}; }}
QLabel#countLabel {{ font-weight: 600; }}
QLabel#filterLabel {{ color: {c['tab']}; }}
QLabel#errorText {{ color: {c['error']}; }}
QLabel#viewerTitle {{ font-weight: 600; }}
QLabel#workspaceTitle {{ font-size: 12pt; font-weight: 600; }}
QFrame#separator {{ color: {c['border']}; }}
QScrollArea#pdfScroll, QLabel#pdfPage {{ background: {c['pdf_bg']}; }}
QPlainTextEdit#textView {{ border: none; padding: 12px; background: {c['base']}; }}
QWidget#dropOverlay {{ background: transparent; }}
QTreeWidget#workspaceList, QListWidget#searchResults, QListWidget#threadList, QTreeWidget#tagChoices {{
    border: 1px solid {c['border']}; border-radius: 4px; background: {c['base']}; }}
QScrollArea#messageList, QWidget#messageContainer {{ border: none; background: {c['window']}; }}
QFrame#answerBubble {{ background: {c['base']}; border: 1px solid {c['border']}; border-radius: 8px; }}
QFrame#userBubble {{ background: {c['user_bubble']}; border: 1px solid {c['user_border']}; border-radius: 8px; }}
QLabel#messageBody {{ background: transparent; border: none; }}
QPushButton#citationChip {{ padding: 2px 9px; border: 1px solid {c['info_border']}; border-radius: 10px;
    background: {c['info_bg']}; color: {c['chip_text']}; }}
QPushButton#citationChip:hover {{ background: {c['chip_hover']}; }}
QPushButton#invalidChip {{ padding: 2px 9px; border: 1px dashed {c['invalid_border']}; border-radius: 10px;
    background: {c['invalid_bg']}; color: {c['error']}; }}
QFrame#chatBanner {{ background: {c['warn_bg']}; border-bottom: 1px solid {c['warn_border']}; }}
QFrame#questionBar {{ border-top: 1px solid {c['border']}; background: {c['window']}; }}
QPlainTextEdit#questionBox {{ border: 1px solid {c['input_border']}; border-radius: 6px; background: {c['base']}; padding: 2px; }}
QWidget#threadColumn {{ background: {c['header']}; }}
QFrame#freshnessBar {{ background: {c['warn_bg']}; border: 1px solid {c['warn_border']}; border-radius: 4px; }}
QFrame#freshnessBar[tone="info"] {{ background: {c['info_bg']}; border: 1px solid {c['info_border']}; }}
QLabel#freshnessText {{ color: {c['text']}; background: transparent; border: none; }}
QFrame#workspaceHeader {{ border-bottom: 1px solid {c['border']}; padding-bottom: 4px; }}
"""


def palette(c: Mapping[str, str]) -> QPalette:
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: "window", QPalette.ColorRole.WindowText: "text", QPalette.ColorRole.Base: "base",
        QPalette.ColorRole.AlternateBase: "alt_base", QPalette.ColorRole.Text: "text",
        QPalette.ColorRole.Button: "window", QPalette.ColorRole.ButtonText: "text",
        QPalette.ColorRole.Highlight: "accent", QPalette.ColorRole.HighlightedText: "accent_text",
        QPalette.ColorRole.ToolTipBase: "base", QPalette.ColorRole.ToolTipText: "text",
        QPalette.ColorRole.PlaceholderText: "placeholder", QPalette.ColorRole.Link: "link",
        QPalette.ColorRole.BrightText: "text", QPalette.ColorRole.Mid: "border",
    }
    for role, name in roles.items():
        pal.setColor(role, QColor(c[name]))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(c["disabled"]))
    return pal


def system_is_dark() -> bool:
    """The system's colour scheme (Qt 6.5+), else the lightness of its default window colour."""
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", lambda: Qt.ColorScheme.Unknown)()
    if scheme != Qt.ColorScheme.Unknown:
        return scheme == Qt.ColorScheme.Dark
    return QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128


def apply_theme(app: QApplication, dark: bool) -> None:
    _current.clear()
    _current.update(DARK if dark else LIGHT)
    app.setPalette(palette(_current))
    app.setStyleSheet(stylesheet(_current))
    app.setProperty("sparTheme", "dark" if dark else "light")


def apply_style(app: QApplication, dark: bool | None = None) -> None:
    """Fusion, a readable font and the theme: ``dark`` None follows the system, now and when it
    changes."""
    app.setStyle("Fusion")
    font = QFont(app.font())
    if font.pointSizeF() < 10:
        font.setPointSizeF(10)
    app.setFont(font)
    apply_theme(app, system_is_dark() if dark is None else dark)
    if dark is None and hasattr(app.styleHints(), "colorSchemeChanged"):
        app.styleHints().colorSchemeChanged.connect(lambda scheme: follow_system(app, scheme))


def follow_system(app: QApplication, scheme: Qt.ColorScheme) -> None:
    """The system switched between light and dark (our own palette hides the system's, so the
    signal's scheme is what tells)."""
    if scheme != Qt.ColorScheme.Unknown:
        apply_theme(app, scheme == Qt.ColorScheme.Dark)

