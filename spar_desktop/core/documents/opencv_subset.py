"""The part of OpenCV's ``cv2`` API that RapidOCR 1.4 calls, on numpy, Pillow, SciPy and Pyclipper.

Why: RapidOCR declares OpenCV (150 MB even as the headless build: FFmpeg, OpenBLAS and every
module) but uses ~20 of its functions on the page path: colour conversions, resizes, one
perspective warp per text line, and the detector's post-processing (binary dilation, contours,
minimum-area rectangles, polygon fill). The desktop bundle ships without OpenCV and ``ocr.py``
installs this module as ``cv2`` when no OpenCV can be imported (or when SPAR_OPENCV=subset).
Everything it needs is in the bundle already (numpy, Pillow, SciPy; Pyclipper and Shapely come
with RapidOCR).

Fidelity, function by function (checked against OpenCV in tests/core/documents/test_opencv_subset.py;
OCR quality side by side in benchmarks/ocr_quality.py --opencv both):
- ``resize`` is OpenCV's bilinear (half-pixel centres, no antialiasing on shrink), not Pillow's
  antialiased filter, so the detector and recogniser see the images they were trained on;
- ``findContours`` returns the outer border of each 8-connected component (as RETR_EXTERNAL);
  RapidOCR only takes each contour's minimum-area rectangle, for which the row-wise extreme pixels
  of a component give the same convex hull. Hole borders (RETR_LIST) are not returned: a hole in a
  text line's probability map would only yield a duplicate box inside that line;
- ``warpPerspective`` samples with Pillow's bicubic filter (a = -0.5 where OpenCV uses -0.75) on
  an edge-replicated border.
Drawing (putText, polylines) is for RapidOCR's debug visualisation and is not provided.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__version__ = "0.0-spar-subset"

COLOR_GRAY2BGR, COLOR_RGB2BGR, COLOR_BGR2RGB, COLOR_BGRA2BGR, COLOR_BGR2GRAY, COLOR_RGBA2BGR = range(6)
RETR_EXTERNAL, RETR_LIST = 0, 1
CHAIN_APPROX_SIMPLE = 2
BORDER_CONSTANT, BORDER_REPLICATE = 0, 1
INTER_NEAREST, INTER_LINEAR, INTER_CUBIC = 0, 1, 2
ROTATE_90_CLOCKWISE, ROTATE_180, ROTATE_90_COUNTERCLOCKWISE = 0, 1, 2
IMREAD_COLOR = 1
FONT_HERSHEY_SIMPLEX = 0


# -- pixels ------------------------------------------------------------------------------------
def cvtColor(img: np.ndarray, code: int) -> np.ndarray:  # noqa: N802 - OpenCV's name
    if code == COLOR_GRAY2BGR:
        gray = img if img.ndim == 2 else img[:, :, 0]
        return np.repeat(gray[:, :, None], 3, axis=2)
    if code in (COLOR_RGB2BGR, COLOR_BGR2RGB):
        return np.ascontiguousarray(img[:, :, 2::-1])
    if code == COLOR_BGRA2BGR:
        return np.ascontiguousarray(img[:, :, :3])
    if code == COLOR_RGBA2BGR:
        return np.ascontiguousarray(img[:, :, 2::-1])
    if code == COLOR_BGR2GRAY:
        weights = np.array([0.114, 0.587, 0.299])
        return np.clip(np.rint(img[:, :, :3] @ weights), 0, 255).astype(img.dtype)
    raise NotImplementedError(f"cvtColor code {code} is not in SPAR's OpenCV subset")


def bitwise_not(img: np.ndarray) -> np.ndarray:
    return np.invert(img)


def bitwise_and(a: np.ndarray, b: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    out = np.bitwise_and(a, b)
    if mask is not None:
        keep = mask != 0
        out = np.where(keep[..., None] if out.ndim == 3 else keep, out, 0).astype(a.dtype)
    return out


def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Saturating, as OpenCV's is for 8-bit images."""
    if a.dtype == np.uint8:
        return np.clip(a.astype(np.int16) + b, 0, 255).astype(np.uint8)
    return a + b


def split(img: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(np.ascontiguousarray(img[:, :, i]) for i in range(img.shape[2]))


def merge(channels: Sequence[np.ndarray]) -> np.ndarray:
    return np.stack(list(channels), axis=2)


def copyMakeBorder(img: np.ndarray, top: int, bottom: int, left: int, right: int,  # noqa: N802
                   border_type: int, value: Any = 0) -> np.ndarray:
    pad = [(top, bottom), (left, right)] + [(0, 0)] * (img.ndim - 2)
    if border_type == BORDER_REPLICATE:
        return np.pad(img, pad, mode="edge")
    fill = value[0] if isinstance(value, (tuple, list)) else value
    return np.pad(img, pad, mode="constant", constant_values=fill)


def rotate(img: np.ndarray, code: int) -> np.ndarray:
    turns = {ROTATE_90_CLOCKWISE: -1, ROTATE_180: 2, ROTATE_90_COUNTERCLOCKWISE: 1}[code]
    return np.ascontiguousarray(np.rot90(img, turns))


def resize(img: np.ndarray, dsize: tuple[int, int], fx: float = 0, fy: float = 0,
           interpolation: int = INTER_LINEAR) -> np.ndarray:
    """Bilinear on half-pixel centres, edge-clamped, no antialiasing: OpenCV's INTER_LINEAR."""
    w, h = int(dsize[0]), int(dsize[1])
    src_h, src_w = img.shape[:2]
    if w <= 0 or h <= 0:
        raise ValueError(f"resize to {w}x{h}")
    y0, y1, fy_ = _linear_taps(src_h, h)
    x0, x1, fx_ = _linear_taps(src_w, w)
    data = img.astype(np.float32)
    if data.ndim == 3:
        fx_ = fx_[:, None]
    top = data[y0][:, x0] * (1 - fx_) + data[y0][:, x1] * fx_
    bottom = data[y1][:, x0] * (1 - fx_) + data[y1][:, x1] * fx_
    wy = fy_[:, None, None] if data.ndim == 3 else fy_[:, None]
    out = top * (1 - wy) + bottom * wy
    if img.dtype == np.uint8:
        return np.clip(np.rint(out), 0, 255).astype(np.uint8)
    return out.astype(img.dtype)


def _linear_taps(src: int, dst: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pos = (np.arange(dst, dtype=np.float64) + 0.5) * (src / dst) - 0.5
    pos = np.clip(pos, 0, src - 1)
    lo = np.floor(pos).astype(np.intp)
    hi = np.minimum(lo + 1, src - 1)
    return lo, hi, (pos - lo).astype(np.float32)


def dilate(img: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Grey dilation by a rectangular kernel anchored at its centre, as OpenCV's default."""
    kh, kw = np.asarray(kernel).shape
    ay, ax = kh // 2, kw // 2
    padded = np.pad(img, ((ay, kh - 1 - ay), (ax, kw - 1 - ax)), mode="constant")
    out = np.zeros_like(img)
    for dy in range(kh):
        for dx in range(kw):
            if kernel[dy][dx]:
                np.maximum(out, padded[dy:dy + img.shape[0], dx:dx + img.shape[1]], out=out)
    return out


def mean(img: np.ndarray, mask: np.ndarray | None = None) -> tuple[float, float, float, float]:
    data = img if mask is None else img[mask != 0]
    if data.size == 0:
        return (0.0, 0.0, 0.0, 0.0)
    if data.ndim >= 2 and img.ndim == 3:
        channels = [float(c) for c in data.reshape(-1, img.shape[2]).mean(axis=0)]
    else:
        channels = [float(data.mean())]
    return tuple((channels + [0.0, 0.0, 0.0])[:4])  # type: ignore[return-value]


def fillPoly(img: np.ndarray, pts: Any, color: Any) -> np.ndarray:  # noqa: N802
    """Fills the polygons in place (edges included, as OpenCV does) and returns the image."""
    from PIL import Image, ImageDraw

    canvas = Image.new("1", (img.shape[1], img.shape[0]), 0)
    draw = ImageDraw.Draw(canvas)
    for poly in pts:
        xy = [tuple(map(float, p)) for p in np.asarray(poly).reshape(-1, 2)]
        if len(xy) >= 2:
            draw.polygon(xy, fill=1)
            draw.line(xy + xy[:1], fill=1)  # edges included, as OpenCV's fill has them
    inside = np.asarray(canvas, dtype=bool)
    img[inside] = color[0] if isinstance(color, (tuple, list)) else color
    return img


# -- geometry ----------------------------------------------------------------------------------
def findContours(img: np.ndarray, mode: int, method: int) -> tuple[list[np.ndarray], None]:  # noqa: N802
    """Per 8-connected component, its row-wise extreme pixels as an (N, 1, 2) int32 (x, y) array."""
    from scipy import ndimage

    labels, count = ndimage.label(img != 0, structure=np.ones((3, 3), dtype=bool))
    contours = []
    for index, window in enumerate(ndimage.find_objects(labels), start=1):
        if window is None:
            continue
        part = labels[window] == index
        rows = np.flatnonzero(part.any(axis=1))
        left = part[rows].argmax(axis=1)
        right = part.shape[1] - 1 - part[rows, ::-1].argmax(axis=1)
        ys = np.concatenate([rows, rows[::-1]]) + window[0].start
        xs = np.concatenate([left, right[::-1]]) + window[1].start
        contours.append(np.stack([xs, ys], axis=1).astype(np.int32).reshape(-1, 1, 2))
    return contours, None


def _hull(points: np.ndarray) -> np.ndarray:
    """Convex hull (Andrew's monotone chain) of (N, 2) points, counter-clockwise."""
    pts = np.unique(points.astype(np.float64), axis=0)
    if len(pts) <= 2:
        return pts
    def half(seq: np.ndarray) -> list:
        out: list = []
        for p in seq:
            while len(out) >= 2 and (out[-1][0] - out[-2][0]) * (p[1] - out[-2][1]) - \
                    (out[-1][1] - out[-2][1]) * (p[0] - out[-2][0]) <= 0:
                out.pop()
            out.append(p)
        return out
    lower, upper = half(pts), half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1])


def minAreaRect(points: Any) -> tuple[tuple[float, float], tuple[float, float], float]:  # noqa: N802
    """((cx, cy), (w, h), angle°) of the smallest rectangle around the points (rotating calipers),
    in the convention ``boxPoints`` reads: w along (cos a, sin a), h along (-sin a, cos a)."""
    hull = _hull(np.asarray(points, dtype=np.float64).reshape(-1, 2))
    if len(hull) == 1:
        return (float(hull[0][0]), float(hull[0][1])), (0.0, 0.0), 0.0
    edges = np.roll(hull, -1, axis=0) - hull
    angles = np.unique(np.mod(np.arctan2(edges[:, 1], edges[:, 0]), np.pi / 2))
    u = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    v = np.stack([-np.sin(angles), np.cos(angles)], axis=1)
    pu, pv = u @ hull.T, v @ hull.T
    widths, heights = np.ptp(pu, axis=1), np.ptp(pv, axis=1)
    best = int(np.argmin(widths * heights))
    mid_u = (pu[best].max() + pu[best].min()) / 2
    mid_v = (pv[best].max() + pv[best].min()) / 2
    centre = u[best] * mid_u + v[best] * mid_v
    return ((float(centre[0]), float(centre[1])), (float(widths[best]), float(heights[best])),
            float(np.degrees(angles[best])))


def boxPoints(box: tuple) -> np.ndarray:  # noqa: N802
    (cx, cy), (w, h), angle = box
    a, b = np.sin(np.radians(angle)) * 0.5, np.cos(np.radians(angle)) * 0.5
    p0 = (cx - a * h - b * w, cy + b * h - a * w)
    p1 = (cx + a * h - b * w, cy - b * h - a * w)
    return np.array([p0, p1, (2 * cx - p0[0], 2 * cy - p0[1]), (2 * cx - p1[0], 2 * cy - p1[1])],
                    dtype=np.float32)


def getPerspectiveTransform(src: Any, dst: Any) -> np.ndarray:  # noqa: N802
    """The 3x3 homography taking the four ``src`` points onto the four ``dst`` points."""
    s, d = np.asarray(src, dtype=np.float64).reshape(4, 2), np.asarray(dst, dtype=np.float64).reshape(4, 2)
    rows, rhs = [], []
    for (x, y), (u, v) in zip(s, d):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        rhs += [u, v]
    h = np.linalg.solve(np.array(rows), np.array(rhs))
    return np.append(h, 1.0).reshape(3, 3)


def invert(matrix: np.ndarray) -> tuple[float, np.ndarray]:
    return 1.0, np.linalg.inv(matrix)


def warpPerspective(img: np.ndarray, matrix: np.ndarray, dsize: tuple[int, int],  # noqa: N802
                    flags: int = INTER_LINEAR, borderMode: int = BORDER_CONSTANT) -> np.ndarray:  # noqa: N803
    """Pillow's perspective transform (bicubic for INTER_CUBIC) on a replicated border."""
    from PIL import Image

    pad = 4 if borderMode == BORDER_REPLICATE else 0
    source = np.pad(img, [(pad, pad), (pad, pad)] + [(0, 0)] * (img.ndim - 2), mode="edge") if pad else img
    # Pillow maps output to input: the inverse homography, shifted into the padded image.
    inverse = np.array([[1, 0, pad], [0, 1, pad], [0, 0, 1]], dtype=np.float64) @ np.linalg.inv(matrix)
    inverse /= inverse[2, 2]
    resample = {INTER_CUBIC: Image.BICUBIC, INTER_NEAREST: Image.NEAREST}.get(flags, Image.BILINEAR)
    picture = Image.fromarray(np.ascontiguousarray(source))
    out = picture.transform((int(dsize[0]), int(dsize[1])), Image.PERSPECTIVE, tuple(inverse.flatten()[:8]),
                            resample=resample)
    return np.asarray(out)


# -- files -------------------------------------------------------------------------------------
def imread(path: str, flags: int = IMREAD_COLOR) -> np.ndarray | None:
    from PIL import Image

    try:
        with Image.open(path) as picture:
            return cvtColor(np.asarray(picture.convert("RGB")), COLOR_RGB2BGR)
    except OSError:
        return None


def imwrite(path: str, img: np.ndarray) -> bool:
    from PIL import Image

    Image.fromarray(cvtColor(img, COLOR_BGR2RGB) if img.ndim == 3 else img).save(path)
    return True
