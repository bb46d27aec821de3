"""Where the app's bundled files are: the sample corpus, the icon and THIRD_PARTY_LICENSES.

The repository keeps them in ``resources/`` at its top level; a wheel carries the same folder as
package data ``spar_desktop/_resources`` (pyproject.toml maps ``resources/`` onto the package
``spar_desktop._resources``), and the PyInstaller bundle collects that package data. Lookup
order, first hit wins:

1. ``$SPAR_RESOURCES`` — an explicit folder (older installs from ``install_linux.sh`` set it);
2. the source checkout's ``resources/`` (next to ``pyproject.toml``: editable installs, tests);
3. the installed package data, through ``importlib.resources`` (wheel, frozen bundle).

Nothing here imports Qt: the core (sample import, ``spar sample``) uses it too.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import os
import sys
from pathlib import Path
from typing import Iterator, Optional

ENV = "SPAR_RESOURCES"
PACKAGE = "spar_desktop._resources"
ICON = ("icons", "spar-desktop.png")
LICENSES_FILE = "THIRD_PARTY_LICENSES"


def _package_root() -> Path:
    import spar_desktop

    return Path(spar_desktop.__file__).resolve().parent


def checkout_root() -> Optional[Path]:
    """The source checkout holding this package, if it is one (pyproject.toml beside it)."""
    root = _package_root().parent
    return root if (root / "pyproject.toml").is_file() else None


def _as_dir(ref: object) -> Optional[Path]:
    # Wheels and PyInstaller bundles install package data as real files, so the Traversable is a
    # pathlib.Path; anything else (a zip import) is not supported for a folder of documents.
    return ref if isinstance(ref, Path) and ref.is_dir() else None


def package_resources() -> Optional[Path]:
    """``spar_desktop/_resources`` as installed from a wheel or collected into a bundle."""
    try:
        found = _as_dir(importlib.resources.files("spar_desktop").joinpath("_resources"))
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - spar_desktop is always importable
        found = None
    if found is not None:
        return found
    # An editable install maps the package onto the checkout's resources/ through its finder.
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ModuleNotFoundError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        if Path(location).is_dir():
            return Path(location)
    return None


def candidates() -> Iterator[Path]:
    """Every resources folder that exists, in lookup order (duplicates removed)."""
    seen: set[Path] = set()
    env = os.environ.get(ENV)
    root = checkout_root()
    for c in (Path(env).expanduser() if env else None,
              root / "resources" if root is not None else None,
              package_resources()):
        if c is not None and c.is_dir() and c.resolve() not in seen:
            seen.add(c.resolve())
            yield c


def resources_dir() -> Optional[Path]:
    """The first resources folder found (see the module docstring), else None."""
    return next(candidates(), None)


def resource_path(*parts: str) -> Optional[Path]:
    """The first existing ``<resources>/<parts...>`` over every resources folder, else None."""
    for base in candidates():
        p = base.joinpath(*parts)
        if p.exists():
            return p
    return None


def icon_path() -> Optional[Path]:
    """The app icon (256 x 256 PNG)."""
    return resource_path(*ICON)


def third_party_licenses_path() -> Optional[Path]:
    """THIRD_PARTY_LICENSES: the checkout's top-level file, else the copy shipped in the package
    (wheel, bundle), else one beside a frozen executable."""
    root = checkout_root()
    places = [root / LICENSES_FILE] if root is not None else []
    places.append(_package_root() / LICENSES_FILE)
    if getattr(sys, "frozen", False):
        places.append(Path(sys.executable).resolve().parent / LICENSES_FILE)
    return next((p for p in places if p.is_file()), None)
