"""Light and dark themes that follow the system, both readable: body text and the other text in
the window (muted lines, errors, chips, marked matches, the accent button) at least 4.5:1 against
what it is read on (WCAG 2.1 AA), in the palettes and in the QPalette the app really gets."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from spar_desktop.ui.base import style


def luminance(colour: QColor) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.redF()) + 0.7152 * channel(colour.greenF()) + 0.0722 * channel(colour.blueF())


def contrast(a: str | QColor, b: str | QColor) -> float:
    hi, lo = sorted((luminance(QColor(a)), luminance(QColor(b))), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_formula():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the classic AA near-miss


@pytest.mark.parametrize("name", ["light", "dark"])
def test_every_text_colour_is_readable_on_its_background(name):
    colours = style.LIGHT if name == "light" else style.DARK
    low = {(f, b): round(contrast(colours[f], colours[b]), 2) for f, b in style.TEXT_PAIRS
           if contrast(colours[f], colours[b]) < 4.5}
    assert low == {}


@pytest.mark.parametrize("dark", [False, True])
def test_the_applied_palette_is_readable_and_dark_means_dark(qapp, dark):
    try:
        style.apply_theme(qapp, dark)
        pal = QApplication.palette()
        for text, back in ((QPalette.ColorRole.WindowText, QPalette.ColorRole.Window),
                           (QPalette.ColorRole.Text, QPalette.ColorRole.Base),
                           (QPalette.ColorRole.ButtonText, QPalette.ColorRole.Button),
                           (QPalette.ColorRole.HighlightedText, QPalette.ColorRole.Highlight),
                           (QPalette.ColorRole.ToolTipText, QPalette.ColorRole.ToolTipBase)):
            assert contrast(pal.color(text), pal.color(back)) >= 4.5, (text, back)
        assert (pal.color(QPalette.ColorRole.Window).lightness() < 80) is dark
        assert style.colours()["base"] == (style.DARK if dark else style.LIGHT)["base"]
        assert style.colours()["muted"] in qapp.styleSheet()
    finally:
        style.apply_theme(qapp, False)


def test_the_theme_follows_the_system_when_it_switches(qapp):
    try:
        style.follow_system(qapp, Qt.ColorScheme.Dark)
        assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 80
        # text the widgets draw themselves (search hits) takes the theme's colours
        from spar_desktop.ui.workspaces.search_results import why_html

        class Hit:
            score, keyword_part, meaning_part, alpha, rank, chunk_id, text = 0.8, 0.3, 0.5, 0.5, 1, "c", "x"

        assert style.DARK["muted"] in why_html(Hit())
        style.follow_system(qapp, Qt.ColorScheme.Unknown)  # nothing known: unchanged
        assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 80
        style.follow_system(qapp, Qt.ColorScheme.Light)
        assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() > 200
    finally:
        style.apply_theme(qapp, False)


@pytest.mark.parametrize("dark", [False, True])
def test_graph_labels_take_the_theme_not_a_light_box_on_a_dark_canvas(qapp, dark):
    from spar_desktop.ui.relations.graph_items import label_colours

    try:
        style.apply_theme(qapp, dark)
        text, box = label_colours()
        canvas = QColor(style.colours()["graph_bg"])
        assert box.rgb() == canvas.rgb()  # the box is the canvas's colour (a little see-through)
        assert contrast(text, canvas) >= 4.5
    finally:
        style.apply_theme(qapp, False)
