"""`spar ask` and `spar thread` as a user runs them, against the scripted Ollama server (real
client, real HTTP) and against no server at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spar_desktop import cli
from tests.support.fake_ollama import FakeOllama
from tests.support.servers import free_port

CHAT_COMMANDS = ["spar_desktop.commands.ask_cmd", "spar_desktop.commands.thread_cmd"]


@pytest.fixture(autouse=True)
def chat_commands(monkeypatch):
    # The commands are registered in cli.COMMAND_MODULES; this keeps the test meaningful either way.
    monkeypatch.setattr(cli, "COMMAND_MODULES", cli.COMMAND_MODULES + [m for m in CHAT_COMMANDS
                                                                       if m not in cli.COMMAND_MODULES])


@pytest.fixture
def fake_ollama(monkeypatch):
    server = FakeOllama().start()
    monkeypatch.setenv("OLLAMA_HOST", server.url)  # as users point the ollama tools at a server
    yield server
    server.stop()


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = cli.main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def data(tmp_path, capsys):
    share, data = tmp_path / "share", tmp_path / "data"
    for rel, text in {
        "Operations/gearbox.md": "Gearbox failure at Site B: oil contamination of the bearing.",
        "Operations/blade.md": "Blade crack found during inspection at Site A; resin repair planned.",
        "Finance/budget.md": "Falcon project budget: 1.25 million pounds.",
    }.items():
        (share / rel).parent.mkdir(parents=True, exist_ok=True)
        (share / rel).write_text(text, encoding="utf-8")
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0
    code, out, err = spar(capsys, data, "ws", "create", "ops", "--tag", "Operations", "--build")
    assert code == 0, err
    return data


def test_ask_streams_a_cited_answer_and_threads_continue(data, capsys, fake_ollama):
    fake_ollama.set(reply="The bearing failed from oil contamination [1]. Unrelated claim [5].")
    code, out, err = spar(capsys, data, "ask", "ops", "Why did the gearbox fail?", "--k", "2")
    assert code == 0, err
    assert out.startswith("The bearing failed from oil contamination [1]. Unrelated claim [5].\n")
    assert "Sources:\n[1] gearbox.md, p. 1 — " in out and "[5] ! cites no passage (only 1-2 were given)" in out
    assert "thread 1 · llama3.2" in err and "--thread 1" in err
    prompt = fake_ollama.calls("/api/chat")[-1].body["messages"][-1]["content"]
    assert "[1] gearbox.md, p. 1" in prompt and "budget" not in prompt

    fake_ollama.set(reply="At Site B [1].")
    code, out, err = spar(capsys, data, "ask", "ops", "Where?", "--thread", "1", "--json")
    result = json.loads(out)
    assert code == 0 and result["thread_id"] == 1 and result["text"] == "At Site B [1]." and result["mode"] == "llm"
    assert [m["role"] for m in fake_ollama.calls("/api/chat")[-1].body["messages"]] == ["system", "user", "assistant", "user"]

    code, out, _ = spar(capsys, data, "thread", "list", "ops")
    assert code == 0 and "Why did the gearbox fail?" in out and "4 msgs" in out
    assert spar(capsys, data, "thread", "rename", "1", "Gearbox")[0] == 0
    md = data.parent / "gearbox.md"
    assert spar(capsys, data, "thread", "export", "1", "--out", str(md))[0] == 0
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# Gearbox") and "### Sources" in text and "**gearbox.md**, p. 1" in text
    code, out, _ = spar(capsys, data, "thread", "show", "1", "--json")
    assert [m["role"] for m in json.loads(out)["messages"]] == ["user", "assistant", "user", "assistant"]
    assert spar(capsys, data, "thread", "delete", "1")[0] == 0
    code, _, err = spar(capsys, data, "thread", "show", "1")
    assert code == 1 and "no thread 1" in err


def test_ask_failures_are_clear_and_keep_the_thread(data, capsys, fake_ollama):
    code, _, err = spar(capsys, data, "ask", "ops", "Why did the gearbox fail?", "--model", "mistral")
    assert code == 1 and "'mistral' is not installed" in err and "ollama pull mistral" in err
    assert "Installed: llama3.2:latest, qwen2.5:0.5b" in err and "Traceback" not in err

    fake_ollama.set(reply="one two three four", failure="stall", after=2, stall=10)
    code, out, err = spar(capsys, data, "ask", "ops", "Why?", "--thread", "bearing", "--timeout", "0.5")
    assert code == 1 and out.startswith("one two") and "sent nothing for 0.5 s" in err
    fake_ollama.set(reply="one two three four", failure="drop", after=1)
    code, out, err = spar(capsys, data, "ask", "ops", "Why?", "--thread", "bearing")
    assert code == 1 and "lost mid-answer" in err
    fake_ollama.set(reply="Oil [1].")
    code, out, _ = spar(capsys, data, "ask", "ops", "Why?", "--thread", "bearing")
    assert code == 0 and out.startswith("Oil [1].")
    code, out, _ = spar(capsys, data, "thread", "show", "2", "--json")
    statuses = [(m["role"], m["status"]) for m in json.loads(out)["messages"]]
    assert statuses == [("user", "ok"), ("assistant", "error"), ("user", "ok"), ("assistant", "error"),
                        ("user", "ok"), ("assistant", "ok")]

    code, _, err = spar(capsys, data, "ask", "nope", "x")
    assert code == 1 and "no workspace named 'nope'" in err
    code, _, err = spar(capsys, data, "ask", "ops", "x", "--thread", "99")
    assert code == 1 and "no thread 99" in err
    assert spar(capsys, data, "ws", "archive", "ops")[0] == 0
    code, _, err = spar(capsys, data, "ask", "ops", "Why?", "--thread", "bearing")
    assert code == 1 and "archived: reactivate it first" in err
    assert spar(capsys, data, "ws", "reactivate", "ops")[0] == 0
    fake_ollama.set(reply="Still here [1].")
    code, out, _ = spar(capsys, data, "ask", "ops", "Why?", "--thread", "bearing")
    assert code == 0 and out.startswith("Still here [1].")
    code, out, _ = spar(capsys, data, "thread", "list", "ops")
    assert "8 msgs" in out  # the thread survived archive and reactivate


def test_ask_without_a_server_answers_from_retrieval_with_a_banner(data, capsys, monkeypatch):
    host = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("OLLAMA_HOST", host)
    code, out, err = spar(capsys, data, "ask", "ops", "What was found on the blade?")
    assert code == 0
    assert out.startswith("No language model is available") and "**blade.md**" in out and "- [1] p. 1:" in out
    assert "Sources:\n[1] blade.md, p. 1" in out
    banner = [line for line in err.splitlines() if line.startswith("spar: Ollama is not reachable")]
    assert len(banner) == 1 and host in banner[0] and "ollama serve" in banner[0] and "ollama pull llama3.2" in banner[0]
    assert "retrieval only" in err


class FakeTerminal:
    """stdout and stderr of a terminal, interleaved in one buffer as the user sees them."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True

    @property
    def text(self) -> str:
        return "".join(self.parts)


def test_ask_in_a_terminal_says_first_where_ollama_was_looked_for_and_renders_markdown(data, capsys, monkeypatch):
    """Issue 14.12: the banner came after the passages, and '**file**' was printed raw."""
    host = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("OLLAMA_HOST", host)
    monkeypatch.delenv("NO_COLOR", raising=False)
    screen = FakeTerminal()
    monkeypatch.setattr("sys.stdout", screen)
    monkeypatch.setattr("sys.stderr", screen)
    assert cli.main(["--data-dir", str(data), "ask", "ops", "What was found on the blade?"]) == 0
    text = screen.text
    banner = text.index(f"Ollama is not reachable at {host}")
    assert "ollama serve" in text and "OLLAMA_HOST" in text
    assert banner < text.index("No language model is available")  # said before the passages
    assert text.count("Ollama is not reachable") == 1
    assert "**" not in text and "\x1b[1mblade.md\x1b[22m" in text  # bold, not raw Markdown
    # NO_COLOR: no escape codes, and still no raw Markdown markers.
    monkeypatch.setenv("NO_COLOR", "1")
    screen.parts.clear()
    assert cli.main(["--data-dir", str(data), "ask", "ops", "What was found on the blade?"]) == 0
    assert "**" not in screen.text and "\x1b[" not in screen.text and "blade.md" in screen.text


def test_terminal_markdown_renders_bold_split_across_tokens():
    from spar_desktop.commands.terminal import MarkdownStream

    out: list[str] = []
    md = MarkdownStream(out.append, ansi=True)
    for delta in ("The *", "*gearbox", "** failed [1]", " at 5 * 3 *"):
        md.write(delta)
    md.close()
    assert "".join(out) == "The \x1b[1mgearbox\x1b[22m failed [1] at 5 * 3 *"
    plain: list[str] = []
    md = MarkdownStream(plain.append, ansi=False)
    md.write("**open bold never closed")
    md.close()
    assert "".join(plain) == "open bold never closed"

