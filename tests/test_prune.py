"""The 0-ply move filter (bgbot.evaluation.prune): its inputs, candidates, batch independence, files, and best_plays
through it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from bgbot.api import DEFAULT_MODEL
from bgbot.evaluation import checkpoint, prune
from bgbot.evaluation.classes import BEAROFF_OS, BEAROFF_TS, OVER, classify_batch
from bgbot.evaluation.evaluator import afterstate_probabilities, best_plays
from bgbot.evaluation.specialists import evaluator_for
from bgbot.rules.board import starting_position
from bgbot.rules.movegen import generate_plays
from bgbot.rules.outcomes import equity
from tests.positions import make_positions


@pytest.fixture(scope="module")
def net() -> prune.PruneNet:
    torch.manual_seed(3)
    return prune.PruneNet(16)


@pytest.fixture(scope="module")
def evaluator():
    return evaluator_for(checkpoint.load(DEFAULT_MODEL)[0])


def _plays(n: int = 300, seed: int = 5):
    pos = make_positions(n)
    dice = np.random.default_rng(seed).integers(1, 7, size=(n, 2))
    return pos, dice, generate_plays(pos, dice)


def test_filter_indices_of_the_starting_position():
    idx = prune.filter_indices(starting_position()[None])[0]
    p = starting_position().astype(np.int64)
    assert idx.tolist() == [31 * i + int(p[i]) + 15 for i in range(26)]
    assert idx.tolist()[:3] == [15, 31 + 15 - 2, 62 + 15]  # nothing on the bar, two of theirs on my 1-point, 2 empty
    assert prune.filter_indices(make_positions(500)).max() < prune.N_ROWS


def test_candidates_are_the_nets_top_k_of_each_filtered_position(net):
    pos, dice, plays = _plays()
    f = prune.MoveFilter(net, keep=3, extra=0)
    keep = f.candidates(pos, plays)
    score = net.scores(plays.afterstates)
    exact = np.isin(classify_batch(plays.afterstates), [OVER, BEAROFF_TS, BEAROFF_OS])
    filtered = 0
    for i, p in enumerate(pos):  # the oracle: one position at a time, in Python
        rows = np.flatnonzero(plays.parent == i)
        near_end = int(p[p > 0].sum()) <= 4 or not (p[:19] < 0).any()  # mover <= 4 left, or opponent all home
        if len(rows) <= 3 or near_end:
            assert keep[rows].all()
            continue
        assert not exact[rows].any()  # what the rule is for: no play of a filtered position is exact
        filtered += 1
        order = sorted(rows.tolist(), key=lambda r: (-float(score[r]), r))
        assert np.flatnonzero(keep[rows]).tolist() == sorted(np.searchsorted(rows, order[:3]).tolist())
    assert filtered > 100  # most positions have more than 3 plays
    assert exact.any() and keep[exact].all()  # plays into the databases in the sample, all kept


def test_extra_plays_within_the_margin(net):
    pos, _, plays = _plays()
    base = prune.MoveFilter(net, keep=2, extra=0).candidates(pos, plays)
    wide = prune.MoveFilter(net, keep=2, extra=3, margin=1e9).candidates(pos, plays)
    five = prune.MoveFilter(net, keep=5, extra=0).candidates(pos, plays)
    none = prune.MoveFilter(net, keep=2, extra=3, margin=0.0).candidates(pos, plays)
    assert (wide == five).all() and (none == base).all() and wide.sum() > base.sum()


def test_candidates_do_not_depend_on_the_batch(net):
    pos, dice, plays = _plays(120)
    f = prune.MoveFilter(net, keep=2)
    whole = f.candidates(pos, plays)
    one = np.concatenate(
        [f.candidates(pos[i : i + 1], generate_plays(pos[i : i + 1], dice[i : i + 1])) for i in range(len(pos))]
    )
    assert (whole == one).all()
    assert (net.scores(plays.afterstates[::-1]) == net.scores(plays.afterstates)[::-1]).all()


def test_best_plays_through_the_filter(evaluator, net):
    pos, dice, _ = _plays(200)
    exact_plays, exact_chosen, exact_probs = best_plays(evaluator, pos, dice)
    # keeping every play: the same choices and the same probabilities, bit for bit
    everything = prune.PrunedEvaluator(evaluator, prune.MoveFilter(net, keep=10_000))
    _, chosen, probs = best_plays(everything, pos, dice)
    assert (chosen == exact_chosen).all() and np.array_equal(probs, exact_probs)
    # keeping 2: the best of the candidates by the full evaluation; the other rows NaN
    pruned = prune.PrunedEvaluator(evaluator, prune.MoveFilter(net, keep=2, extra=0))
    plays, chosen, probs = best_plays(pruned, pos, dice)
    keep = pruned.move_filter.candidates(pos, plays)
    assert np.isnan(probs[~keep]).all() and np.isfinite(probs[keep]).all()
    full = afterstate_probabilities(evaluator, plays.afterstates)
    np.testing.assert_allclose(probs[keep], full[keep], atol=1e-6)
    eq = np.where(keep, equity(full), -np.inf)
    for i in range(len(pos)):
        rows = np.flatnonzero(plays.parent == i)
        assert eq[chosen[i]] == pytest.approx(eq[rows].max(), abs=1e-6)
    assert (chosen != exact_chosen).sum() > 0  # a random net's top 2 miss the best play somewhere


def test_pruned_evaluator_evaluates_as_the_wrapped_one(evaluator, net):
    pos = make_positions(50)
    wrapped = prune.PrunedEvaluator(evaluator, prune.MoveFilter(net))
    assert np.array_equal(wrapped.evaluate(pos), evaluator.evaluate(pos))
    assert wrapped.class_nets is evaluator.class_nets  # other attributes are the wrapped evaluator's


@pytest.mark.parametrize(
    "kwargs, message",
    [({"keep": 0}, "keeps at least 1"), ({"extra": -1}, "extra"), ({"margin": float("nan")}, "margin")],
)
def test_bad_filter_settings(net, kwargs, message):
    with pytest.raises(prune.PruneError, match=message):
        prune.MoveFilter(net, **kwargs)


def test_save_and_load(net, tmp_path: Path):
    path = prune.save(net, tmp_path / "f.pt")
    back = prune.load(path)
    after = generate_plays(make_positions(40), np.full((40, 2), 3)).afterstates
    assert np.array_equal(back.scores(after), net.scores(after)) and back.n_hidden == 16
    (tmp_path / "bad.pt").write_bytes(b"not a file")
    with pytest.raises(prune.PruneError, match="cannot read") as bad:
        prune.load(tmp_path / "bad.pt")
    # one line naming the failure, not torch's several lines that suggest weights_only=False
    assert str(bad.value) == (
        f"cannot read prune net file {str(tmp_path / 'bad.pt')!r}: corrupt, truncated or not a torch file "
        "(torch.load failed with UnpicklingError)"
    )
    with pytest.raises(prune.PruneError, match="no prune net file"):
        prune.load(tmp_path / "missing.pt")
    torch.save({"format": "other"}, tmp_path / "other.pt")
    with pytest.raises(prune.PruneError, match="not a prune net file"):
        prune.load(tmp_path / "other.pt")


SHIPPED = Path(__file__).resolve().parents[1] / "models" / "prune" / Path(DEFAULT_MODEL).resolve().name
"""The shipped model's own filter (``models/prune/<the default model's file name>``)."""


def test_the_shipped_filter_belongs_to_the_shipped_model_and_keeps_its_best_plays(evaluator):
    net = prune.load(SHIPPED)
    assert net.model_sha256 == prune.file_sha256(DEFAULT_MODEL)
    pos, dice, _ = _plays(400, seed=11)
    plays, exact, _ = best_plays(evaluator, pos, dice)
    pruned = prune.PrunedEvaluator(evaluator, prune.MoveFilter(net))  # the measured setting: 4, then 10 within 0.3
    keep = pruned.move_filter.candidates(pos, plays)
    _, chosen, _ = best_plays(pruned, pos, dice)
    assert keep.mean() < 0.4  # it drops most plays (keeps 0.375 here)
    assert (chosen == exact).mean() >= 0.98  # 0.99 here: the random positions include odd ones


def test_scores_are_the_nets_forward_pass_bit_for_bit(net):
    after = generate_plays(make_positions(200), np.full((200, 2), (6, 1))).afterstates
    with torch.inference_mode():
        forward = net(torch.from_numpy(prune.filter_indices(after))).numpy()
    assert net.scores(after).dtype == np.float32 and np.array_equal(net.scores(after), forward)


def test_best_plays_through_the_filter_is_the_best_kept_row_bit_for_bit(evaluator, net):
    """The chosen row is the first row of the highest equity among each position's candidates (the others at -inf),
    and the candidates' probabilities are those of evaluating them alone."""
    from bgbot.evaluation.selection import segment_argmax

    pos, dice, _ = _plays(200, seed=8)
    pruned = prune.PrunedEvaluator(evaluator, prune.MoveFilter(net, keep=3, extra=2, margin=0.1))
    plays, chosen, probs = best_plays(pruned, pos, dice)
    keep = pruned.move_filter.candidates(pos, plays)
    alone = afterstate_probabilities(evaluator, plays.afterstates[keep])
    assert np.array_equal(probs[keep], alone) and np.isnan(probs[~keep]).all()
    values = np.full(len(keep), -np.inf, dtype=np.float32)
    values[keep] = equity(alone)
    assert np.array_equal(chosen, segment_argmax(values, plays.parent))


def test_filter_for_finds_the_models_own_filter_only(tmp_path: Path, net):
    shipped = prune.filter_for(DEFAULT_MODEL)  # bgbot/data/default_model.pt -> models/bgbot-6.pt
    assert shipped is not None and (shipped.keep, shipped.extra, shipped.margin) == (4, 10, 0.3)
    assert shipped.net.model_sha256 == prune.file_sha256(DEFAULT_MODEL)
    assert prune.filter_for(SHIPPED.parents[1] / "bgbot-1.pt") is None  # no models/prune/bgbot-1.pt
    model = tmp_path / "m.pt"
    model.write_bytes(Path(DEFAULT_MODEL).read_bytes())
    assert prune.filter_for(model) is None  # no prune/ beside it
    (tmp_path / "prune").mkdir()
    prune.save(prune.PruneNet(4, model_sha256="0" * 64), tmp_path / "prune" / "m.pt")
    assert prune.filter_for(model) is None  # fitted to another model
    prune.save(prune.PruneNet(4, model_sha256=prune.file_sha256(model)), tmp_path / "prune" / "m.pt")
    found = prune.filter_for(model)
    assert found is not None and found.net.n_hidden == 4
    (tmp_path / "prune" / "m.pt").write_bytes(b"damaged")
    with pytest.raises(prune.PruneError, match="cannot read"):
        prune.filter_for(model)
