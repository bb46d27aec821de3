"""What an OLE compound file (the Office 97–2003 container) really holds.

Files on old shares are often misnamed: an .xlsx that is an old .xls, a .doc that is a workbook,
or a password-protected DOCX/XLSX/PPTX (which Office stores inside OLE). The sheet, slide and
legacy readers ask here first so they can read the file as what it is, or say why they cannot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_WORD_ENCRYPTED = 0x0100  # FIB flags word at offset 10: fEncrypted
_PPT_ENCRYPTED_TOKEN = b"\xdf\xc4\xd1\xf3"  # CurrentUserAtom.headerToken of an encrypted deck


def ole_kind(path: Path) -> Optional[str]:
    """What an OLE compound file holds: 'encrypted' (a password-protected DOCX/XLSX/PPTX),
    'doc', 'xls', 'ppt', 'ole' (something else, or damaged); None when it is not OLE at all."""
    with open(path, "rb") as f:
        if f.read(8) != OLE_MAGIC:
            return None
    import olefile  # lazy: only OLE files need it

    try:
        with olefile.OleFileIO(str(path)) as ole:
            for stream, kind in (("EncryptionInfo", "encrypted"), ("WordDocument", "doc"),
                                 ("Workbook", "xls"), ("Book", "xls"), ("PowerPoint Document", "ppt")):
                if ole.exists(stream):
                    return kind
    except Exception:  # olefile raises bare OSError/struct errors on damaged directories
        return "ole"
    return "ole"


def legacy_encrypted(path: Path, kind: str) -> bool:
    """Whether a 'doc' or 'ppt' OLE file (``kind``) is password-protected; False when damaged."""
    import olefile  # lazy: only OLE files need it

    try:
        with olefile.OleFileIO(str(path)) as ole:
            if kind == "doc":
                fib = ole.openstream("WordDocument").read(12)
                return len(fib) == 12 and bool(int.from_bytes(fib[10:12], "little") & _WORD_ENCRYPTED)
            return ole.openstream("Current User").read(16)[12:16] == _PPT_ENCRYPTED_TOKEN
    except Exception:
        return False  # damaged: the converter will say so
