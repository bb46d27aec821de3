"""Look and feel: Fusion with a calm light palette, one accent colour and a readable font size.

Kept deliberately small: a stylesheet only for things the palette cannot express (spacing,
headers, the empty state), so native dialogs and widgets still look like themselves.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

ACCENT = "#2f6fde"

STYLESHEET = f"""
QMainWindow::separator {{ background: #e3e5e9; width: 1px; height: 1px; }}
QDockWidget {{ font-weight: 600; }}
QDockWidget::title {{ padding: 6px 8px; background: #eceef2; border-bottom: 1px solid #dcdfe4; }}
QToolBar {{ spacing: 4px; padding: 3px 6px; border: none; border-bottom: 1px solid #dcdfe4; background: #f5f6f8; }}
QToolButton {{ padding: 4px 6px; border-radius: 4px; }}
QToolButton:hover {{ background: #e4e7ec; }}
QHeaderView::section {{ background: #f1f2f5; border: none; border-right: 1px solid #e1e3e8;
    border-bottom: 1px solid #dcdfe4; padding: 4px 6px; font-weight: 600; color: #3b4150; }}
QTableView, QTreeView, QTreeWidget {{ border: none; selection-background-color: {ACCENT}; }}
QTableView::item, QTreeView::item {{ padding: 0px 4px; }}
QLineEdit {{ padding: 4px 6px; border: 1px solid #cfd3da; border-radius: 4px; background: white; }}
QLineEdit:focus {{ border: 1px solid {ACCENT}; }}
QPushButton {{ padding: 5px 12px; border: 1px solid #c9ced6; border-radius: 5px; background: #ffffff; }}
QPushButton:hover {{ background: #f0f3f8; }}
QPushButton:disabled {{ color: #9aa0aa; }}
QPushButton#primaryButton {{ background: {ACCENT}; color: white; border: 1px solid {ACCENT}; font-weight: 600; }}
QPushButton#primaryButton:hover {{ background: #275fc0; }}
QPushButton#primaryButton:disabled {{ background: #a9c1ec; border: 1px solid #a9c1ec; color: #eef3fc; }}
QPushButton[flat="true"] {{ border: none; color: {ACCENT}; background: transparent; }}
QGroupBox {{ font-weight: 600; border: 1px solid #dcdfe4; border-radius: 6px; margin-top: 12px; padding: 8px; }}
QGroupBox::title {{ subcontrol-origin: margin; left: 10px; padding: 0 4px; }}
QTabWidget::pane {{ border: none; border-top: 1px solid #dcdfe4; }}
QTabBar::tab {{ padding: 6px 16px; border: none; background: transparent; color: #545b68; }}
QTabBar::tab:selected {{ color: #1f2328; border-bottom: 2px solid {ACCENT}; font-weight: 600; }}
QStatusBar {{ border-top: 1px solid #dcdfe4; background: #f5f6f8; }}
QProgressBar {{ border: 1px solid #cfd3da; border-radius: 4px; background: white; }}
QProgressBar::chunk {{ background: {ACCENT}; border-radius: 3px; }}
QLabel#emptyTitle {{ font-size: 17pt; font-weight: 600; color: #1f2328; }}
QLabel#emptyText, QLabel#placeholder, QLabel#muted {{ color: #6a7180; }}
QLabel#placeholder {{ font-size: 11pt; padding: 24px; }}
QLabel#detailsTitle {{ font-size: 13pt; font-weight: 600; }}
QLabel#sectionTitle {{ font-weight: 600; color: #3b4150; }}
QLabel#countLabel {{ font-weight: 600; }}
QLabel#filterLabel {{ color: #545b68; }}
QLabel#errorText {{ color: #b3261e; }}
QLabel#viewerTitle {{ font-weight: 600; }}
QLabel#workspaceTitle {{ font-size: 12pt; font-weight: 600; }}
QFrame#separator {{ color: #dcdfe4; }}
QScrollArea#pdfScroll, QLabel#pdfPage {{ background: #e6e8ec; }}
QPlainTextEdit#textView {{ border: none; padding: 12px; background: white; }}
QWidget#dropOverlay {{ background: transparent; }}
QTreeWidget#workspaceList, QListWidget#searchResults, QListWidget#threadList, QTreeWidget#tagChoices {{
    border: 1px solid #dcdfe4; border-radius: 4px; background: white; }}
QScrollArea#messageList, QWidget#messageContainer {{ border: none; background: #f5f6f8; }}
QFrame#answerBubble {{ background: white; border: 1px solid #dcdfe4; border-radius: 8px; }}
QFrame#userBubble {{ background: #e8f0fe; border: 1px solid #cddcf8; border-radius: 8px; }}
QLabel#messageBody {{ background: transparent; border: none; }}
QPushButton#citationChip {{ padding: 2px 9px; border: 1px solid #c9d7f2; border-radius: 10px; background: #eef3fc;
    color: #27466e; }}
QPushButton#citationChip:hover {{ background: #dbe7fb; }}
QPushButton#invalidChip {{ padding: 2px 9px; border: 1px dashed #e0a39e; border-radius: 10px; background: #fdf0ef;
    color: #b3261e; }}
QFrame#chatBanner {{ background: #fff4d6; border-bottom: 1px solid #f0d48a; }}
QFrame#questionBar {{ border-top: 1px solid #dcdfe4; background: #f5f6f8; }}
QPlainTextEdit#questionBox {{ border: 1px solid #cfd3da; border-radius: 6px; background: white; padding: 2px; }}
QWidget#threadColumn {{ background: #f1f2f5; }}
QFrame#freshnessBar {{ background: #fff4d6; border: 1px solid #f0d48a; border-radius: 4px; }}
QFrame#freshnessBar[tone="info"] {{ background: #eef3fc; border: 1px solid #c9d7f2; }}
QLabel#freshnessText {{ color: #3b4150; background: transparent; border: none; }}
"""


def apply_style(app: QApplication) -> None:
    app.setStyle("Fusion")
    pal = QPalette()
    colours = {
        QPalette.ColorRole.Window: "#f5f6f8", QPalette.ColorRole.WindowText: "#1f2328",
        QPalette.ColorRole.Base: "#ffffff", QPalette.ColorRole.AlternateBase: "#f7f8fa",
        QPalette.ColorRole.Text: "#1f2328", QPalette.ColorRole.Button: "#f5f6f8",
        QPalette.ColorRole.ButtonText: "#1f2328", QPalette.ColorRole.Highlight: ACCENT,
        QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.ToolTipBase: "#ffffff",
        QPalette.ColorRole.ToolTipText: "#1f2328", QPalette.ColorRole.PlaceholderText: "#8a909b",
        QPalette.ColorRole.Link: ACCENT,
    }
    for role, colour in colours.items():
        pal.setColor(role, QColor(colour))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#9aa0aa"))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#9aa0aa"))
    app.setPalette(pal)
    font = QFont(app.font())
    if font.pointSizeF() < 10:
        font.setPointSizeF(10)
    app.setFont(font)
    app.setStyleSheet(STYLESHEET)
