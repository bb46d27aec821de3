"""Nothing leaves the machine: `spar index`, `spar ws create/build`, `spar ws search` and `spar ask`
(no Ollama running) over a share with a PDF, a spreadsheet, a zip, a mail and a scanned image, each
run as a user runs it, in its own process, with an audit hook (sys.addaudithook) recording:

- every outbound connection and every name resolution (socket.connect / sendto / sendmsg,
  getaddrinfo, gethostbyname*, gethostbyaddr, getnameinfo): only loopback and unix sockets may
  appear, so Chroma's telemetry, the Hugging Face hub or RapidOCR fetching models would fail it;
- every write from Python (open for writing, mkdir, rename/replace, remove, utime, ...): only under
  the data dir, the system temp dir and /dev;
- ONNX Runtime: its telemetry variables when it is imported, and for every InferenceSession (the
  encoder's and RapidOCR's) whether its telemetry events were switched off before it was created.

HOME, XDG_* and the working directory are empty folders that must stay empty, and the share's
bytes and times must not change. The app's own defaults are what is tested: the suite's offline
and telemetry variables (tests/conftest.py) are not passed on, nor is the shared model cache.

Out of reach of the hook: connections made from native code (Chroma's Rust core, ONNX Runtime's
C++), which no Python audit event sees; the empty HOME/XDG folders and the unchanged share still
catch files written from there.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import warnings
import zipfile
from email.message import EmailMessage
from pathlib import Path
from typing import Optional

# Runs in the child: `python -c BOOTSTRAP LOG ARGV_JSON`. The hook only records; the test judges.
BOOTSTRAP = r'''
import importlib.machinery, json, os, sys

_log = open(sys.argv[1], "a", encoding="utf-8", buffering=1)
_argv = json.loads(sys.argv[2])


def _rec(kind, **fields):
    _log.write(json.dumps({"kind": kind, "cmd": _argv[2] if len(_argv) > 2 else "", **fields}, default=repr) + "\n")


def _path(p, dir_fd=None):
    if isinstance(p, int):
        return None  # an already open descriptor
    try:
        p = os.fsdecode(os.fspath(p))
    except TypeError:
        return repr(p)
    if isinstance(dir_fd, int) and not os.path.isabs(p):  # shutil.rmtree and friends work by dir_fd
        try:
            return os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), p)
        except OSError:
            return f"<dir_fd {dir_fd}>/{p}"
    return os.path.abspath(p)


_NET_SOCK = {"socket.connect", "socket.sendto", "socket.sendmsg"}
_NET_NAME = {"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
             "socket.gethostbyaddr", "socket.getnameinfo"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
# event: ((index of a path argument, index of its dir_fd argument or None), ...)
_FS = {"os.mkdir": ((0, 2),), "os.rename": ((0, 2), (1, 3)), "os.replace": ((0, 2), (1, 3)),
       "os.remove": ((0, 1),), "os.rmdir": ((0, 1),), "os.symlink": ((1, 2),), "os.link": ((1, 3),),
       "os.truncate": ((0, None),), "os.chmod": ((0, 2),), "os.chown": ((0, 3),), "os.utime": ((0, 3),),
       "shutil.rmtree": ((0, None),), "shutil.copyfile": ((1, None),), "shutil.move": ((0, None), (1, None))}


def _hook(event, args):
    if event in _NET_SOCK:
        sock, address = args[0], args[1]
        if address is not None:
            _rec("connect", event=event, family=int(getattr(sock, "family", -1)), address=address)
    elif event in _NET_NAME:
        _rec("resolve", event=event, host=args[0], port=args[1] if len(args) > 1 else None)
    elif event == "open":
        path, mode, flags = args
        writes = (mode is not None and any(c in str(mode) for c in "wax+")) or bool((flags or 0) & _WRITE_FLAGS)
        if writes and _path(path) is not None:
            _rec("write", event=event, path=_path(path))
    elif event in _FS:
        for i, fd in _FS[event]:
            path = _path(args[i], args[fd] if fd is not None and fd < len(args) else None) if i < len(args) else None
            if path is not None:
                _rec("write", event=event, path=path)


sys.addaudithook(_hook)

# ONNX Runtime: how telemetry stands when it is imported and when each session is created.
_ORT_VARS = ("ORT_DISABLE_TELEMETRY", "ORT_TELEMETRY_DISABLED")
_ort = {"events_off": False}


class _WatchOnnxRuntime:
    def find_spec(self, name, path=None, target=None):
        if name != "onnxruntime":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            _rec("ort.import", env={k: os.environ.get(k) for k in _ORT_VARS})
            run(module)
            if hasattr(module, "disable_telemetry_events"):
                off = module.disable_telemetry_events

                def disable_telemetry_events():
                    _ort["events_off"] = True
                    return off()

                module.disable_telemetry_events = disable_telemetry_events
            init = module.InferenceSession.__init__

            def __init__(self, path_or_bytes, *a, **k):
                model = os.fsdecode(path_or_bytes) if isinstance(path_or_bytes, (str, bytes, os.PathLike)) \
                    and not isinstance(path_or_bytes, bytes) else "<bytes>"
                _rec("ort.session", model=model, events_off=_ort["events_off"],
                     env={k_: os.environ.get(k_) for k_ in _ORT_VARS})
                init(self, path_or_bytes, *a, **k)

            module.InferenceSession.__init__ = __init__

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _WatchOnnxRuntime())

from spar_desktop.cli import main

sys.exit(main(_argv))
'''

# Variables of the suite (tests/conftest.py) or of the developer's shell that would hide the app's
# own defaults, or point it elsewhere.
SCRUBBED = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "ANONYMIZED_TELEMETRY", "ORT_DISABLE_TELEMETRY",
            "ORT_TELEMETRY_DISABLED", "SPAR_MODEL_CACHE", "SPAR_DATA_DIR", "SPAR_DATABASE_URL", "SPAR_CHROMA_URL",
            "SPAR_CHROMA_PROCESS", "HF_HOME", "HF_HUB_CACHE", "TRANSFORMERS_CACHE", "SENTENCE_TRANSFORMERS_HOME",
            "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "PYTHONSTARTUP", "TMPDIR", "TEMP", "TMP")

OCR_WORDS = "Turbine seven anemometer calibration overdue"


def strace() -> Optional[list[str]]:
    """strace, when it is installed and may trace here: it also sees the connections native code
    makes (Chroma's Rust core, ONNX Runtime's C++), which the audit hook cannot."""
    exe = shutil.which("strace")
    if not exe:
        return None
    cmd = [exe, "-f", "-qq", "--seccomp-bpf", "-s", "0", "-e", "trace=connect,sendto,sendmsg"]
    probe = subprocess.run([*cmd, "-o", os.devnull, "true"], capture_output=True, timeout=30)
    return cmd if probe.returncode == 0 else None


def native_outbound(trace: str) -> list[str]:
    """The traced calls whose address is neither a local socket nor loopback."""
    bad = []
    for line in trace.splitlines():
        family = re.search(r"sa_family=(AF_\w+)", line)
        if not family or family[1] in ("AF_UNIX", "AF_LOCAL", "AF_NETLINK"):
            continue  # no address (a connected socket), or a local one
        addr = re.search(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"', line)
        try:
            if addr and ipaddress.ip_address(addr[1] or addr[2]).is_loopback:
                continue
        except ValueError:
            pass
        bad.append(line.strip())
    return bad


def closed_port() -> int:
    import socket

    with socket.socket() as s:  # bound, never listening: nothing answers once it is closed
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_share(root: Path) -> None:
    import openpyxl
    import pymupdf

    root.mkdir(parents=True)
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Gearbox failure at Site B: oil contamination of the bearing.", fontsize=12)
    doc.save(root / "gearbox-report.pdf")
    doc.close()

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Project", "Budget"])
    ws.append(["Falcon", "1.25 million pounds"])
    wb.save(root / "budgets.xlsx")

    with zipfile.ZipFile(root / "archive.zip", "w") as zf:
        zf.writestr("old/blade.txt", "Blade crack found during inspection at Site A; resin repair planned.")

    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "ops@example.com", "site-b@example.com", "Crane booking"
    mail["Date"] = "Mon, 01 May 2023 09:00:00 +0000"
    mail.set_content("The crane for the nacelle lift is booked for Tuesday at Site B.")
    (root / "crane.eml").write_bytes(bytes(mail))

    page = pymupdf.open()  # text rendered to pixels: only OCR can read it
    p = page.new_page(width=500, height=120)
    p.insert_text((20, 70), OCR_WORDS, fontsize=22)
    p.get_pixmap(dpi=150).save(str(root / "scan.png"))
    page.close()


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))
            if p.is_file()}


def contents(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def is_loopback_address(family: int, address) -> bool:
    import socket

    if family == socket.AF_UNIX or isinstance(address, (str, bytes)):
        return True  # a path (or abstract name) on this machine
    try:
        return ipaddress.ip_address(str(address[0]).split("%")[0]).is_loopback
    except ValueError:
        return False  # a host name in a connect() call: it was resolved somewhere


def is_loopback_name(host) -> bool:
    if host in (None, "", b""):
        return True  # getaddrinfo(None, port): this machine's own addresses
    host = os.fsdecode(host) if isinstance(host, bytes) else str(host)
    if host.lower().rstrip(".") in ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0]).is_loopback
    except ValueError:
        return False


def test_nothing_leaves_the_machine(tmp_path):
    share, data, log = tmp_path / "share", tmp_path / "data", tmp_path / "audit.jsonl"
    home, cache, xdg_data, xdg_config, cwd, tmp = (tmp_path / n for n in ("home", "xdg-cache", "xdg-data",
                                                                           "xdg-config", "cwd", "tmp"))
    for d in (home, cache, xdg_data, xdg_config, cwd, tmp):
        d.mkdir()
    make_share(share)
    before = snapshot(share)
    ollama = f"http://127.0.0.1:{closed_port()}"

    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(cache), XDG_DATA_HOME=str(xdg_data),
               XDG_CONFIG_HOME=str(xdg_config), TMPDIR=str(tmp), OLLAMA_HOST=ollama,
               PYTHONPATH=os.pathsep.join(p for p in [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH")] if p))

    tracer = strace()
    if tracer is None:
        warnings.warn("strace is missing or may not trace here: connections from native code are not checked")
    traces: list[Path] = []

    def spar(*args: str) -> str:
        argv = ["--data-dir", str(data), *args]
        wrap: list[str] = []
        if tracer:
            traces.append(tmp_path / f"strace-{len(traces)}.txt")
            wrap = [*tracer, "-o", str(traces[-1])]
        run = subprocess.run([*wrap, sys.executable, "-c", BOOTSTRAP, str(log), json.dumps(argv)], cwd=cwd, env=env,
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, f"spar {' '.join(args)} exited {run.returncode}:\n{run.stdout}\n{run.stderr}"
        return run.stdout

    spar("index", str(share), "--quiet")
    spar("ws", "create", "everything", "--all-files")
    built = json.loads(spar("ws", "build", "everything", "--json"))
    assert built["embedded_chunks"] >= 5, built
    hits = json.loads(spar("ws", "search", "everything", "anemometer calibration", "--json"))["hits"]
    assert hits and hits[0]["path"].endswith("scan.png"), hits  # OCR ran on the image
    assert "No language model is available" in spar("ask", "everything", "Why did the gearbox fail?")

    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert {r["cmd"] for r in records} >= {"index", "ws", "ask"}, "the audit hook recorded nothing"

    # 1. Only loopback (the Ollama host on its closed port, Chroma's and asyncio's local plumbing).
    outbound = [r for r in records if r["kind"] == "connect" and not is_loopback_address(r["family"], r["address"])]
    resolved = [r for r in records if r["kind"] == "resolve" and not is_loopback_name(r["host"])]
    assert not outbound and not resolved, json.dumps(outbound + resolved, indent=1)
    native = [line for t in traces for line in native_outbound(t.read_text(encoding="utf-8", errors="replace"))]
    assert not native, "\n".join(native)
    port = int(ollama.rsplit(":", 1)[1])
    assert any(r["kind"] == "connect" and r["cmd"] == "ask" and list(r["address"])[:2] == ["127.0.0.1", port]
               for r in records), "spar ask did not look for Ollama where OLLAMA_HOST says: the hook saw nothing"

    # 2. Written only under the data dir, the temp dir and /dev; HOME, XDG and cwd stay empty.
    allowed = [os.path.realpath(p) + os.sep for p in (data, tmp, "/dev")]
    stray = sorted({r["path"] for r in records if r["kind"] == "write"
                    if not (os.path.realpath(r["path"]) + os.sep).startswith(tuple(allowed))})
    assert not stray, stray
    assert {str(d.name): contents(d) for d in (home, cache, xdg_data, xdg_config, cwd)} == {
        "home": [], "xdg-cache": [], "xdg-data": [], "xdg-config": [], "cwd": []}
    assert snapshot(share) == before, "the share was changed"

    # 3. ONNX Runtime: ORT_DISABLE_TELEMETRY set before it initialises (without it, it writes a
    # device id under ~/.cache/Microsoft and queues events for its collector), and for our own
    # sessions (encoder, RapidOCR) disable_telemetry_events() called first as well. pymupdf's
    # layout models (pymupdf-layout, loaded by `import pymupdf`) get only the variable.
    imports = [r for r in records if r["kind"] == "ort.import"]
    assert imports and all("1" in r["env"].values() for r in imports), imports
    sessions = [r for r in records if r["kind"] == "ort.session"]
    assert all("1" in r["env"].values() for r in sessions), sessions
    ours = [r for r in sessions if "minilm" in r["model"] or "rapidocr_onnxruntime" in r["model"]]
    assert all(r["events_off"] for r in ours), ours
    models = [r["model"] for r in ours]
    assert any("minilm" in m for m in models), models  # the encoder's graph
    assert any("rapidocr_onnxruntime" in m for m in models), models  # RapidOCR's detector/recogniser
