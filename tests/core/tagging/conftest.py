"""A small real share whose right tags are known: folders whose files vote for their folder, loose
files at the top of the share that belong to one of them, and a real index and encoder."""

from __future__ import annotations

from pathlib import Path

import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner

NOTES = {
    "Turbines/gearbox.md": "# Gearbox failure\n\nThe gearbox bearing of turbine four failed after oil contamination. "
                           "Vibration alarms preceded the failure by two weeks.",
    "Turbines/blade.md": "# Blade survey\n\nA leading edge erosion survey found cracks on the rotor blades of "
                         "turbine two. Repair by resin filling is planned.",
    "Turbines/yaw.md": "# Yaw system\n\nTurbine seven tripped because the yaw motor overheated. The yaw brake "
                       "pads were worn and replaced by the maintenance crew.",
    "Turbines/generator.md": "# Generator inspection\n\nThe generator windings of the wind turbine were "
                             "inspected; insulation resistance was within limits.",
    "Finance/budget.md": "# Budget\n\nThe capital budget for next year is 1.2 million pounds, with operating "
                         "expenses cut by five percent.",
    "Finance/invoices.md": "# Invoices\n\nUnpaid supplier invoices are listed with their amounts and due dates "
                           "for the accounts payable team.",
    "Finance/payroll.md": "# Payroll\n\nSalaries and tax deductions for all employees are paid on the last "
                          "working day of each month.",
    "Finance/audit.md": "# Audit\n\nThe external auditors reviewed the balance sheet and the profit and loss "
                        "account and found no material misstatement.",
    # Loose files: no folder of their own; the right folder is known.
    "oil-change.md": "Maintenance log: the turbine gearbox oil was changed and the bearing vibration dropped "
                     "back to normal levels.",
    "spending.md": "Quarterly spending report: costs exceeded the budget, so expenses and supplier payments "
                   "must be reduced.",
}
RIGHT_FOLDER = {"oil-change.md": "Turbines", "spending.md": "Finance"}


def write_share(root: Path, notes: dict[str, str] = NOTES) -> Path:
    for rel, text in notes.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def encoder():
    from spar_desktop.core.embedding.encoder import get_encoder

    return get_encoder("cpu")


@pytest.fixture
def env(tmp_path: Path):
    """(library, settings, share): the NOTES share scanned into a fresh index."""
    share = write_share(tmp_path / "share")
    settings = load_settings(tmp_path / "data")
    lib = Library.open(settings)
    Scanner(lib).scan([str(share)])
    yield lib, settings, share
    lib.close()


def file_id(lib: Library, path: Path) -> int:
    from sqlalchemy import select

    from spar_desktop.core.library.models import File

    with lib.session() as s:
        return s.scalar(select(File.id).where(File.path == str(path)))
