"""Reading for a build: OCR where there is no text layer, inside archives too; OCR off or stopped
by the time limit fails the file (so 'no text' is never cached) with a message saying what to do."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.ocr import OCR_ENGINE_ID
from spar_desktop.core.documents.ocr_cache import OcrCache
from spar_desktop.core.documents.reading import OCR_NOTE, ReadOptions, read_document


def _text_png(text: str) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=500, height=120)
    page.insert_textbox(pymupdf.Rect(20, 20, 480, 100), text, fontsize=16)
    png = page.get_pixmap(dpi=150).tobytes("png")
    doc.close()
    return png


def test_an_image_in_a_zip_is_read_by_ocr_and_cached(tmp_path: Path):
    archive = tmp_path / "scans.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("2019/notice.png", _text_png("Gate code changed to 4471"))
    cache_path = tmp_path / "ocr.sqlite3"
    options = ReadOptions(ocr=True, ocr_cache_path=cache_path)
    doc = read_document(f"{archive}!/2019/notice.png", "image", "b2:notice", options)
    assert "4471" in doc.text and any(w.startswith(OCR_NOTE) for w in doc.warnings)
    with OcrCache(cache_path) as cache:
        assert "4471" in cache.get("b2:notice", OCR_ENGINE_ID)[1]
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("ocr.sqlite3")] == ["scans.zip"]  # nothing extracted here


def test_ocr_off_or_out_of_time_fails_the_file_with_what_to_do(tmp_path: Path):
    image = tmp_path / "notice.png"
    image.write_bytes(_text_png("Hard hats beyond this gate"))
    with pytest.raises(ExtractionError, match="OCR, which is off in Settings"):
        read_document(str(image), "image", "b2:x", ReadOptions(ocr=False))
    hurried = ReadOptions(budget=ExtractionBudget(max_seconds=0.000001), ocr=True)
    with pytest.raises(ExtractionError, match="build again to continue"):
        read_document(str(image), "image", "b2:x", hurried)
