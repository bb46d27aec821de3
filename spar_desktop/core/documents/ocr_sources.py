"""Where OCR gets its pixels: PDF pages rendered at the OCR resolution, and image files (every
frame of a TIFF) decoded at a bounded size, so a 20,000 x 20,000 px scan never needs gigabytes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from spar_desktop.core.documents.budget import ExtractionBudget, too_large
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.types import ExtractedDocument
from spar_desktop.core.pdf_lock import PYMUPDF_LOCK

MIN_TEXT_CHARS = 20  # a page with fewer non-space characters has no real text layer
RENDER_DPI = 200
OCR_MAX_SIDE = 2400  # px on the long side: an A4 page at 200 dpi; larger images are scaled down


def has_text(text: str) -> bool:
    return sum(not c.isspace() for c in text) >= MIN_TEXT_CHARS


class PdfPages:
    """A PDF held open while its pages are OCR'd; PyMuPDF only ever under PYMUPDF_LOCK, which is
    released while the engine reads a rendered page."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> "PdfPages":
        with PYMUPDF_LOCK:
            import pymupdf  # heavy native module: only loaded when a PDF is actually read

            try:
                self.pdf = pymupdf.open(self.path, filetype="pdf")
            except Exception as exc:  # pymupdf raises FileDataError, RuntimeError, ValueError...
                raise ExtractionError(f"corrupt PDF: {exc}") from exc
            self.page_count = self.pdf.page_count
            if self.pdf.needs_pass:
                self.pdf.close()
                raise ExtractionError("PDF is password-protected")
        return self

    def __exit__(self, *exc: object) -> None:
        with PYMUPDF_LOCK:
            self.pdf.close()

    def targets(self, doc: ExtractedDocument, budget: ExtractionBudget) -> list[int]:
        with_text = {p.page for p in doc.pages if has_text(p.text)}
        # After a truncation the later pages were not read, which does not make them blank.
        truncated = any(w.startswith("text truncated") for w in doc.warnings)
        last = max(with_text, default=0) if truncated else self.page_count
        return [n for n in range(1, min(last, budget.max_pages) + 1) if n not in with_text]

    def render(self, page: int) -> Any:
        import pymupdf  # heavy native module: only loaded when a PDF is actually read

        with PYMUPDF_LOCK:
            p = self.pdf.load_page(page - 1)
            zoom = min(RENDER_DPI / 72, OCR_MAX_SIDE / max(p.rect.width, p.rect.height, 1))
            pix = p.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csGRAY, alpha=False)
            return np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.stride)[:, : pix.width]


class ImagePages:
    """An image file, one page per frame (TIFF), decoded frame by frame at a bounded size."""

    def __init__(self, path: Path, budget: ExtractionBudget) -> None:
        self.path, self.budget = path, budget

    def __enter__(self) -> "ImagePages":
        self.image = open_image(self.path, self.budget)
        frames = getattr(self.image, "n_frames", 1) if self.image.format == "TIFF" else 1
        self.page_count = max(1, min(frames, self.budget.max_pages))
        return self

    def __exit__(self, *exc: object) -> None:
        self.image.close()

    def targets(self, doc: ExtractedDocument, budget: ExtractionBudget) -> list[int]:
        return list(range(1, self.page_count + 1))

    def render(self, page: int) -> Any:
        if getattr(self.image, "n_frames", 1) > 1:
            self.image.seek(page - 1)
        return frame_pixels(self.image, self.budget)


def open_image(path: Path, budget: ExtractionBudget) -> Any:
    from PIL import Image, JpegImagePlugin  # only when an image is read

    try:
        return Image.open(path)
    except Image.DecompressionBombError as exc:
        with open(path, "rb") as f:
            if f.read(3) == b"\xff\xd8\xff":  # JPEG decodes at 1/8 scale: safe whatever its size
                return JpegImagePlugin.JpegImageFile(str(path))
        found = re.search(r"\((\d+) pixels\)", str(exc))
        amount = f"{int(found.group(1)):,} pixels" if found else "too many pixels"
        limit = min(budget.max_image_pixels, 2 * (Image.MAX_IMAGE_PIXELS or budget.max_image_pixels))
        raise too_large("image", amount, f"{limit:,} pixels") from exc
    except (PermissionError, FileNotFoundError):
        raise
    except (OSError, SyntaxError, ValueError, EOFError) as exc:  # UnidentifiedImageError is an OSError
        raise ExtractionError("not a readable image: its format is not supported or the file is damaged") from exc


_WIDE_MODES = ("I;16", "I;16B", "I;16L", "I;16N", "I", "F")
_ORIENTATION = {2: "FLIP_LEFT_RIGHT", 3: "ROTATE_180", 4: "FLIP_TOP_BOTTOM", 5: "TRANSPOSE",
                6: "ROTATE_270", 7: "TRANSVERSE", 8: "ROTATE_90"}


def frame_pixels(im: Any, budget: ExtractionBudget) -> Any:
    """The current frame as a grey uint8 array at most OCR_MAX_SIDE px on its long side.

    Memory stays bounded: a JPEG is decoded straight at a reduced scale (libjpeg's draft mode);
    any other image over ``budget.max_image_pixels`` is refused before a byte is decoded.
    """
    from PIL import Image  # deferred: Pillow loads only when an image is read

    w, h = im.size
    if im.format in ("JPEG", "MPO"):
        f = _jpeg_scale(w, h, budget.max_image_pixels)
        if f > 1:
            im.draft("L", (w // f, h // f))
    if im.size[0] * im.size[1] > budget.max_image_pixels:
        raise too_large("image", f"{w:,} × {h:,} pixels", f"{budget.max_image_pixels:,} pixels")
    try:
        orientation = im.getexif().get(0x0112, 1)  # may read the whole file (PNG keeps it at the end)
        im.load()
        gray = _to_gray(im)
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ExtractionError(f"image is damaged or incomplete: {exc}") from exc
    if orientation in _ORIENTATION:
        gray = gray.transpose(getattr(Image.Transpose, _ORIENTATION[orientation]))
    return np.asarray(gray)


def _jpeg_scale(w: int, h: int, max_pixels: int) -> int:
    """libjpeg's reduction (1, 2, 4 or 8) for a JPEG: within the pixel limit, and no smaller than
    OCR size when the limit allows."""
    f = 1
    while f < 8 and (max(w, h) / (2 * f) >= OCR_MAX_SIDE or (w / f) * (h / f) > max_pixels):
        f *= 2
    return f


def _to_gray(im: Any) -> Any:
    """Grey ('L'), scaled down to OCR size; transparent parts become white paper, not black."""
    from PIL import Image  # deferred: see open_image

    if im.mode in _WIDE_MODES:  # 16-bit or float scans: stretch to 8 bits (a plain convert clips)
        a = np.asarray(im, dtype=np.float32)
        im = Image.fromarray(np.clip(a * (255.0 / max(float(a.max()), 1.0)), 0, 255).astype(np.uint8), "L")
    elif im.mode in ("1", "P", "PA"):  # resizing these would drop thin strokes (nearest neighbour)
        im = im.convert("RGBA" if im.mode == "PA" or "transparency" in im.info else "L")
    if im.mode in ("RGBA", "LA", "La", "RGBa"):
        im = _shrink(im.convert("RGBA"))
        return Image.alpha_composite(Image.new("RGBA", im.size, "white"), im).convert("L")
    im = _shrink(im)
    return im if im.mode == "L" else im.convert("L")


def _shrink(im: Any) -> Any:
    """A new image at most OCR_MAX_SIDE px on its long side (the same one when already smaller)."""
    from PIL import Image  # deferred: see open_image

    w, h = im.size
    k = OCR_MAX_SIDE / max(w, h, 1)
    if k >= 1:
        return im
    return im.resize((max(1, round(w * k)), max(1, round(h * k))), Image.Resampling.LANCZOS, reducing_gap=2.0)
