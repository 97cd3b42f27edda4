"""One request, one pass: ``bgbot move`` reads its position once, generates the plays of each position it expands
once and calls the evaluator once per ply; ``bgbot cube`` evaluates its position once."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bgbot import cli
from bgbot.api import Bot
from bgbot.arena import ranking
from bgbot.evaluation import evaluator, search
from bgbot.formats import context
from bgbot.rules import movegen

OPENING = "4HPwATDgc/ABMA"  # the starting position: contact, every reply valued by the network


class Counter:
    """Wraps a function and records the arguments of each call."""

    def __init__(self, fn):
        self.fn = fn
        self.calls: list[tuple] = []

    def __call__(self, *args, **kwargs):
        self.calls.append(args)
        return self.fn(*args, **kwargs)


class CountingEvaluator:
    """A position evaluator that counts the batches it is asked to evaluate."""

    def __init__(self, inner):
        self.inner = inner
        self.batches = 0

    def evaluate(self, positions):
        self.batches += 1
        return self.inner.evaluate(positions)

    def evaluate_classified(self, positions, codes):
        self.batches += 1
        return self.inner.evaluate_classified(positions, codes)


@pytest.fixture(scope="module")
def bot() -> Bot:
    return Bot.load()


@pytest.fixture
def counted(monkeypatch, bot):
    """Counters on the position parser, the move generator, the batched evaluation and the evaluator itself."""
    parse = Counter(context.parse_position)
    monkeypatch.setattr(context, "parse_position", parse)
    generate = Counter(movegen.generate_plays)
    for module in (movegen, ranking, search):
        monkeypatch.setattr(module, "generate_plays", generate)
    evaluate = Counter(evaluator.classified_probabilities)
    for module in (evaluator, ranking):
        monkeypatch.setattr(module, "classified_probabilities", evaluate)
    counting = CountingEvaluator(bot.evaluator)
    counted_bot = Bot(bot.net, bot.meta, bot.path)
    counted_bot.evaluator = counting  # type: ignore[assignment]
    monkeypatch.setattr(Bot, "load", classmethod(lambda cls, *a, **k: counted_bot))
    return parse, generate, evaluate, counting


def run_cli(capsys, *argv: str) -> dict:
    assert cli.main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("ply", [0, 1, 2])
def test_move_parses_once_generates_once_per_expansion_and_evaluates_once_per_ply(capsys, counted, ply):
    parse, generate, evaluate, counting = counted
    out = run_cli(capsys, "move", OPENING, "31", "--json", "--ply", str(ply))
    assert out["plays"][0]["play"] == "8/5 6/5" and len(out["plays"]) == 16
    assert len(parse.calls) == 1
    # the position itself, then one batch per level of the search: the candidates' replies to the 21 rolls
    assert len(generate.calls) == 1 + ply
    assert len(generate.calls[0][0]) == 1
    for positions, dice in generate.calls:
        pairs = {bytes(p) + bytes(np.asarray(d, dtype=np.int8)) for p, d in zip(positions, dice)}
        assert len(pairs) == len(positions)  # no position expanded twice with the same roll
    assert len(evaluate.calls) == 1 + ply
    if ply < 2:  # at 2 ply the deepest level is large enough to reach the evaluator in blocks
        assert counting.batches == 1 + ply


@pytest.mark.parametrize("ply", [0, 1])
def test_cube_parses_once_and_evaluates_once(capsys, counted, ply):
    parse, generate, evaluate, counting = counted
    out = run_cli(capsys, "cube", OPENING, "--json", "--ply", str(ply))
    assert out["action"] == "No double, take" and out["ply"] == ply
    assert len(parse.calls) == 1
    assert len(evaluate.calls) == 1  # 0-ply: the position; 1-ply: its replies to the 21 rolls
    assert counting.batches == 1
    assert len(generate.calls) == ply  # 1-ply expands the position once


def test_cube_table_parses_once(capsys, counted):
    parse, _, evaluate, counting = counted
    assert cli.main(["cube", OPENING]) == 0
    assert "Proper cube action: No double" in capsys.readouterr().out
    assert len(parse.calls) == 1 and len(evaluate.calls) == 1 and counting.batches == 1


def test_move_table_parses_once(capsys, counted):
    parse, generate, _, counting = counted
    assert cli.main(["move", OPENING, "31"]) == 0
    assert "8/5 6/5" in capsys.readouterr().out
    assert len(parse.calls) == 1 and len(generate.calls) == 1 and counting.batches == 1
