"""RapidOCR without OpenCV (what the desktop bundle ships): ``opencv_subset`` against OpenCV itself,
function by function on the inputs RapidOCR gives it, and a page read end to end in a process
where OpenCV is not used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from spar_desktop.core.documents import opencv_subset as sub
from spar_desktop.core.documents.ocr import ocr_unavailable

cv2 = pytest.importorskip("cv2")
REPO = Path(__file__).resolve().parents[3]
RNG = np.random.default_rng(7)


@pytest.mark.parametrize("size", [(37, 23), (640, 480), (1280, 736), (96, 48)])
def test_resize_matches_opencv_bilinear_up_and_down(size):
    img = RNG.integers(0, 256, (300, 400, 3), dtype=np.uint8)
    ours, theirs = sub.resize(img, size), cv2.resize(img, size)
    assert ours.shape == theirs.shape
    assert np.abs(ours.astype(int) - theirs.astype(int)).max() <= 1


def _rotated_bars(shape=(200, 300)) -> np.ndarray:
    """A detector-like bitmap: text lines as filled rotated rectangles, one touching the edge."""
    bitmap = np.zeros(shape, np.uint8)
    for centre, size, angle in (((80, 40), (120, 18), 0), ((150, 110), (160, 22), 12), ((40, 170), (70, 14), -30),
                                ((290, 100), (40, 12), 90)):
        box = cv2.boxPoints((centre, size, angle)).astype(np.int32)
        cv2.fillPoly(bitmap, [box], 255)
    return bitmap


def _rect_key(rect) -> tuple:
    (cx, cy), (w, h), _ = rect
    return round(cx), round(cy), round(w * h / 50)


def test_contours_give_the_same_minimum_rectangles_as_opencv():
    bitmap = _rotated_bars()
    ours, _ = sub.findContours(bitmap, sub.RETR_LIST, sub.CHAIN_APPROX_SIMPLE)
    theirs, _ = cv2.findContours(bitmap, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    assert len(ours) == len(theirs) == 4
    for contour in theirs:
        (cx, cy), (w, h), _ = cv2.minAreaRect(contour)
        match = min(ours, key=lambda c: np.hypot(*(np.array(sub.minAreaRect(c)[0]) - (cx, cy))))
        (mx, my), (mw, mh), _ = sub.minAreaRect(match)
        assert abs(mx - cx) <= 1.0 and abs(my - cy) <= 1.0
        assert sorted((mw, mh)) == pytest.approx(sorted((w, h)), abs=1.5)


def test_box_points_of_the_minimum_rectangle_are_opencvs_corners():
    for _ in range(20):
        pts = (RNG.normal(size=(30, 2)) * (40, 8) @ np.array([[0.9, 0.4], [-0.4, 0.9]]) + 200).astype(np.int32)
        theirs = cv2.boxPoints(cv2.minAreaRect(pts.reshape(-1, 1, 2)))
        ours = sub.boxPoints(sub.minAreaRect(pts.reshape(-1, 1, 2)))
        for corner in theirs:  # the same four corners, in whatever order
            assert np.min(np.hypot(*(ours - corner).T)) < 0.05


def test_fill_poly_and_masked_mean_agree_with_opencv():
    box = np.array([[[3, 4], [60, 9], [57, 30], [1, 25]]], dtype=np.int32)
    ours, theirs = np.zeros((40, 70), np.uint8), np.zeros((40, 70), np.uint8)
    sub.fillPoly(ours, box, 1)
    cv2.fillPoly(theirs, box, 1)
    assert (ours != theirs).sum() <= 0.01 * theirs.sum()
    prob = RNG.random((40, 70)).astype(np.float32)
    assert sub.mean(prob, ours)[0] == pytest.approx(cv2.mean(prob, theirs)[0], abs=0.01)


def test_dilation_with_the_detectors_kernel_is_opencvs():
    bitmap = (RNG.random((50, 60)) > 0.9).astype(np.uint8)
    kernel = np.array([[1, 1], [1, 1]])
    assert np.array_equal(sub.dilate(bitmap, kernel), cv2.dilate(bitmap, kernel))


def test_perspective_crop_of_a_text_line_matches_opencv():
    img = cv2.GaussianBlur(RNG.integers(0, 256, (120, 200, 3), dtype=np.uint8), (9, 9), 3)
    src = np.array([[20, 30], [170, 38], [168, 70], [18, 62]], np.float32)
    dst = np.array([[0, 0], [150, 0], [150, 32], [0, 32]], np.float32)
    ours_m, theirs_m = sub.getPerspectiveTransform(src, dst), cv2.getPerspectiveTransform(src, dst)
    assert np.allclose(ours_m, theirs_m, atol=1e-6)
    assert np.allclose(sub.invert(ours_m)[1], cv2.invert(theirs_m)[1], atol=1e-6)
    kw = dict(borderMode=cv2.BORDER_REPLICATE, flags=cv2.INTER_CUBIC)
    ours = sub.warpPerspective(img, ours_m, (150, 32), **kw).astype(int)
    theirs = cv2.warpPerspective(img, theirs_m, (150, 32), **kw).astype(int)
    assert ours.shape == theirs.shape
    assert np.abs(ours - theirs).mean() < 3.0  # on 0-255: the two bicubic kernels differ a little


def test_colour_conversions_and_borders():
    bgra = RNG.integers(0, 256, (5, 6, 4), dtype=np.uint8)
    gray = bgra[:, :, 0]
    for code in ("COLOR_GRAY2BGR",):
        assert np.array_equal(sub.cvtColor(gray, getattr(sub, code)), cv2.cvtColor(gray, getattr(cv2, code)))
    assert np.array_equal(sub.cvtColor(bgra[:, :, :3], sub.COLOR_RGB2BGR), cv2.cvtColor(bgra[:, :, :3], cv2.COLOR_RGB2BGR))
    assert np.array_equal(sub.add(bgra, bgra), cv2.add(bgra, bgra))
    assert np.array_equal(sub.copyMakeBorder(gray, 1, 2, 3, 4, sub.BORDER_CONSTANT, value=(0, 0, 0)),
                          cv2.copyMakeBorder(gray, 1, 2, 3, 4, cv2.BORDER_CONSTANT, value=(0, 0, 0)))


@pytest.mark.skipif(ocr_unavailable() is not None, reason="rapidocr-onnxruntime not installed")
def test_a_scanned_page_is_read_without_opencv(tmp_path):
    """As in the bundle: a process where RapidOCR runs on the subset (SPAR_OPENCV=subset) reads a
    rendered page of text with its words, and never imports OpenCV."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=320, height=200)
    page.insert_textbox(pymupdf.Rect(15, 15, 305, 190), "Winter exclusion zone\naround turbine T05\n"
                        "Reported 6 April 2023 by site staff", fontsize=14)
    png = tmp_path / "scan.png"
    page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY).save(str(png))
    code = (
        "import json, sys, numpy as np\n"
        "from PIL import Image\n"
        "from spar_desktop.core.documents import ocr\n"
        f"gray = np.asarray(Image.open({str(png)!r}).convert('L'))\n"
        "text = ocr.ocr_pixels(gray)\n"
        "real = sys.modules.get('cv2')\n"
        "print(json.dumps({'text': text, 'engine': ocr.OCR_ENGINE_ID, 'cv2': getattr(real, '__name__', None)}))\n"
    )
    env = dict(os.environ, SPAR_OPENCV="subset", PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["cv2"] == "spar_desktop.core.documents.opencv_subset"
    assert out["engine"].endswith("-cvsubset")  # its pages are cached apart from OpenCV's
    words = {w.strip(".,").lower() for w in out["text"].split()}
    assert {"winter", "exclusion", "zone", "turbine", "april", "2023"} <= words, out["text"]
