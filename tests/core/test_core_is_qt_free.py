"""The core must import and work without Qt: every core module imports with PySide6 blocked."""

import pkgutil
import subprocess
import sys

import spar_desktop.core


def test_every_core_module_imports_with_qt_blocked():
    modules = [m.name for m in pkgutil.walk_packages(spar_desktop.core.__path__, "spar_desktop.core.")]
    assert len(modules) > 5
    code = (
        "import sys, importlib\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('PySide6', 'qasync', 'pyqtgraph', 'shiboken6'):\n"
        "            raise ImportError('Qt is blocked in the core: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "print('ok', len(sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok")


def test_import_linter_contract_holds():
    # In a child process: import-linter calls logging.config.dictConfig, which disables every
    # logger already created in this process (the app's crash logger among them).
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports())"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
