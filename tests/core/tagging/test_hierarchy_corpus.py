"""Test data for the hierarchy tests (no tests here): a hand-written corpus with known topics and
sub-topics (four topics, two sub-topics each, notes composed from seeded sentences) and newsgroups posts."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from tests.support.corpora import shared_data

TOPICS = {
    "astronomy": {
        "_": ["The observatory team published new astronomy results.",
              "Astronomers shared the telescope schedule for the season."],
        "planets": ["The planet orbit around the star was measured with the telescope.",
                    "Saturn rings and Jupiter moons were observed through the telescope.",
                    "A new exoplanet orbit was confirmed by the planet survey.",
                    "The planet atmosphere shows methane under the telescope spectrum.",
                    "Mars surface images from the planet orbiter reveal dust storms."],
        "rockets": ["The rocket launch was delayed by weather at the launch pad.",
                    "Rocket engine tests reached full thrust before the launch.",
                    "The booster rocket landed after the satellite launch.",
                    "Launch crews fuelled the rocket stage with liquid oxygen.",
                    "The satellite launch window opens at dawn for the rocket."],
    },
    "cooking": {
        "_": ["The kitchen notes collect family cooking recipes.",
              "Our cooking club tried the recipe at the weekend."],
        "baking": ["Bake the bread dough in a hot oven until the crust is golden.",
                   "The sourdough bread needs flour, water and a long rise before baking.",
                   "Cake batter with butter and sugar is baked in the oven.",
                   "Knead the bread dough and let the yeast rise overnight.",
                   "Pastry dough with cold butter bakes into flaky layers in the oven."],
        "soups": ["Simmer the vegetable soup with onions, carrots and garlic stock.",
                  "The chicken soup stock simmers for hours with herbs.",
                  "Tomato soup is blended smooth and seasoned with basil.",
                  "Lentil soup simmers with cumin, garlic and vegetable stock.",
                  "A clear fish soup stock needs bones, onions and a slow simmer."],
    },
    "football": {
        "_": ["The football club announced the match results.",
              "Football fans filled the stadium for the league match."],
        "transfers": ["The club signed a striker in a record transfer fee deal.",
                      "Transfer talks for the midfielder stalled over the contract wages.",
                      "The transfer window closes before the club can sign a defender.",
                      "His contract extension and transfer release clause were agreed.",
                      "Agents negotiated the loan transfer and contract for the winger."],
        "matches": ["The striker scored two goals in the second half of the match.",
                    "A late penalty goal decided the league match at the stadium.",
                    "The goalkeeper saved a penalty but the match ended in a draw.",
                    "Three goals in the first half gave the team a league win.",
                    "The referee awarded a penalty and the goal won the match."],
    },
    "finance": {
        "_": ["The finance department circulated the quarterly report.",
              "Finance staff reviewed the accounts before the board meeting."],
        "tax": ["The income tax return lists deductions and taxable allowances.",
                "Corporate tax filings are due with the annual tax return.",
                "Value added tax on invoices must be reported in the tax return.",
                "Tax deductions for pension contributions lower taxable income.",
                "The auditor checked payroll tax withholding and tax filings."],
        "investments": ["The investment portfolio holds equity shares and government bonds.",
                        "Bond yields rose and the equity portfolio lost value.",
                        "Dividend shares in the investment fund paid quarterly income.",
                        "The pension fund rebalanced its portfolio from equity into bonds.",
                        "Stock market shares fell while bond investment returns held."],
    },
}


def hand_written_corpus(per_subtopic: int = 6, seed: int = 7) -> tuple[dict[int, str], dict[int, tuple[str, str]]]:
    """(file id -> text, file id -> (topic, sub-topic))."""
    rng = random.Random(seed)
    texts: dict[int, str] = {}
    truth: dict[int, tuple[str, str]] = {}
    fid = 100
    for topic, subs in TOPICS.items():
        for sub, sentences in subs.items():
            if sub == "_":
                continue
            for _ in range(per_subtopic):
                fid += 1
                body = rng.sample(sentences, 3) + [rng.choice(subs["_"])]
                rng.shuffle(body)
                texts[fid] = f"Note {fid} from alice@example.com, see http://intranet/x. " + " ".join(body)
                truth[fid] = (topic, sub)
    return texts, truth


def newsgroups_posts(groups: list[str], per_group: int) -> tuple[dict[int, str], dict[int, str]]:
    """The first ``per_group`` posts of each group, summarised as the app summarises files."""
    from spar_desktop.core.tagging.summaries import summary_text

    texts: dict[int, str] = {}
    label: dict[int, str] = {}
    seen: Counter = Counter()
    with open(shared_data("newsgroups20") / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            g = rec["metadata"]["newsgroup"]
            if g in groups and seen[g] < per_group:
                seen[g] += 1
                i = len(texts) + 1
                texts[i], label[i] = summary_text(rec["title"], rec["text"]), g
    return texts, label


def purity(groups: list[set[int]], label: dict) -> float:
    groups = [g for g in groups if g]
    return sum(Counter(label[f] for f in g).most_common(1)[0][1] for g in groups) / sum(len(g) for g in groups)


def write_notes(root: Path, texts: dict[int, str]) -> dict[int, Path]:
    """Each text as a file <root>/note-<id>.txt; returns corpus id -> path."""
    root.mkdir(parents=True, exist_ok=True)
    out = {}
    for i, text in texts.items():
        out[i] = root / f"note-{i}.txt"
        out[i].write_text(text, encoding="utf-8")
    return out
