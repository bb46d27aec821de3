"""OCR of scanned PDFs and images with the real engine (RapidOCR and its bundled models) on real
rendered images: words come back, pages are merged, the cache saves work, cancellation, limits,
damaged files, and no network. Images are kept small: a few lines, under 1000 px wide."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

from spar_desktop.core.documents import ocr
from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract import extract
from spar_desktop.core.documents.extract_pdf import NO_TEXT_LAYER
from spar_desktop.core.documents.ocr import OCR_ENGINE_ID, needs_ocr, ocr_document, ocr_unavailable
from spar_desktop.core.documents.ocr_cache import OcrCache
from spar_desktop.core.documents.types import ExtractedDocument, PageText
from spar_desktop.core.progress import CancelToken, Cancelled

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(ocr_unavailable() is not None, reason="rapidocr-onnxruntime not installed")


def _words(text: str) -> set[str]:
    return {w.strip(".,;:").lower() for w in text.split()}


def _text_pixmap(lines: list[str], width: float = 320, height: float = 200, fontsize: float = 14,
                 dpi: int = 150):
    """Text typeset by PyMuPDF's built-in Helvetica, rendered like a scan (no system fonts needed).

    Roughly square on purpose: the detector scales an image up until its short side is 736 px,
    so a wide strip would cost several times the work of a block of the same text."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    page.insert_textbox(pymupdf.Rect(15, 15, width - 15, height - 10), "\n".join(lines), fontsize=fontsize)
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
    doc.close()
    return pix


def _text_png(path: Path, lines: list[str], **kw) -> Path:
    _text_pixmap(lines, **kw).save(str(path))
    return path


def _scanned_pdf(path: Path, pages: list) -> Path:
    """A PDF whose pages are text (a str), a picture of text (a list of lines) or blank (None)."""
    import pymupdf

    doc = pymupdf.open()
    for content in pages:
        if content is None:
            doc.new_page(width=200, height=100)
        elif isinstance(content, str):
            page = doc.new_page(width=360, height=200)
            page.insert_textbox(pymupdf.Rect(15, 15, 345, 190), content, fontsize=11)
        else:
            png = _text_pixmap(content).tobytes("png")
            page = doc.new_page(width=320, height=200)
            page.insert_image(page.rect, stream=png)
    doc.save(str(path))
    doc.close()
    return path


@pytest.fixture
def engine_calls(monkeypatch) -> list:
    """Counts pages the real engine reads (it still does the reading)."""
    calls: list = []
    real = ocr._run_engine

    def counting(gray):
        calls.append(gray.shape)
        return real(gray)

    monkeypatch.setattr(ocr, "_run_engine", counting)
    return calls


# -- images -------------------------------------------------------------------------------------
def test_png_of_text_comes_back_with_its_words(tmp_path):
    path = _text_png(tmp_path / "memo.png", ["Turbine inspection completed on Tuesday.",
                                             "Replacement bearings ordered from the supplier."])
    doc = extract(path)
    assert doc.format == "image" and not doc.pages and needs_ocr(doc, "image")
    out = ocr_document(path, "image", doc, ExtractionBudget())
    words = _words(out.text)
    assert {"turbine", "inspection", "completed", "tuesday", "replacement", "bearings", "supplier"} <= words
    assert out.warnings == ("text from OCR",) and out.no_text_reason is None
    assert [p.page for p in out.pages] == [1]
    assert not needs_ocr(out, "image")


def test_transparent_png_drawn_with_pillow_reads_as_dark_text_on_white(tmp_path):
    from PIL import Image, ImageDraw, ImageFont

    font_path = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    if not font_path.exists():
        pytest.skip("DejaVu Sans not installed")
    im = Image.new("RGBA", (560, 400), (0, 0, 0, 0))  # fully transparent black: no background
    ImageDraw.Draw(im).multiline_text((20, 40), "Pressure valve\ncalibration record",
                                      font=ImageFont.truetype(str(font_path), 30), fill=(0, 0, 0, 255))
    im.save(tmp_path / "label.png")
    out = ocr_document(tmp_path / "label.png", "image", extract(tmp_path / "label.png"), ExtractionBudget())
    assert {"pressure", "valve", "calibration", "record"} <= _words(out.text)


def test_lines_in_reading_order_rows_joined_and_paragraphs_split(tmp_path):
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=380, height=220)
    # Drawn in another order than they are read: right of the row first, then below, then left.
    page.insert_text((220, 40), "Northern sector", fontsize=14)
    page.insert_text((20, 140), "Closing remarks follow", fontsize=14)
    page.insert_text((20, 40), "Report summary", fontsize=14)
    page.insert_text((20, 60), "second line here", fontsize=14)
    page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY).save(str(tmp_path / "order.png"))
    out = ocr_document(tmp_path / "order.png", "image", extract(tmp_path / "order.png"), ExtractionBudget())
    paragraphs = [p.split("\n") for p in out.text.lower().split("\n\n")]
    assert paragraphs == [["report summary northern sector", "second line here"], ["closing remarks follow"]]


def test_multi_frame_tiff_is_one_page_per_frame(tmp_path):
    from PIL import Image

    frames = [Image.frombytes("L", (p.width, p.height), p.samples)
              for p in (_text_pixmap(["First frame about pumps."], width=220, height=150),
                        _text_pixmap(["Second frame about valves."], width=220, height=150))]
    frames[0].save(tmp_path / "fax.tif", save_all=True, append_images=frames[1:])
    out = ocr_document(tmp_path / "fax.tif", "image", extract(tmp_path / "fax.tif"), ExtractionBudget())
    assert [p.page for p in out.pages] == [1, 2]
    assert "pumps" in _words(out.pages[0].text) and "valves" in _words(out.pages[1].text)
    assert out.warnings == ("text from OCR (pages 1, 2)",)


def test_large_jpeg_is_decoded_at_reduced_scale_within_the_pixel_limit(tmp_path, engine_calls):
    from PIL import Image

    pix = _text_pixmap(["Scaled drawing notes"], width=300, height=300, fontsize=20, dpi=600)  # 2500 px
    Image.frombytes("L", (pix.width, pix.height), pix.samples).save(tmp_path / "big.jpg", quality=90)
    out = ocr_document(tmp_path / "big.jpg", "image", extract(tmp_path / "big.jpg"),
                       ExtractionBudget(max_image_pixels=1_000_000))
    assert {"scaled", "drawing", "notes"} <= _words(out.text)
    assert engine_calls[0][0] * engine_calls[0][1] <= 1_000_000  # libjpeg decoded it at 1/4 scale


def test_image_over_the_pixel_limit_is_refused_with_a_clear_message(tmp_path, engine_calls):
    path = _text_png(tmp_path / "poster.png", ["Poster"], width=300, height=300, dpi=300)  # 1250 px square
    with pytest.raises(ExtractionError, match=r"too large: 1,250 × 1,250 pixels of image, limit 1,000,000 "
                                              r"pixels \(raise it in Settings"):
        ocr_document(path, "image", extract(path), ExtractionBudget(max_image_pixels=1_000_000))
    assert engine_calls == []


def _white_png_streamed(path: Path, side: int) -> None:
    """A bilevel all-white side x side PNG written row by row: never the whole image in memory."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")

    row = b"\x00" + b"\xff" * ((side + 7) // 8)
    comp = zlib.compressobj(9)
    body = b"".join(comp.compress(row) for _ in range(side)) + comp.flush()
    ihdr = side.to_bytes(4, "big") * 2 + bytes([1, 0, 0, 0, 0])  # 1 bit per pixel, greyscale
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", body) + chunk(b"IEND", b""))


_PEAK_RSS_PROBE = """
import json, resource, sys
from pathlib import Path
from spar_desktop.core.documents.extract import extract
from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.ocr import ocr_document, ocr_unavailable
import numpy as np
from spar_desktop.core.documents.ocr import OCR_MAX_SIDE, ocr_pixels
if sys.argv[2] == "warm":  # the engine's own memory (a page of OCR size) before the baseline
    page = np.full((OCR_MAX_SIDE, OCR_MAX_SIDE), 255, np.uint8)
    page[300:400, 300:2000] = 0
    ocr_pixels(page)
ocr_unavailable()  # engine libraries imported before the baseline
path = Path(sys.argv[1])
doc = extract(path)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    out = {"text": ocr_document(path, "image", doc, ExtractionBudget()).text}
except ExtractionError as exc:
    out = {"error": exc.message}
out["peak_growth_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps(out))
"""


def _probe_peak(path: Path, warm: bool = False) -> dict:
    """Peak RSS growth of ocr_document on ``path`` in a fresh process (after a warm-up page of
    the engine's largest size when ``warm``: then only the image's own decoding shows)."""
    args = [sys.executable, "-c", _PEAK_RSS_PROBE, str(path), "warm" if warm else "cold"]
    done = subprocess.run(args, cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_20000_px_square_png_gives_a_clear_message_with_bounded_memory(tmp_path):
    path = tmp_path / "plan.png"
    _white_png_streamed(path, 20_000)  # 400 megapixels: 400 MB (grey) if it were decoded
    result = _probe_peak(path)
    assert result.get("error", "").startswith("too large: 400,000,000 pixels of image, limit 100,000,000 pixels")
    assert result["peak_growth_mb"] < 100


@pytest.mark.slow
def test_20000_px_square_jpeg_is_read_at_reduced_scale_with_bounded_memory(tmp_path):
    path = tmp_path / "drawing.jpg"
    make = ("from PIL import Image, ImageDraw, ImageFont; import sys\n"
            "im = Image.new('L', (20000, 20000), 255)\n"
            "ImageDraw.Draw(im).text((1000, 1000), 'Foundation plan', fill=0,"
            " font=ImageFont.load_default(size=900))\n"
            "im.save(sys.argv[1], quality=75)\n")
    subprocess.run([sys.executable, "-c", make, str(path)], check=True, timeout=300)
    result = _probe_peak(path, warm=True)
    assert {"foundation", "plan"} <= _words(result["text"])
    assert result["peak_growth_mb"] < 150  # decoded at 1/8 scale: 2,500 px square, not 400 MB


# -- PDFs ---------------------------------------------------------------------------------------
def test_pdf_page_without_text_layer_gets_ocr_text_and_text_pages_are_kept(tmp_path, engine_calls):
    path = _scanned_pdf(tmp_path / "mixed.pdf", ["Typed cover page about the annual maintenance budget.",
                                                ["Handwritten style note scanned", "Crane booked for Monday."]])
    doc = extract(path)
    assert [p.page for p in doc.pages] == [1] and needs_ocr(doc, "pdf")
    seen: list = []
    out = ocr_document(path, "pdf", doc, ExtractionBudget(), progress=seen.append)
    assert out.pages[0] is doc.pages[0]  # the text layer is kept as it is
    assert [p.page for p in out.pages] == [1, 2]
    assert {"scanned", "crane", "booked", "monday"} <= _words(out.pages[1].text)
    assert out.warnings == ("text from OCR (page 2)",)  # replaces "1 page(s) have no text layer"
    assert len(engine_calls) == 1 and not needs_ocr(out, "pdf")
    assert [p.message for p in seen] == ["OCR page 2 of 2", "OCR done"]
    assert out.text[out.page_offsets[1]:].startswith(out.pages[1].text)


def test_fully_scanned_pdf_with_a_blank_page(tmp_path):
    path = _scanned_pdf(tmp_path / "scan.pdf", [["Site access register"], None])  # blank: nothing to find
    doc = extract(path)
    assert doc.no_text_reason == NO_TEXT_LAYER
    out = ocr_document(path, "pdf", doc, ExtractionBudget())
    assert {"site", "access", "register"} <= _words(out.text) and out.no_text_reason is None
    assert out.warnings == ("text from OCR (page 1)", "no text found by OCR on page 2")


def test_cache_hit_does_no_ocr(tmp_path, engine_calls):
    path = _scanned_pdf(tmp_path / "scan.pdf", ["A typed page with its own text layer, long enough.",
                                               ["Cached scan of the permit"]])
    doc = extract(path)
    with OcrCache(tmp_path / "ocr.sqlite3") as cache:
        first = ocr_document(path, "pdf", doc, ExtractionBudget(), cache=cache, content_hash="h1")
        assert len(engine_calls) == 1
        assert cache.get("h1", OCR_ENGINE_ID) == {2: first.pages[1].text}
    with OcrCache(tmp_path / "ocr.sqlite3") as cache:  # reopened: persisted, not just in memory
        second = ocr_document(path, "pdf", doc, ExtractionBudget(), cache=cache, content_hash="h1")
    assert len(engine_calls) == 1 and second == first
    assert {"permit"} <= _words(second.text)


def test_cancel_mid_document_raises_and_keeps_the_pages_read(tmp_path, engine_calls):
    path = _scanned_pdf(tmp_path / "scan.pdf", [["Page one text"], ["Page two text"], ["Page three text"]])
    token = CancelToken()

    def progress(p):
        if p.message.startswith("OCR page 2"):
            token.cancel()

    with OcrCache(tmp_path / "ocr.sqlite3") as cache:
        with pytest.raises(Cancelled):
            ocr_document(path, "pdf", extract(path), ExtractionBudget(), token, progress, cache, "h")
        assert len(engine_calls) == 1 and set(cache.get("h", OCR_ENGINE_ID)) == {1}
        out = ocr_document(path, "pdf", extract(path), ExtractionBudget(), cache=cache, content_hash="h")
    assert len(engine_calls) == 3  # the rerun read pages 2 and 3 only
    assert [p.page for p in out.pages] == [1, 2, 3] and "three" in _words(out.pages[2].text)


def test_time_limit_stops_ocr_and_keeps_what_was_read(tmp_path, engine_calls):
    path = _scanned_pdf(tmp_path / "scan.pdf", [["Page one"], ["Page two"]])
    doc = extract(path)
    out = ocr_document(path, "pdf", doc, ExtractionBudget(max_seconds=0))
    assert engine_calls == [] and out.pages == ()
    assert out.warnings[-1].startswith("OCR stopped before page 1 of 2: too slow to read")


# -- failures, cache, engine --------------------------------------------------------------------
def test_corrupt_images_raise_plain_messages(tmp_path, engine_calls):
    good = _text_png(tmp_path / "ok.png", ["Some text"]).read_bytes()
    cut = tmp_path / "cut.png"
    cut.write_bytes(good[: len(good) // 2])
    with pytest.raises(ExtractionError, match="^image is damaged or incomplete"):
        ocr_document(cut, "image", extract(cut), ExtractionBudget())
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00garbage" * 50)
    with pytest.raises(ExtractionError, match="^not a readable image"):
        ocr_document(junk, "image", extract(junk), ExtractionBudget())
    assert engine_calls == []


def test_needs_ocr_decisions():
    pdf = lambda pages, **kw: ExtractedDocument(tuple(PageText(n, t) for n, t in pages), "pdf", **kw)
    long = "enough characters of real text here"
    assert needs_ocr(ExtractedDocument((), "image", no_text_reason="image file"), "image")
    assert needs_ocr(pdf([], no_text_reason=NO_TEXT_LAYER), "pdf")
    assert not needs_ocr(pdf([(1, long), (2, long)]), "pdf")
    assert needs_ocr(pdf([(1, long), (3, long)]), "pdf")  # page 2 skipped: no text layer
    assert needs_ocr(pdf([(1, long), (2, "- 2 -")]), "pdf")  # a page number is not a text layer
    assert needs_ocr(pdf([(1, long)], warnings=("1 page(s) have no text layer (scanned?): 2",)), "pdf")
    assert not needs_ocr(pdf([(1, long)], warnings=("text from OCR (page 2)",)), "pdf")
    assert not needs_ocr(ExtractedDocument((PageText(1, "x"),), "docx"), "docx")


def test_ocr_cache_merges_pages_and_rebuilds_other_versions(tmp_path):
    path = tmp_path / "ocr.sqlite3"
    with OcrCache(path) as cache:
        assert cache.get("h", "e") is None
        cache.put("h", "e", {1: "one", 3: ""})
        cache.put("h", "e", {2: "two", 3: "three"})
        assert cache.get("h", "e") == {1: "one", 2: "two", 3: "three"}
        assert cache.get("h", "other engine") is None
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.execute("PRAGMA user_version=7")
    with OcrCache(path) as cache:  # written by another version: derived data, dropped
        assert cache.get("h", "e") is None
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    path.write_bytes(b"not a database" * 100)
    with OcrCache(path) as cache:  # damaged: started afresh
        cache.put("h", "e", {1: "x"})
        assert cache.get("h", "e") == {1: "x"}


def test_ocr_cache_is_safe_from_several_threads(tmp_path):
    with OcrCache(tmp_path / "ocr.sqlite3") as cache:
        def work(i: int) -> None:
            for page in range(20):
                cache.put(f"h{i}", "e", {page: f"text {i} {page}"})
                assert cache.get(f"h{i}", "e")[page] == f"text {i} {page}"

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(len(cache.get(f"h{i}", "e")) == 20 for i in range(4))


def test_engine_threads_are_limited(tmp_path):
    ocr.ocr_pixels(_grey(_text_pixmap(["Warm up"])))
    sessions = [ocr._ENGINE.text_det.infer.session, ocr._ENGINE.text_rec.session.session]
    for session in sessions:
        assert 1 <= session.get_session_options().intra_op_num_threads <= 2
    assert ocr.ocr_threads() <= max(1, (os.cpu_count() or 1) - 1)


def _grey(pix):
    import numpy as np

    return np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width)


_OFFLINE_PROBE = """
import json, os, socket, sys
def refuse(*a, **k):
    raise OSError("network access attempted")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from pathlib import Path
from spar_desktop.core.documents.extract import extract
from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.ocr import ocr_document
path = Path(sys.argv[1])
text = ocr_document(path, "image", extract(path), ExtractionBudget()).text
print(json.dumps({"text": text, "qt_plugins": os.environ.get("QT_QPA_PLATFORM_PLUGIN_PATH")}))
"""


def test_ocr_works_with_network_blocked_and_leaves_home_and_qt_alone(tmp_path):
    path = _text_png(tmp_path / "offline.png", ["Offline reading works fine"])
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    env.pop("QT_QPA_PLATFORM_PLUGIN_PATH", None)
    done = subprocess.run([sys.executable, "-c", _OFFLINE_PROBE, str(path)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert {"offline", "reading", "works", "fine"} <= _words(result["text"])
    assert result["qt_plugins"] is None  # OpenCV's Qt plugin path, set on import, was taken back
    assert "network access attempted" not in done.stderr
    assert list(home.rglob("*")) == []  # no model download, no telemetry id under ~/.cache


def test_missing_engine_is_reported_and_text_pages_are_kept(monkeypatch):
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)  # as if not installed
    ocr_unavailable.cache_clear()
    try:
        assert ocr_unavailable() == "OCR engine not installed: pip install rapidocr-onnxruntime"
        doc = ExtractedDocument((PageText(1, "a typed first page with enough text"),), "pdf",
                                warnings=("1 page(s) have no text layer (scanned?): 2",))
        out = ocr_document(Path("unused.pdf"), "pdf", doc, ExtractionBudget())
        assert out.pages == doc.pages
        assert out.warnings[-1] == "pages without text were not read: " + ocr_unavailable()
    finally:
        ocr_unavailable.cache_clear()
