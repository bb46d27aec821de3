"""`spar tags induce` and `spar tags proposal`: a topic hierarchy induced from the files' key
phrases (and summary vectors), saved as a proposal the user edits, then accepts or discards."""

from __future__ import annotations

import argparse
import json
import sys

from spar_desktop.commands.common import CommandError, StderrProgress, open_library, settings_from_args
from spar_desktop.commands.terminal import printable

ACTIONS = ("show", "accept", "discard", "rename", "remove", "move")


def register(tsub: argparse._SubParsersAction) -> None:
    """Add `induce` and `proposal` to the `spar tags` sub-commands."""
    ind = tsub.add_parser("induce", help="propose a two-level topic hierarchy from the files' key phrases",
                          description="Groups the indexed files into topics and sub-topics named from their key "
                                      "phrases (or by the Ollama model with --llm) and saves the result as a "
                                      "proposal: nothing is tagged until `spar tags proposal accept`.")
    ind.add_argument("--llm", action="store_true", help="name the topics with the Ollama model (when reachable)")
    ind.add_argument("--features", choices=["auto", "phrases", "vectors", "both"], default="auto",
                     help="what files are grouped by (default: key phrases and summary vectors)")
    ind.add_argument("--json", action="store_true", help="the proposal as JSON")
    ind.set_defaults(func=run_induce)

    prop = tsub.add_parser("proposal", help="show, edit, accept or discard the induced topic proposal",
                           description="NODE is a topic's number (1, 2.3) or its name. rename NODE NEWNAME; "
                                       "remove NODE (a removed sub-topic's files stay in its topic); "
                                       "move NODE TOPIC (a sub-topic under another topic).")
    prop.add_argument("action", nargs="?", default="show", choices=ACTIONS)
    prop.add_argument("operands", nargs="*", help="NODE [NEWNAME | TOPIC]")
    prop.add_argument("--json", action="store_true")
    prop.set_defaults(func=run_proposal)


def run_induce(args: argparse.Namespace) -> int:
    from spar_desktop.core.progress import CancelToken, Cancelled
    from spar_desktop.core.tagging.hierarchy import InduceConfig, InductionError, induce_for_library, ollama_namer
    from spar_desktop.core.tagging.proposal import proposal_path
    from spar_desktop.core.workspaces.engine import encoder_for

    settings = settings_from_args(args)
    library = open_library(args)
    namer = None
    if args.llm:
        namer, why_not = ollama_namer(settings)
        if namer is None:
            print(f"spar: note: {why_not}; naming topics from their key phrases", file=sys.stderr)
    progress = StderrProgress("topics")
    cancel = CancelToken()
    try:
        proposal = induce_for_library(library, settings, encoder_for(settings), namer,
                                      InduceConfig(features=args.features), progress, cancel)
    except InductionError as exc:
        progress.finish()
        raise CommandError(f"{exc} (index a folder first: spar index FOLDER)") from None
    except (KeyboardInterrupt, Cancelled):
        cancel.cancel()
        progress.finish()
        raise CommandError("stopped; the summaries made so far are kept") from None
    progress.finish()
    if args.json:
        print(json.dumps({"path": str(proposal_path(settings.data_dir)), **json.loads(proposal.to_json())},
                         indent=1, ensure_ascii=False))
        return 0
    print_tree(proposal)
    print("\nsaved as a proposal; nothing is tagged yet. Next: spar tags proposal accept | "
          "rename NODE NEWNAME | remove NODE | move NODE TOPIC | discard")
    return 0


def print_tree(proposal, out=None) -> None:
    out = out or sys.stdout
    named = "the Ollama model" if proposal.named_by == "ollama" else "key phrases"
    state = f", accepted {proposal.accepted_at}" if proposal.accepted_at else ""
    out.write(f"{len(proposal.nodes)} topics for {proposal.file_count} files (named by {named}{state})\n")
    if proposal.unplaced:
        out.write(f"{proposal.unplaced} files had no key phrase to place them by\n")
    for top in proposal.nodes:
        out.write(f"\n{top.id}  {printable(top.name)}  ({top.file_count} files)  — "
                  f"{printable(', '.join(top.phrases[:5]))}\n")
        for k, child in enumerate(top.children):
            branch = "└──" if k == len(top.children) - 1 else "├──"
            out.write(f"   {branch} {child.id}  {printable(child.name)}  ({child.file_count})  — "
                      f"{printable(', '.join(child.phrases[:4]))}\n")
        if top.children and top.files:
            out.write(f"       ({len(top.files)} files in the topic itself)\n")


def run_proposal(args: argparse.Namespace) -> int:
    from dataclasses import asdict, replace
    from datetime import datetime, timezone

    from spar_desktop.core.tagging.proposal import (ProposalError, accept_proposal, discard_proposal,
                                                     load_proposal, save_proposal)

    settings = settings_from_args(args)
    want = {"show": 0, "accept": 0, "discard": 0, "rename": 2, "remove": 1, "move": 2}[args.action]
    if len(args.operands) != want:
        raise CommandError(f"'{args.action}' takes {want or 'no'} operand{'s' if want != 1 else ''}")
    try:
        proposal = load_proposal(settings.data_dir)
    except ProposalError as exc:
        raise CommandError(str(exc)) from None
    if proposal is None:
        raise CommandError("no topic proposal: make one with `spar tags induce`")
    if args.action == "discard":
        discard_proposal(settings.data_dir)
        print("proposal discarded")
        return 0
    try:
        if args.action == "rename":
            proposal = proposal.rename(*args.operands)
        elif args.action == "remove":
            proposal = proposal.remove(args.operands[0])
        elif args.action == "move":
            proposal = proposal.move(*args.operands)
    except ProposalError as exc:
        raise CommandError(printable(str(exc))) from None
    if args.action == "accept":
        library = open_library(args)
        with library.session() as s:
            report = accept_proposal(s, proposal)
        proposal = replace(proposal, accepted_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        save_proposal(settings.data_dir, proposal)
        if args.json:
            print(json.dumps(asdict(report), indent=1))
        else:
            print(report.message())
            print("the topics are under [Automatic tags] in `spar tags`")
        return 0
    if args.action != "show":
        save_proposal(settings.data_dir, proposal)
    if args.json:
        print(proposal.to_json())
    else:
        print_tree(proposal)
    return 0
