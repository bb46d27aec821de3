"""`spar tags group`: sibling tags grouped into new intermediate tags ("Pumps", "Valves", "Seals"
→ "Mechanical"), by the Ollama model when it answers, else by clustering the tags' labels.

Like `spar tags induce`, a run saves a proposal and changes nothing: the next `spar tags group`
without tags shows it, edits it (--rename, --move, --drop) and --accept puts it into the tree
(or --discard throws it away). Tags and --accept in one run propose and accept at once.
"""

from __future__ import annotations

import argparse
import json
import sys

from spar_desktop.commands.common import CommandError, open_library, settings_from_args
from spar_desktop.commands.terminal import printable


def register(tsub: argparse._SubParsersAction) -> None:
    g = tsub.add_parser("group", help="group sibling tags under new intermediate tags (proposal, then --accept)",
                        description="Proposes intermediate tags for sibling tags: name the tags, or their parent "
                                    "with --parent (all its children), or both. The Ollama model groups and names "
                                    "them when a server answers (one prompt); otherwise, or when its reply is not "
                                    "usable, the tags are clustered by the similarity of their labels. The "
                                    "proposal is saved; nothing changes until --accept. Without tags, the saved "
                                    "proposal is shown, edited or accepted. GROUP is a group's number or name.")
    g.add_argument("tags", nargs="*", help="tags to group (keys or labels); all siblings")
    g.add_argument("--parent", help="the tags' parent (key or label); alone: group all its children")
    g.add_argument("--llm", action=argparse.BooleanOptionalAction, default=None,
                   help="ask the Ollama model (default: when a server is reachable)")
    g.add_argument("--max-groups", type=int, default=None, help="at most this many groups (default 12)")
    g.add_argument("--rename", nargs=2, action="append", metavar=("GROUP", "NAME"), help="rename a group")
    g.add_argument("--move", nargs=2, action="append", metavar=("TAG", "GROUP"),
                   help="move a tag into a group ('-' leaves it out of every group)")
    g.add_argument("--drop", action="append", metavar="GROUP", help="leave a group out (its tags stay put)")
    g.add_argument("--accept", action="store_true", help="put the proposal into the tag tree")
    g.add_argument("--discard", action="store_true", help="throw the saved proposal away")
    g.add_argument("--json", action="store_true", help="the proposal (and what was done) as JSON")
    g.set_defaults(func=run_group)


def run_group(args: argparse.Namespace) -> int:
    from spar_desktop.core.tagging.grouping_proposal import (GroupingError, accept_grouping, discard_grouping,
                                                              load_grouping, now, save_grouping)

    from dataclasses import replace

    settings = settings_from_args(args)
    if args.discard:
        print("proposal discarded" if discard_grouping(settings.data_dir) else "no grouping proposal to discard")
        return 0
    try:
        library = open_library(args)
        if args.tags or args.parent:
            proposal = _propose(args, settings, library)
        else:
            proposal = load_grouping(settings.data_dir)
            if proposal is None:
                raise CommandError("no grouping proposal: name the tags to group, or --parent TAG")
        proposal = _edit(proposal, args)
        report = None
        if args.accept:
            with library.session() as s:
                report = accept_grouping(s, proposal)
            proposal = replace(proposal, accepted_at=now())
    except GroupingError as exc:
        raise CommandError(printable(str(exc))) from None
    save_grouping(settings.data_dir, proposal)
    if args.json:
        out = json.loads(proposal.to_json())
        if report is not None:
            out["report"] = {"groups_created": report.groups_created, "groups_existing": report.groups_existing,
                             "tags_moved": report.tags_moved, "skipped": list(report.skipped)}
        print(json.dumps(out, indent=1, ensure_ascii=False))
        return 0
    print_grouping(proposal)
    if report is not None:
        print(printable(report.message()))
    elif not proposal.accepted_at:
        print("\nsaved as a proposal; nothing changed yet. Next: spar tags group --accept | "
              "--rename GROUP NAME | --move TAG GROUP | --drop GROUP | --discard")
    return 0


def _propose(args: argparse.Namespace, settings, library):
    from spar_desktop.core.tagging.grouping import MAX_GROUPS, ollama_grouper, propose_grouping
    from spar_desktop.core.tagging.grouping_proposal import select_by_names
    from spar_desktop.core.workspaces.engine import encoder_for

    with library.session() as s:
        selection = select_by_names(s, args.parent, list(args.tags))
    generate, why_not = (None, "") if args.llm is False else ollama_grouper(settings)
    if args.llm and generate is None:
        print(f"spar: note: {why_not}; grouping the tags by label similarity", file=sys.stderr)
    # The encoder loads only when the tags are clustered (no model, or an unusable reply).
    proposal = propose_grouping(selection, lambda texts: encoder_for(settings).encode(texts), generate,
                                args.max_groups or MAX_GROUPS)
    if proposal.note:
        print(f"spar: note: {proposal.note}", file=sys.stderr)
    return proposal


def _edit(proposal, args: argparse.Namespace):
    for group, name in args.rename or ():
        proposal = proposal.rename(group, name)
    for tag, group in args.move or ():
        proposal = proposal.move(tag, None if group == "-" else group)
    for group in args.drop or ():
        proposal = proposal.drop(group)
    return proposal


def print_grouping(proposal, out=None) -> None:
    out = out or sys.stdout
    sel = proposal.selection
    by = "the Ollama model" if proposal.method == "ollama" else "label similarity"
    where = f"under {printable(sel.parent_label)}" if sel.parent_label else "at the top level"
    state = f", accepted {proposal.accepted_at}" if proposal.accepted_at else ""
    out.write(f"{len(proposal.groups)} groups for {len(sel.tags)} tags {where} (grouped by {by}{state})\n")
    for g in proposal.groups:
        out.write(f"\n{g.id}  {printable(g.name)}\n")
        for k, t in enumerate(g.tag_ids):
            out.write(f"   {'└──' if k == len(g.tag_ids) - 1 else '├──'} {printable(sel.label_of(t))}\n")
    if proposal.ungrouped:
        out.write(f"\nnot grouped: {printable(', '.join(sel.label_of(t) for t in proposal.ungrouped))}\n")
