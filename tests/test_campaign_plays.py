"""The campaign's plays stream (training.plays): checker-play decisions where 0-ply and 2-ply disagree, their
candidates' afterstates rolled out, resumable part by part like every store."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bgbot.arena.ranking import rank
from bgbot.arena.rollout import RolloutSettings, rollout_positions
from bgbot.evaluation import prune
from bgbot.rules.movegen import generate_plays
from bgbot.rules.outcomes import equity, flip_probabilities
from training import campaign, plays, stages
from training.campaign import Reason
from training.parts import StageError, load_model, load_npz, save_npz

ROOT = Path(__file__).resolve().parents[1]
MODEL = "models/bgbot-6.pt"  # the shipped model, which has a move filter of its own
POOL = ROOT / "models" / "candidates" / "gen5" / "ply2-bgbot4" / "part-00000.npz"


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> Path:
    data = load_npz(POOL)
    out = tmp_path_factory.mktemp("pool")
    save_npz(out / "part-00000.npz", positions=data["positions"][:80], classes=data["classes"][:80], meta={})
    return out


@pytest.fixture(scope="module")
def evaluator():
    return load_model(str(ROOT / MODEL))[1]


@pytest.fixture(scope="module")
def plays_store(pool, tmp_path_factory) -> Path:
    """A finished plays store: 60 decisions, 36 trials an afterstate."""
    store = tmp_path_factory.mktemp("plays") / "store"
    assert stages.main(plan(store, pool)) == 0
    assert stages.main(["campaign", "run", "--store", str(store), "--workers", "2", "--quiet"]) == 0
    return store


def plan(store: Path, pool: Path, *extra: str) -> list[str]:
    return ["campaign", "plan", "--store", str(store), "--model", str(ROOT / MODEL), "--pool", str(pool), "--size",
            "60", "--trials", "36", "--part-size", "20", "--plays", "--move-filter", "--seed", "3", "--quiet",
            *extra]  # fmt: skip


def arrays(path: Path) -> dict:
    with np.load(path) as z:
        out = {k: z[k].tobytes() for k in z.files if k not in ("cost", "meta")}
        meta = json.loads(str(z["meta"]))
    meta.pop("git_revision")
    return out | {"meta": meta}


def test_select_keeps_the_disagreeing_decisions_candidates(pool, evaluator):
    data = load_npz(pool / "part-00000.npz")
    pos = data["positions"][:40].astype(np.int8)
    dice = np.random.default_rng(4).integers(1, 7, size=(40, 2))
    sel = plays.select(evaluator, pos, dice)
    shallow, deep = rank(evaluator, pos, dice, 0), rank(evaluator, pos, dice, 2)
    after = deep.plays.afterstates
    differ = [i for i in range(40) if not np.array_equal(after[shallow.best[i]], after[deep.best[i]])]
    assert differ, "the sample holds decisions where 0-ply and 2-ply disagree"
    assert sorted(set(sel.decision.tolist())) == differ
    for i in differ:
        m = np.flatnonzero(sel.decision == i)
        assert 2 <= len(m) <= plays.CANDIDATES
        # the first afterstate is 0-ply's choice, the one ranked 0 at 2-ply is 2-ply's choice
        assert sel.choice[m[0]] == plays.ZERO_PLY_CHOICE and np.array_equal(
            sel.afterstates[m[0]], after[shallow.best[i]]
        )
        deep_row = m[sel.choice[m] == plays.DEEP_CHOICE]
        assert len(deep_row) == 1 and sel.rank2[deep_row[0]] == 0
        assert np.array_equal(sel.afterstates[deep_row[0]], after[deep.best[i]])
        assert np.array_equal(sel.ply2[deep_row[0]], flip_probabilities(deep.probabilities[deep.best[i]]))
        # every afterstate is a legal play of the decision, none twice
        legal = {row.tobytes() for row in generate_plays(pos[i : i + 1], dice[i : i + 1]).afterstates}
        assert all(sel.afterstates[j].tobytes() in legal for j in m)
        assert len({sel.afterstates[j].tobytes() for j in m}) == len(m)
    # the 0-ply values: 0-ply's choice is the best of its decision's candidates at 0-ply (the mover's equity)
    for i in differ:
        m = np.flatnonzero(sel.decision == i)
        assert np.argmax(-equity(sel.ply0[m].astype(np.float64))) == 0
    with pytest.raises(ValueError, match="ply >= 1"):
        plays.select(evaluator, pos, dice, ply=0)


def test_agreement_counts_whom_the_rollout_sides_with():
    # two decisions: in the first the rollout prefers 2-ply's choice by 0.1 equity, in the second a third candidate
    win = np.array([0.50, 0.45, 0.52, 0.40, 0.60, 0.35])  # the opponent's win probability after each play
    targets = np.zeros((6, 5))
    targets[:, 0] = win
    decision = np.array([7, 7, 7, 9, 9, 9])
    choice = np.array([1, 2, 0, 1, 2, 0], dtype=np.int8)
    got = plays.agreement(decision, choice, targets, targets, targets)
    assert got["decisions"] == 2 and got["rollout_picks_2ply"] == 1 and got["rollout_picks_other"] == 1
    assert got["rollout_picks_0ply"] == 0
    # losses in the mover's equity (2 * win - 1 for the opponent): decision 7: 0-ply 0.10, 2-ply 0; decision 9: 0-ply
    # 0.10 (0.40 vs 0.35), 2-ply 0.50 (0.60 vs 0.35)
    assert got["equity_loss_0ply"] == pytest.approx(0.10)
    assert got["equity_loss_2ply"] == pytest.approx(0.25)
    assert got["rmse_0ply"] == pytest.approx(0.0) and got["rmse_2ply"] == pytest.approx(0.0)


def test_a_plays_store_resumes_to_identical_parts_and_rolls_out_its_afterstates(pool, tmp_path, capsys, evaluator):
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    for store in (whole, resumed):
        assert stages.main(plan(store, pool)) == 0
    planned = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert planned == {"store": str(resumed), "planned": True, "rows": 60, "parts": 3, "reasons": {"play": 60}}
    settings = campaign.load_settings(whole)
    assert settings.plays and settings.stream == {"kind": "plays", "ply": 2, "candidates": 5, "chunk": 25}
    assert settings.rollout["move_filter"] is True
    assert stages.main(["campaign", "run", "--store", str(whole), "--workers", "2", "--quiet"]) == 0
    done = json.loads(capsys.readouterr().out)["store"]
    assert done["parts_done"] == 3 and done["plays"]["decisions_examined"] == 60
    assert stages.main(["campaign", "run", "--store", str(resumed), "--parts", "1", "--quiet"]) == 0
    assert stages.main(["campaign", "run", "--store", str(resumed), "--quiet"]) == 0
    capsys.readouterr()
    for n in range(3):  # one worker or two, in one run or two: the same parts
        assert arrays(campaign.part_path(resumed, n)) == arrays(campaign.part_path(whole, n))
    parts = [load_npz(campaign.part_path(whole, n)) for n in range(3)]
    assert sum(len(p["positions"]) for p in parts) == done["positions"] > 0
    # a part: the disagreeing decisions of its plan rows, their afterstates rolled out by the filtered players
    p = parts[1]
    the_plan = load_npz(whole / campaign.PLAN_FILE)
    sel = plays.select(evaluator, the_plan["positions"][20:40], the_plan["dice"][20:40])
    assert np.array_equal(p["positions"], sel.afterstates) and np.array_equal(p["decisions"], sel.decision + 20)
    assert (p["reasons"] == Reason.PLAY).all()
    players = prune.PrunedEvaluator(evaluator, prune.filter_for(ROOT / MODEL))
    how = RolloutSettings(trials=36, seed=3 * 100_003 + 1, variance_reduction=False, move_filter=True)
    mean, se = rollout_positions(p["positions"], players, how)
    assert np.array_equal(p["targets"], np.clip(mean, 0, 1).astype(np.float32))
    # status's agreement is plays.agreement over every part
    cat = {k: np.concatenate([q[k] for q in parts]) for k in ("decisions", "choice", "targets", "ply0", "ply2")}
    by_hand = plays.agreement(cat["decisions"], cat["choice"], cat["targets"], cat["ply0"], cat["ply2"])
    assert done["plays"] == {"decisions_examined": 60} | by_hand
    # the fit reads a plays part like any target part
    from training.fit import load_targets

    positions, targets, stderr, _ = load_targets([str(whole)])
    assert len(positions) == done["positions"] and np.array_equal(
        targets[: len(parts[0]["targets"])], parts[0]["targets"]
    )


def test_choice_losses_are_the_rollouts_verdict_on_the_models_first_candidate():
    targets = np.zeros((5, 5))
    targets[:, 0] = [0.50, 0.45, 0.52, 0.40, 0.30]  # the opponent's win probability after each play
    model = np.zeros((5, 5))
    model[:, 0] = [0.40, 0.50, 0.60, 0.35, 0.36]  # the model prefers candidate 0, then 3 (the lowest for the opponent)
    loss = plays.choice_losses(model, np.array([4, 4, 4, 8, 8]), targets)
    # decision 4: the rollout's best is candidate 1 (0.45 -> mover 0.10), the model's 0 (mover 0.0): 0.10;
    # decision 8: the rollout's best is 4 (mover 0.40), the model's 3 (mover 0.20): 0.20
    assert loss == pytest.approx([0.10, 0.20])


def test_a_plays_part_with_decisions_of_another_part_is_refused(pool, tmp_path, capsys):
    store = tmp_path / "s"
    assert stages.main(plan(store, pool)) == 0
    assert stages.main(["campaign", "run", "--store", str(store), "--parts", "1", "--quiet"]) == 0
    capsys.readouterr()
    data = dict(np.load(campaign.part_path(store, 0), allow_pickle=False))
    assert len(data["decisions"]), "part 0 found decisions to roll out"
    data["decisions"] = data["decisions"] + 20  # part 1's rows
    np.savez(campaign.part_path(store, 0), **data)
    assert stages.main(["campaign", "status", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert "outside part 0's plan rows" in err and err.count("\n") == 1


def test_a_move_filter_needs_a_model_with_its_own_filter(pool, tmp_path, capsys):
    args = plan(tmp_path / "s", pool)
    args[args.index("--model") + 1] = str(ROOT / "models" / "bgbot-1.pt")
    assert stages.main(args) == 2
    err = capsys.readouterr().err
    assert "no move filter of its own" in err and err.count("\n") == 1
    with pytest.raises(StageError, match="no move filter"):
        campaign.players_for(None, _filtered(), ROOT / "x.pt")


def _filtered() -> campaign.CampaignSettings:
    """Settings of a store whose rollouts use a move filter."""
    return campaign.CampaignSettings("x", "0", {"move_filter": True}, 1, 1, "0", 1, [], {})


def test_the_decision_loss_is_the_spread_of_the_nets_differences_from_the_rollouts(evaluator):
    from training.fit import DecisionTargets

    net = load_model(str(ROOT / MODEL))[0]
    data = load_npz(POOL)
    pos = data["positions"][:5].astype(np.int8)
    targets = np.zeros((5, 5), dtype=np.float32)
    targets[:, 0] = [0.5, 0.4, 0.7, 0.2, 0.6]
    decision = np.array([3, 0, 3, 0, 3])  # two decisions, rows out of order
    dt = DecisionTargets(net, pos, targets, decision)
    assert len(dt) == 2
    from bgbot.evaluation.evaluator import position_probabilities

    mine = -equity(position_probabilities(evaluator, pos).astype(np.float64))
    theirs = -equity(targets.astype(np.float64))
    by_hand = []
    for d in (0, 3):
        m = decision == d
        e = mine[m] - theirs[m]
        by_hand.extend((e - e.mean()) ** 2)
    with torch_no_grad():
        got = float(dt.loss(np.array([0, 1])))
    assert got == pytest.approx(np.mean(by_hand), rel=1e-4)
    with torch_no_grad():  # decision 1 alone (key 3: rows 0, 2, 4)
        one = float(dt.loss(np.array([1])))
    e = mine[[0, 2, 4]] - theirs[[0, 2, 4]]
    assert one == pytest.approx(np.mean((e - e.mean()) ** 2), rel=1e-4)


def torch_no_grad():
    import torch

    return torch.no_grad()


def test_a_fit_with_decisions_learns_the_candidates_order(plays_store, tmp_path, capsys):
    """Fitted to a plays store's own decisions, the nets' 0-ply choice among the candidates loses less against the
    rollouts' best than the model it started from (the training decisions themselves: a fit that cannot move them
    would fail this)."""
    run = tmp_path / "fit"
    args = ["fit", "--init", str(ROOT / MODEL), "--targets", str(plays_store), "--decisions", str(plays_store),
            "--decision-weight", "4", "--run-dir", str(run), "--epochs", "20", "--lr", "1e-3", "--quiet"]  # fmt: skip
    assert stages.main(args) == 0
    capsys.readouterr()
    curve = [json.loads(line) for line in (run / "curve.jsonl").read_text().splitlines()]
    assert curve[-1]["val"]["decisions"] < 0.7 * curve[0]["val"]["decisions"]
    from training.fit import load_decisions

    pos, tg, key = load_decisions([str(plays_store)])
    before = plays.choice_losses(_probs(MODEL, pos), key, tg)
    after = plays.choice_losses(_probs(str(run / "latest.pt"), pos), key, tg)
    assert after.mean() < before.mean()
    # refused: a weight that is not a positive number, a folder without plays parts, --classes beside --decisions
    bad = args[:-9] + ["--run-dir", str(tmp_path / "b"), "--decision-weight", "0", "--quiet"]
    assert stages.main(bad) == 2 and "--decision-weight" in capsys.readouterr().err
    other = ["fit", "--init", str(ROOT / MODEL), "--targets", str(plays_store), "--decisions", str(POOL.parent),
             "--run-dir", str(tmp_path / "c"), "--quiet"]  # fmt: skip
    assert stages.main(other) == 2
    assert "no plays parts" in capsys.readouterr().err
    lone = ["fit", "--init", str(ROOT / MODEL), "--targets", str(plays_store), "--decision-weight", "2",
            "--run-dir", str(tmp_path / "d"), "--quiet"]  # fmt: skip
    assert stages.main(lone) == 2 and "give --decisions too" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


def _probs(model: str, pos: np.ndarray) -> np.ndarray:
    from bgbot.evaluation.evaluator import position_probabilities

    path = model if Path(model).is_absolute() else str(ROOT / model)
    return position_probabilities(load_model(path)[1], pos)


def test_a_truncated_variance_reduced_plays_store_records_its_horizon_and_rolls_out_by_it(
    pool, tmp_path, evaluator, capsys
):
    store = tmp_path / "truncated"
    argv = plan(store, pool, "--truncate", "4", "--variance-reduction")
    argv[argv.index("--size") + 1] = "20"
    assert stages.main(argv) == 0
    settings = campaign.load_settings(store)
    assert settings.rollout["truncate"] == 4 and settings.rollout["variance_reduction"] is True
    # another horizon is another store
    other = plan(store, pool, "--truncate", "8", "--variance-reduction")
    other[other.index("--size") + 1] = "20"
    assert stages.main(other) == 2 and "other settings" in capsys.readouterr().err
    assert stages.main(["campaign", "run", "--store", str(store), "--quiet"]) == 0
    p = load_npz(campaign.part_path(store, 0))
    players = prune.PrunedEvaluator(evaluator, prune.filter_for(ROOT / MODEL))
    how = RolloutSettings(trials=36, truncate=4, seed=3 * 100_003, variance_reduction=True, move_filter=True)
    mean, se = rollout_positions(p["positions"], players, how)
    assert np.array_equal(p["targets"], np.clip(mean, 0, 1).astype(np.float32))
    assert np.array_equal(p["stderr"], se.astype(np.float32))


def test_a_fits_curve_judges_it_on_held_out_decisions(plays_store, tmp_path, capsys):
    """--held-out-decisions: each epoch records the nets' 0-ply choice loss on decisions never fitted; before the first
    step it is the initial model's (training.plays.choice_losses of its 0-ply, in millipoints)."""
    fitted, held = tmp_path / "fitted", tmp_path / "held"
    for folder, parts in ((fitted, (0, 1)), (held, (2,))):
        folder.mkdir()
        for n in parts:
            (folder / campaign.part_path(plays_store, n).name).symlink_to(campaign.part_path(plays_store, n))
    run = tmp_path / "fit"
    args = ["fit", "--init", str(ROOT / MODEL), "--targets", str(fitted), "--decisions", str(fitted),
            "--held-out-decisions", str(held), "--run-dir", str(run), "--epochs", "2", "--quiet"]  # fmt: skip
    assert stages.main(args) == 0
    capsys.readouterr()
    curve = [json.loads(line) for line in (run / "curve.jsonl").read_text().splitlines()]
    from training.fit import load_decisions

    pos, tg, key = load_decisions([str(held)])
    before = plays.choice_losses(_probs(MODEL, pos), key, tg)
    assert curve[0]["val"]["held_out_choice_mp"] == pytest.approx(1000 * before.mean(), abs=1e-3)  # float32 equities
    after = plays.choice_losses(_probs(str(run / "latest.pt"), pos), key, tg)
    assert curve[-1]["val"]["held_out_choice_mp"] == pytest.approx(1000 * after.mean(), abs=1e-3)
    assert all(r["val"]["held_out_decisions"] > 0 for r in curve)
    # a store that is fitted is not held out
    again = args[:-5] + [str(fitted), "--run-dir", str(tmp_path / "x"), "--quiet"]
    assert stages.main(again) == 2 and "is also fitted" in capsys.readouterr().err


def test_a_held_out_part_copied_into_a_fitted_folder_is_refused(plays_store, tmp_path, capsys):
    fitted, held = tmp_path / "fitted", tmp_path / "held"
    fitted.mkdir()
    held.mkdir()
    part = campaign.part_path(plays_store, 2)
    (fitted / part.name).write_bytes(part.read_bytes())
    (held / part.name).write_bytes(part.read_bytes())
    args = ["fit", "--init", str(ROOT / MODEL), "--targets", str(fitted), "--held-out-decisions", str(held),
            "--run-dir", str(tmp_path / "r"), "--quiet"]  # fmt: skip
    assert stages.main(args) == 2
    assert "the same part is in --targets or --decisions" in capsys.readouterr().err


def test_campaign_actions_refuse_the_options_of_another(tmp_path, capsys):
    run = ["campaign", "run", "--store", str(tmp_path / "s"), "--truncate", "3", "--parts", "1"]
    assert stages.main(run) == 2
    assert "campaign run does not take --truncate: an option of campaign plan" in capsys.readouterr().err
    status = ["campaign", "status", "--store", str(tmp_path / "s"), "--workers", "2"]
    assert stages.main(status) == 2 and "does not take --workers" in capsys.readouterr().err
    plan_ = [
        "campaign",
        "plan",
        "--store",
        str(tmp_path / "s"),
        "--model",
        MODEL,
        "--pool",
        str(tmp_path),
        "--parts",
        "3",
    ]
    assert stages.main(plan_) == 2 and "campaign plan does not take --parts" in capsys.readouterr().err
