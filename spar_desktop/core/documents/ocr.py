"""OCR for scanned PDFs and images: the text of pages that have none, page by page.

The engine is RapidOCR (PP-OCRv4 detection and recognition models shipped inside the
rapidocr-onnxruntime wheel, run by ONNX Runtime on the CPU): nothing is downloaded, ever. It is
loaded once per process on first use, runs one page at a time on at most two threads (a core is
left to the UI), and every page read is cached by content hash, so a rebuild reads nothing twice.
Pages are checked against cancellation and the file's time budget one by one; images are decoded
at a bounded size (see ``ocr_sources.frame_pixels``).
"""

from __future__ import annotations

import functools
import logging
import os
import statistics
import sys
import threading
from dataclasses import replace
from importlib import metadata
from pathlib import Path
from typing import Any, Optional, Sequence

from spar_desktop.core.documents.budget import BudgetExceeded, ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract_pdf import NO_TEXT_LAYER
from spar_desktop.core.documents.ocr_cache import OcrCache
from spar_desktop.core.documents.ocr_sources import (  # noqa: F401 - constants re-exported
    MIN_TEXT_CHARS, OCR_MAX_SIDE, RENDER_DPI, ImagePages, PdfPages, has_text,
)
from spar_desktop.core.documents.types import ExtractedDocument, PageText, storable_text
from spar_desktop.core.progress import Cancelled, CancelToken, Progress, ProgressCallback, check, no_progress

log = logging.getLogger(__name__)

__all__ = ["OCR_ENGINE_ID", "ocr_unavailable", "needs_ocr", "ocr_document", "ocr_pixels", "ocr_threads"]

DET_MAX_SIDE = 1280  # px on the long side of the line detector's input (memory: see _new_engine)
SPACE_PROB = (0.02, 0.1)  # see _SpaceAwareCtc
NOT_INSTALLED = "OCR engine not installed: pip install rapidocr-onnxruntime"
OCR_NO_TEXT = "no text found by OCR"
_OCR_WARNING = "text from OCR"
# Anything that changes the text read from a page is in the id, so cached pages never go stale.
_PIPELINE = f"ppocrv4-nocls-ctcspace{SPACE_PROB[0]}/{SPACE_PROB[1]}-{RENDER_DPI}dpi-{OCR_MAX_SIDE}px-det{DET_MAX_SIDE}-layout1"


def opencv_backend() -> str:
    """"opencv" when OpenCV is importable, else "subset": RapidOCR then runs on
    ``opencv_subset`` (the desktop bundle ships without OpenCV). SPAR_OPENCV=subset forces the
    subset, to compare the two side by side (benchmarks/ocr_quality.py --opencv both)."""
    import importlib.util

    if os.environ.get("SPAR_OPENCV", "").lower() == "subset":
        return "subset"
    return "opencv" if importlib.util.find_spec("cv2") is not None else "subset"


try:
    _VERSION = metadata.version("rapidocr-onnxruntime")
except metadata.PackageNotFoundError:
    _VERSION = "missing"
# Pages read without OpenCV may differ by a character here and there: they are cached apart.
OCR_ENGINE_ID = f"rapidocr-onnxruntime-{_VERSION}/{_PIPELINE}" + ("-cvsubset" if opencv_backend() == "subset" else "")


# -- the engine --------------------------------------------------------------------------------
_ENGINE: Any = None
# One load, then one page at a time: RapidOCR keeps per-call state on the instance, and a page
# already keeps its threads busy.
_ENGINE_LOCK = threading.Lock()
# opencv-python (RapidOCR's dependency) points Qt at its own plugins when imported on Linux,
# which would break the app's PySide6; the app's values are put back after the import.
_QT_ENV = ("QT_QPA_PLATFORM_PLUGIN_PATH", "QT_QPA_FONTDIR")


def ocr_threads() -> int:
    """ONNX Runtime threads for OCR: one core is left to the UI, and more than two gain little."""
    return max(1, min(2, (os.cpu_count() or 1) - 1))


def _import_engine() -> Any:
    saved = {k: os.environ.get(k) for k in _QT_ENV}
    try:
        # Heavy (OpenCV, ONNX Runtime): imported only when a page is actually read. ONNX Runtime's
        # telemetry is already off: spar_desktop/__init__ sets its variables before any import.
        import onnxruntime

        if opencv_backend() == "subset":  # before RapidOCR's modules bind their `cv2`
            from spar_desktop.core.documents import opencv_subset

            sys.modules["cv2"] = opencv_subset
        from rapidocr_onnxruntime import RapidOCR
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    if hasattr(onnxruntime, "disable_telemetry_events"):
        onnxruntime.disable_telemetry_events()
    return RapidOCR


@functools.lru_cache(maxsize=1)
def ocr_unavailable() -> Optional[str]:
    """None when the OCR engine can be loaded, else a message for people saying what to do."""
    try:
        _import_engine()
    except ImportError:
        return NOT_INSTALLED
    except Exception as exc:  # noqa: BLE001 - e.g. a native library that fails to load
        log.warning("OCR engine failed to import", exc_info=True)
        return f"OCR engine cannot start: {exc}"
    return None


def _new_engine() -> Any:
    threads = ocr_threads()
    # The 180-degree line classifier is off: it flipped long, clean English lines into garbage
    # (whole lines lost on the benchmark); upside-down scans are rare next to that.
    # Lines are recognised one at a time: a batch is padded to its widest line, which cost up to
    # five times the memory (215 vs 40 MB for a page) and no speed on one or two threads.
    engine = _import_engine()(use_cls=False, max_side_len=OCR_MAX_SIDE, rec_batch_num=1,
                              intra_op_num_threads=threads, inter_op_num_threads=1)
    # Two adjustments of RapidOCR 1.4's internals (pinned < 1.5); without them it still works,
    # with fewer spaces between words and more memory.
    try:
        engine.text_rec.postprocess_op = _SpaceAwareCtc(engine.text_rec.postprocess_op.character)
        engine.text_det.get_preprocess = _bounded_detector_input(engine.text_det)
    except (AttributeError, ValueError, ImportError):
        log.warning("RapidOCR internals differ from 1.4: its own decoding and detector sizes are used")
    return engine


def _bounded_detector_input(det: Any) -> Any:
    """The line detector's input at most DET_MAX_SIDE px: its stock input is the whole page,
    ~250 MB per megapixel (870 MB for 2400 x 1800 px). Lines are still cut from the full page for
    recognition, where resolution matters; on the benchmark 1280 px read as well as 2400 px
    (CER 2.1 % vs 2.2 %). Small images are still enlarged to 736 px, as RapidOCR does."""
    # Deferred with the engine itself (OpenCV and RapidOCR load in ~1 s): only OCR needs them.
    import cv2
    from rapidocr_onnxruntime.ch_ppocr_det.utils import DetPreProcess

    class Bounded(DetPreProcess):
        def resize(self, img: Any) -> Any:
            h, w = img.shape[:2]
            k = min(max(1.0, 736 / max(min(h, w), 1)), DET_MAX_SIDE / max(h, w, 1))
            return cv2.resize(img, (max(32, round(w * k / 32) * 32), max(32, round(h * k / 32) * 32)))

    pre = Bounded(736, "min", det.mean, det.std)
    return lambda max_wh: pre


def _run_engine(gray: Any) -> list:
    """RapidOCR on one grey image: [(box, text, score), ...] (box: four (x, y) corners)."""
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            _ENGINE = _new_engine()
        result, _ = _ENGINE(gray, use_cls=False)
    return list(result or [])


class _SpaceAwareCtc:
    """CTC decoding that keeps the spaces the model hesitates over.

    The multilingual PP-OCRv4 recogniser seldom makes a space its first choice in proportional
    English type ("Reportdate:6April"), but the space's probability clearly rises in the blank
    columns between words: a space is written where it reaches SPACE_PROB[0]. That took the
    character error rate on 18 clean 150-dpi pages from 5.4 % to 2.0 % (benchmarks/ocr_quality.py).
    On typewriter type the model writes most spaces itself and hesitates inside words instead
    ("technician ' s"), so on a line where it wrote at least a tenth of the gaps as spaces, a
    hesitation must reach SPACE_PROB[1].
    """

    def __init__(self, characters: Sequence[str]) -> None:
        self.characters = list(characters)
        self.space = self.characters.index(" ")

    def __call__(self, preds: Any, return_word_box: bool = False, **_: Any) -> list[tuple[str, float]]:
        ids, probs, space_probs = preds.argmax(axis=2), preds.max(axis=2), preds[:, :, self.space]
        return [self._decode(i.tolist(), p.tolist(), s.tolist()) for i, p, s in zip(ids, probs, space_probs)]

    def _decode(self, ids: list[int], probs: list[float], space_probs: list[float]) -> tuple[str, float]:
        chars: list[str] = []
        confs: list[float] = []
        gaps: list[float] = []  # before each character but the first: how likely a space is
        prev, gap = 0, 0.0
        for c, p, s in zip(ids, probs, space_probs):
            if c == 0 or c == self.space:  # 0 is the CTC blank
                gap = max(gap, 1.0 if c == self.space else s)
            elif c != prev:
                if chars:
                    gaps.append(gap)
                chars.append(self.characters[c])
                confs.append(p)
                gap = 0.0
            prev = c
        written = sum(g == 1.0 for g in gaps)
        threshold = SPACE_PROB[1] if gaps and written >= 0.1 * len(gaps) else SPACE_PROB[0]
        text = "".join(chars[:1] + [(" " if g >= threshold else "") + ch for g, ch in zip(gaps, chars[1:])])
        return text, (sum(confs) / len(confs) if confs else 0.0)


# -- reading order -------------------------------------------------------------------------------
def _layout(results: list) -> str:
    """Lines top to bottom; lines on one row joined left to right; a blank line where the
    vertical step between rows is clearly larger than the page's usual line pitch."""
    lines = []
    for box, text, *_ in results:
        if text.strip():
            ys, xs = [p[1] for p in box], [p[0] for p in box]
            lines.append((min(ys), max(ys), min(xs), text.strip()))
    lines.sort(key=lambda ln: (ln[0] + ln[1]) / 2)
    rows: list[list[tuple]] = []
    for line in lines:
        if rows and _same_row(rows[-1][0], line):
            rows[-1].append(line)
        else:
            rows.append([line])
    centres = [statistics.fmean((ln[0] + ln[1]) / 2 for ln in row) for row in rows]
    steps = [b - a for a, b in zip(centres, centres[1:])]
    heights = [ln[1] - ln[0] for ln in lines]
    pitch = statistics.median(steps) if len(steps) >= 3 else 1.3 * statistics.median(heights or [1])
    parts = []
    for i, row in enumerate(rows):
        if i:
            parts.append("\n\n" if steps[i - 1] > 1.45 * pitch else "\n")
        parts.append(" ".join(ln[3] for ln in sorted(row, key=lambda ln: ln[2])))
    return "".join(parts)


def _same_row(a: tuple, b: tuple) -> bool:
    overlap = min(a[1], b[1]) - max(a[0], b[0])
    return overlap > 0.5 * min(a[1] - a[0], b[1] - b[0])


def ocr_pixels(gray: Any) -> str:
    """The text of one grey page image (2-D uint8 numpy array), in reading order."""
    return _layout(_run_engine(gray))


# -- which pages need OCR ------------------------------------------------------------------------
def needs_ocr(doc: ExtractedDocument, fmt: str) -> bool:
    """True for an image without text, or a PDF with pages lacking a text layer (not read yet)."""
    if doc.no_text_reason == OCR_NO_TEXT or any(w.startswith(_OCR_WARNING) for w in doc.warnings):
        return False  # already read by OCR
    if fmt == "image":
        return not any(has_text(p.text) for p in doc.pages)
    if fmt != "pdf":
        return False
    numbers = [p.page for p in doc.pages]
    return (doc.no_text_reason == NO_TEXT_LAYER
            or any(not has_text(p.text) for p in doc.pages)
            or numbers != list(range(1, len(numbers) + 1))  # pages skipped by extraction
            or any("no text layer" in w for w in doc.warnings))  # e.g. the last pages


# -- OCR of a document ---------------------------------------------------------------------------
def ocr_document(path: Path, fmt: str, doc: ExtractedDocument, budget: ExtractionBudget,
                 cancel: Optional[CancelToken] = None, progress: ProgressCallback = no_progress,
                 cache: Optional[OcrCache] = None, content_hash: Optional[str] = None) -> ExtractedDocument:
    """``doc`` with OCR text for the pages that lack text (``path`` is a real file: an archive
    member is materialised by the caller). PDF pages with a text layer are kept as they are.

    Raises Cancelled, or ExtractionError with a message for people (damaged or oversized image).
    Past the budget's time limit, OCR stops and the pages read so far are kept, with a warning;
    with ``cache`` and ``content_hash`` each page read is stored at once, so a later call goes on
    where this one stopped.
    """
    if fmt not in ("pdf", "image"):
        return doc
    unavailable = ocr_unavailable()
    if unavailable:
        return replace(doc, warnings=doc.warnings + (f"pages without text were not read: {unavailable}",))
    try:
        with (PdfPages(path) if fmt == "pdf" else ImagePages(path, budget)) as source:
            targets = source.targets(doc, budget)
            texts, stopped = _read_pages(source, targets, budget, cancel, progress,
                                         cache if content_hash else None, content_hash or "")
    except (ExtractionError, Cancelled):
        raise
    except MemoryError as exc:
        raise ExtractionError("image too large to read in memory") from exc
    except OSError as exc:  # the file itself: gone, locked, unreadable share
        raise ExtractionError(f"cannot read file: {exc.strerror or exc}") from exc
    except Exception as exc:  # library bugs on odd files must not stop a whole folder's scan
        log.warning("OCR failed for %s", path, exc_info=True)
        raise ExtractionError(f"OCR failed: {type(exc).__name__}: {exc}") from exc
    return _merge(doc, fmt, texts, stopped, budget, source.page_count)


def _read_pages(source: Any, targets: list[int], budget: ExtractionBudget, cancel: Optional[CancelToken],
                progress: ProgressCallback, cache: Optional[OcrCache], key: str) -> tuple[dict[int, str], str]:
    """{page: text} for ``targets`` (cached pages are not read again) and why reading stopped early."""
    cached = (cache.get(key, OCR_ENGINE_ID) if cache else None) or {}
    clock = budget.clock()
    texts: dict[int, str] = {}
    for done, page in enumerate(targets):
        progress(Progress(done, len(targets), f"OCR page {page} of {source.page_count}"))
        check(cancel)
        if page in cached:
            texts[page] = cached[page]
            continue
        try:
            clock.check()
        except BudgetExceeded as exc:
            return texts, f"OCR stopped before page {page} of {source.page_count}: {exc.message}"
        texts[page] = ocr_pixels(source.render(page))
        if cache:
            cache.put(key, OCR_ENGINE_ID, {page: texts[page]})
    progress(Progress(len(targets), len(targets), "OCR done"))
    return texts, ""


def _merge(doc: ExtractedDocument, fmt: str, texts: dict[int, str], stopped: str,
           budget: ExtractionBudget, page_count: int) -> ExtractedDocument:
    pages = {p.page: p for p in doc.pages}
    found = sorted(n for n, t in texts.items() if t.strip())
    for n in found:
        pages[n] = PageText(n, storable_text(texts[n]))
    warnings = [w for w in doc.warnings if "no text layer" not in w]  # replaced by the lines below
    if found:
        single = fmt == "image" and page_count == 1
        warnings.append(_OCR_WARNING if single else f"{_OCR_WARNING} ({_pages(found)})")
    blank = sorted(n for n, t in texts.items() if not t.strip())
    if blank and (found or pages):
        warnings.append(f"{OCR_NO_TEXT} on {_pages(blank)}")
    if stopped:
        warnings.append(stopped)
    kept = _cap_chars([pages[n] for n in sorted(pages)], budget.max_chars, page_count, warnings)
    reason = None if kept else (doc.no_text_reason if not texts and stopped else OCR_NO_TEXT)
    return replace(doc, pages=tuple(kept), warnings=tuple(warnings), no_text_reason=reason)


def _pages(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:20]) + (", ..." if len(numbers) > 20 else "")
    return f"page {shown}" if len(numbers) == 1 else f"pages {shown}"


def _cap_chars(pages: list[PageText], max_chars: int, page_count: int, warnings: list[str]) -> list[PageText]:
    total = 0
    for i, page in enumerate(pages):
        if total + len(page.text) > max_chars:
            text = page.text[: max(0, max_chars - total)].rstrip()
            warnings.append(f"text truncated at {max_chars:,} characters (page {page.page} of {page_count})")
            return pages[:i] + ([PageText(page.page, text)] if text else [])
        total += len(page.text) + 2
    return pages
