"""The rollout campaign's store: planned by rule, rolled out part by part, resumed after a kill with the same parts,
and refusing a second process, foreign or torn parts and a full disk with one line each."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from bgbot.arena.rollout import RolloutSettings, rollout_positions
from bgbot.errors import BgbotError
from bgbot.evaluation import checkpoint
from bgbot.evaluation.specialists import evaluator_for
from bgbot.formats.store import exact_finished_games
from bgbot.rules.board import starting_position
from training import campaign, stages
from training.campaign import Reason
from training.fit import EncodedTargets, SingleFit, load_targets, stderr_weights
from training.parts import load_npz, save_npz
from training.targets import ply_targets

ROOT = Path(__file__).resolve().parents[1]
MODEL = str(ROOT / "models" / "bgbot-1.pt")
POOL = ROOT / "models" / "candidates" / "gen5" / "ply2-bgbot4" / "part-00000.npz"


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> Path:
    """A pool of 40 sampled positions (a committed sample part's first rows), classes included."""
    data = load_npz(POOL)
    out = tmp_path_factory.mktemp("pool")
    save_npz(out / "part-00000.npz", positions=data["positions"][:40], classes=data["classes"][:40], meta={})
    return out


def plan(store: Path, pool: Path, *extra: str, size: int = 9) -> list[str]:
    return ["campaign", "plan", "--store", str(store), "--model", MODEL, "--pool", str(pool), "--size", str(size),
            "--trials", "36", "--part-size", "3", "--quiet", *extra]  # fmt: skip


def arrays(path: Path) -> dict:
    """A part's arrays but its cost, and its meta but the code revision: what does not depend on when, where and by
    which commit it was made."""
    with np.load(path) as z:
        out = {k: z[k].tobytes() for k in z.files if k not in ("cost", "meta")}
        meta = json.loads(str(z["meta"]))
    meta.pop("git_revision")
    return out | {"meta": meta}


def test_plan_run_status_and_resume_after_kill_give_identical_parts(pool, tmp_path, capsys):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    for store in (whole, killed):
        assert stages.main(plan(store, pool, size=30)) == 0
    planned = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert planned["rows"] == 30 and planned["parts"] == 10
    assert stages.main(["campaign", "run", "--store", str(whole), "--quiet"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["made"] == 10 and done["store"]["positions"] == 30 and done["store"]["parts_done"] == 10
    gap = done["store"]["rollout_minus_0ply"]
    assert sum(g["positions"] for g in gap.values()) == 30
    planned_rows = load_npz(whole / campaign.PLAN_FILE)
    rolled = np.concatenate([load_npz(campaign.part_path(whole, n))["targets"] for n in range(10)])
    base = planned_rows["reasons"] == Reason.BASE
    by_hand = float(np.mean(rolled[base, 0].astype(np.float64) - planned_rows["probabilities"][base, 0]))
    assert gap["base"]["win_mean"] == pytest.approx(by_hand, abs=1e-9)

    # a run killed with SIGKILL once its first part is saved, then resumed
    cmd = [sys.executable, "-m", "training", "campaign", "run", "--store", str(killed), "--quiet"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not campaign.part_path(killed, 0).exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    saved = [n for n in range(10) if campaign.part_path(killed, n).exists()]
    assert 1 <= len(saved) < 10, saved
    assert stages.main(["campaign", "run", "--store", str(killed), "--quiet"]) == 0
    capsys.readouterr()
    assert not list(killed.glob(".part-*")), "a temporary file left by the kill is removed when the run resumes"
    for n in range(10):
        assert arrays(campaign.part_path(killed, n)) == arrays(campaign.part_path(whole, n))
    # a part's targets are the rollout of its plan rows with its seed: the store is only bookkeeping around it
    data = load_npz(campaign.part_path(whole, 1))
    ev = evaluator_for(checkpoint.load(MODEL)[0])
    plain = RolloutSettings(trials=36, seed=21 * 100_003 + 1, variance_reduction=False)
    mean, se = rollout_positions(data["positions"], ev, plain)
    assert np.array_equal(data["targets"], np.clip(mean, 0, 1).astype(np.float32))
    assert np.array_equal(data["stderr"], se.astype(np.float32))
    cost = json.loads(str(data["cost"]))
    assert cost["cpu_seconds"] > 0
    # planning again with the same settings changes nothing; other settings are refused
    assert stages.main(plan(whole, pool, size=30)) == 0
    assert json.loads(capsys.readouterr().out)["planned"] is False
    assert stages.main(plan(whole, pool, "--seed", "5", size=30)) == 2
    assert "other settings" in capsys.readouterr().err


def test_one_process_per_store_and_foreign_torn_parts_refused(pool, tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert stages.main(plan(a, pool)) == 0
    assert stages.main(plan(b, pool, "--seed", "8")) == 0
    with campaign.locked(a):
        assert stages.main(["campaign", "run", "--store", str(a), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "one process per store" in err and f"pid {os.getpid()}" in err
    assert stages.main(["campaign", "run", "--store", str(b), "--parts", "1", "--quiet"]) == 0
    capsys.readouterr()
    # a part of another campaign copied in
    campaign.part_path(a, 0).write_bytes(campaign.part_path(b, 0).read_bytes())
    assert stages.main(["campaign", "run", "--store", str(a), "--quiet"]) == 2
    assert "another campaign" in capsys.readouterr().err
    # a torn part
    raw = campaign.part_path(b, 0).read_bytes()
    campaign.part_path(a, 0).write_bytes(raw[: len(raw) // 2])
    assert stages.main(["campaign", "status", "--store", str(a)]) == 2
    err = capsys.readouterr().err
    assert "part-00000.npz" in err and "torn" in err and err.count("\n") == 1
    # not a store
    assert stages.main(["campaign", "status", "--store", str(tmp_path / "none")]) == 2
    assert "not a campaign store" in capsys.readouterr().err


def test_a_full_disk_stops_with_what_is_saved(pool, tmp_path, capsys, monkeypatch):
    store = tmp_path / "s"
    assert stages.main(plan(store, pool)) == 0
    assert stages.main(["campaign", "run", "--store", str(store), "--parts", "1", "--quiet"]) == 0
    capsys.readouterr()
    real = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    assert stages.main(["campaign", "run", "--store", str(store), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no space left" in err and "part-00001.npz" in err
    monkeypatch.setattr(os, "fsync", real)
    assert sorted(p.name for p in store.iterdir() if not p.name.startswith(".lock")) == [
        "campaign.json",
        "part-00000.npz",
        "plan.npz",
    ]  # no torn part and no temporary file left
    assert stages.main(["campaign", "run", "--store", str(store), "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["store"]["parts_done"] == 3


def test_reasons_follow_their_rules():
    start = starting_position()
    prime = np.zeros(26, dtype=np.int8)  # my 4-prime on points 4..7, an opponent checker on my 2 point
    prime[[4, 5, 6, 7]] = 2
    prime[13] = 7
    prime[2] = -2
    prime[24] = -13
    escaped = prime.copy()  # the same prime with every opponent checker past it
    escaped[2], escaped[12] = 0, -2
    assert campaign.primes_behind(np.stack([prime, escaped, start])).tolist() == [True, False, False]
    theirs = -prime[::-1]  # the opponent's prime, my checker behind it
    assert campaign.primes_behind(theirs[None]).tolist() == [True]
    rows = np.stack([start] * 6)
    classes = np.array([1, 4, 1, 2, 3, 3], dtype=np.int8)
    probs = np.zeros((6, 5), dtype=np.float32)
    probs[:, 0] = [0.70, 0.70, 0.50, 0.50, 0.70, 0.95]
    probs[:, 1] = [0.10, 0.01, 0.10, 0.10, 0.00, 0.00]
    got = campaign.reasons_of(classes, probs, rows).tolist()
    assert got == [Reason.CUBE, Reason.BACKGAME, Reason.BASE, Reason.CRASHED, Reason.RACE_CUBE, Reason.BASE]
    order = campaign.interleave(np.array([Reason.BASE] * 3 + [Reason.CUBE] * 4, dtype=np.int8), seed=1, size=5)
    # the schedule takes cube, cube, cube, then base, then cube again (the other streams are empty)
    assert [int(i >= 3) for i in order] == [1, 1, 1, 0, 1] and len(set(order.tolist())) == 5


def test_cost_table_compares_each_kind_with_the_reference(pool, tmp_path):
    ref = tmp_path / "ref"
    assert stages.main(plan(ref, pool, size=6)) == 0
    assert stages.main(["campaign", "run", "--store", str(ref), "--quiet"]) == 0
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "cost_table.py"),
            "--reference",
            str(ref),
            "--positions",
            "4",
            "--kinds",
            "ply0,plain36",
        ],  # fmt: skip
        capture_output=True,
        text=True,
        check=True,
    )
    table = json.loads(out.stdout)
    assert table["reference"]["positions"] == 4 and [k["kind"] for k in table["kinds"]] == ["ply0", "plain36"]
    refs = [load_npz(campaign.part_path(ref, n)) for n in (0, 1)]
    pos = np.concatenate([r["positions"] for r in refs])[:4]
    target = np.concatenate([r["targets"] for r in refs])[:4]
    ev = evaluator_for(checkpoint.load(MODEL)[0])
    bias = float(np.mean(ply_targets(ev, pos, 0)[:, 0].astype(np.float64) - target[:, 0]))
    assert table["kinds"][0]["win"]["bias"] == pytest.approx(bias, abs=1e-6)
    for k in table["kinds"]:  # an error within the tiny reference's own noise is reported as such, not as 0
        assert k["cpu_s"] > 0 and (k["win"]["rmse"] is None) == k["win"]["below_reference_noise"]
        assert k["win"]["rmse"] is None or k["win"]["rmse"] > 0


def test_cube_errors_are_the_referees_cost_of_each_models_action():
    from bgbot.arena import cubegate
    from bgbot.cube.decision import decide
    from bgbot.rules.state import CubeState, MatchState

    start = starting_position()
    positions = np.stack([start] * 3)
    ref = np.array([[0.78, 0.25, 0.01, 0.04, 0.0], [0.60, 0.10, 0.0, 0.05, 0.0], [0.30, 0.05, 0.0, 0.1, 0.0]])
    same = cubegate.decision_errors(ref, positions, ref)
    assert same["double"][:2].tolist() == [0.0, 0.0] and np.isnan(same["double"][2])  # 0.30 is outside the window
    timid = ref.copy()
    timid[0] = [0.52, 0.05, 0.0, 0.05, 0.0]  # a model that sees no double in the first position
    got = cubegate.decision_errors(timid, positions, ref)
    r = decide(ref[:1], CubeState(), MatchState(), cubegate.efficiency(start))
    assert min(r.equities["double_take"], r.equities["double_pass"]) > r.equities["no_double"]  # the referee doubles
    assert got["double"][0] == pytest.approx(1000 * r.errors["no_double"]) and got["double"][0] > 0
    mean, low, high = cubegate.paired(got["double"], same["double"])
    assert mean == pytest.approx(got["double"][0] / 2) and low < mean < high


def test_gate_with_cube_reference_records_both_models_cube_errors(pool, tmp_path, capsys, monkeypatch):
    ref = tmp_path / "ref"
    assert stages.main(plan(ref, pool, size=30)) == 0
    assert stages.main(["campaign", "run", "--store", str(ref), "--quiet"]) == 0
    capsys.readouterr()
    five = str(ROOT / "models" / "bgbot-5.pt")
    same = str(shutil.copy(MODEL, tmp_path / "same.pt"))  # the model's weights under another name: no gain
    argv = ["gate", "--candidate", same, "--against", MODEL, "--games", "4", "--cube-reference", str(ref), "--quiet"]
    assert stages.main(argv) == 2  # 36 trials a position: not long rollouts
    assert "its rollouts have 36 trials, fewer than 2592" in capsys.readouterr().err
    from bgbot.arena import cubegate

    monkeypatch.setattr(cubegate, "MIN_REFERENCE_TRIALS", 36)
    assert stages.main(argv) == 2  # a few held-out decisions judge nothing: refused, never a pass
    assert "too few to judge the cube" in capsys.readouterr().err
    monkeypatch.setattr(cubegate, "MIN_DECISIONS", 1)
    assert stages.main(argv) == 1  # rejected: exit status 1, the record printed
    record = json.loads(capsys.readouterr().out)
    cube = record["cube"]
    assert cube["positions"] == 30 and cube["diff"]["double"]["mean"] in (0.0, None) and cube["not_worse"]
    assert record["accepted"] is False  # a model against itself gains nothing in ppg
    argv[4] = five
    assert stages.main(argv) == 1  # 4 games: never accepted
    other = json.loads(capsys.readouterr().out)["cube"]
    n = other["against"]["double"]["decisions"]
    assert n == cube["candidate"]["double"]["decisions"] and n > 0  # the window is the referee's, not a model's
    assert other["against"]["double"]["mean_millipoints"] == cube["against"]["double"]["mean_millipoints"]


def test_fit_weighs_rollout_targets_by_their_standard_errors(pool, tmp_path, capsys):
    ref = tmp_path / "ref"
    assert stages.main(plan(ref, pool, size=12)) == 0
    assert stages.main(["campaign", "run", "--store", str(ref), "--quiet"]) == 0
    pos, tg, se, _ = load_targets([str(ref)])
    assert se.shape == (12, 5) and (se[:, 0] > 0).all()
    w = stderr_weights(se, 0.02)
    assert w[0, 0] == pytest.approx(0.02**2 / (0.02**2 + float(se[0, 0]) ** 2), rel=1e-6) and (w <= 1).all()
    assert (stderr_weights(np.zeros((2, 5)), 0.02) == 1).all()  # exact targets weigh 1
    net = SingleFit(checkpoint.load(MODEL)[0])
    rows = np.array([0, 5, 11, 5])
    with torch_no_grad():
        x = EncodedTargets(net, pos, tg, w)
        out = net.net(x.inputs[0][rows]).numpy()
        by_hand = float((w[rows] * (out - tg[rows]) ** 2).sum() / (5 * len(rows)))
        assert float(x.loss(rows)) == pytest.approx(by_hand, rel=1e-5)
        assert float(x.loss(rows)) < float(EncodedTargets(net, pos, tg).loss(rows))
    # the option reaches the fit and is part of what a resumed fit must see again
    run = tmp_path / "fit"
    argv = ["fit", "--init", MODEL, "--targets", str(ref), "--run-dir", str(run), "--epochs", "1", "--arch", "single"]
    assert stages.main([*argv, "--stderr-scale", "0.02", "--val-frac", "0.25", "--quiet"]) == 0
    assert stages.main([*argv, "--stderr-scale", "0.05", "--val-frac", "0.25", "--quiet", "--resume"]) == 2
    assert "stderr_scale" in capsys.readouterr().err
    assert stages.main([*argv, "--stderr-scale", "-1", "--run-dir", str(tmp_path / "f2"), "--quiet"]) == 2
    assert "--stderr-scale must be" in capsys.readouterr().err


def torch_no_grad():
    import torch

    return torch.no_grad()


def test_campaign_json_records_each_reasons_own_rule(pool, tmp_path):
    assert stages.main(plan(tmp_path / "s", pool)) == 0
    rules = json.loads((tmp_path / "s" / campaign.STORE_FILE).read_text())["rules"]
    positions = [r for r in Reason if r is not Reason.PLAY]  # a plays store's own reason (tests/test_campaign_plays.py)
    words = [rules[r.name.lower()] for r in positions]
    assert len(set(words)) == len(positions), "every reason has its own rule, not the enum's docstring"
    assert "play" not in rules
    assert "back-game" in rules["backgame"] and "race" in rules["race_cube"].lower()


def test_an_exclude_that_leaves_nothing_is_one_error_line(pool, tmp_path, capsys):
    assert stages.main(plan(tmp_path / "s", pool, "--exclude", str(pool))) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "no positions" in err and err.count("\n") == 1
    assert stages.main(plan(tmp_path / "s", pool, "--exclude", str(tmp_path / "nowhere"))) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "--exclude" in err
    assert not (tmp_path / "s" / campaign.STORE_FILE).exists()


def test_a_part_with_other_positions_or_non_finite_targets_is_refused(pool, tmp_path, capsys):
    store = tmp_path / "s"
    assert stages.main(plan(store, pool)) == 0
    assert stages.main(["campaign", "run", "--store", str(store), "--parts", "1", "--quiet"]) == 0
    capsys.readouterr()
    path = campaign.part_path(store, 0)
    good = path.read_bytes()
    with np.load(path) as z:
        data = {k: z[k] for k in z.files}
    for name in ("positions", "targets"):
        if name == "positions":  # a consistent but shorter part: every array one row short
            bad = {k: (v[:-1] if v.ndim else v) for k, v in data.items()}
        else:
            bad = dict(data, targets=data["targets"].copy())
            bad["targets"][0, 0] = np.nan
        with open(path, "wb") as f:
            np.savez(f, **bad)
        assert stages.main(["campaign", "status", "--store", str(store)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error:") and "part-00000.npz" in err, (name, err)
    path.write_bytes(good)
    assert stages.main(["campaign", "status", "--store", str(store)]) == 0


def test_a_store_path_that_is_a_file_is_one_clear_error_line(pool, tmp_path, capsys):
    file = tmp_path / "notes.txt"
    file.write_text("not a store\n")
    for store, words in ((file, "is a file, not a directory"), (file / "s", f"{str(file)!r} is a file")):
        assert stages.main(plan(store, pool)) == 2
        err = capsys.readouterr().err
        assert err.startswith("error:") and err.count("\n") == 1, err
        assert str(store) in err and words in err and "Errno" not in err, err
    for action in ("run", "status"):
        assert stages.main(["campaign", action, "--store", str(file), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert f"{str(file)!r} is a file, not a campaign store" in err and err.count("\n") == 1, err
    assert file.read_text() == "not a store\n"


def test_a_part_saved_under_another_number_is_called_misnumbered(pool, tmp_path, capsys):
    store = tmp_path / "s"
    assert stages.main(plan(store, pool)) == 0
    assert stages.main(["campaign", "run", "--store", str(store), "--parts", "2", "--quiet"]) == 0
    capsys.readouterr()
    campaign.part_path(store, 0).write_bytes(campaign.part_path(store, 1).read_bytes())
    assert stages.main(["campaign", "status", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and err.count("\n") == 1, err
    assert "part-00000.npz" in err and "misnumbered" in err and "holds part 1's positions" in err, err
    assert "another campaign" not in err


def test_the_committed_stores_are_accepted_as_they_are():
    """Stores planned and rolled out by earlier revisions (whose ``campaign.json`` records the rules' wording of their
    day) read back whole: every part's recorded settings match its store's."""
    for name, parts, positions in (("campaign-1", 14, 1400), ("campaign-1-holdout", 20, 200)):
        got = campaign.status(ROOT / "models" / "candidates" / name)
        assert (got["parts_done"], got["positions"]) == (parts, positions), name


def test_each_reason_carries_its_rule():
    assert [r.rule for r in Reason] == list(campaign.RULES.values())
    assert Reason(3) is Reason.PRIME and Reason.PRIME.rule.startswith("A side has four or more consecutive")
    assert "0.058 in win probability" in Reason.BACKGAME.rule


def test_a_store_planned_otherwise_names_each_setting_that_differs_and_status_shows_truncate(pool, tmp_path, capsys):
    store = tmp_path / "s"
    assert stages.main(plan(store, pool, "--truncate", "4")) == 0
    capsys.readouterr()
    assert stages.main(plan(store, pool, "--trials", "72", "--seed", "5")) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {str(store)!r} holds a campaign planned with other settings (")
    assert err.count("\n") == 1
    for differs in (
        "rollout.trials: 36 in the store, 72 asked",
        "rollout.truncate: 4 in the store, 0 asked",
        "rollout.seed: 21 in the store, 5 asked",
        "seed: 21 in the store, 5 asked",
    ):
        assert differs in err, (differs, err)
    assert "model" not in err and "part_size" not in err  # only what differs is named
    assert stages.main(["campaign", "status", "--store", str(store)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["trials"], shown["truncate"]) == (36, 4)


def test_a_store_is_planned_again_with_its_model_by_another_path_or_a_copy(pool, tmp_path, capsys, monkeypatch):
    """The model is compared by its SHA-256, not its path: the same file by a relative path, or a byte-identical copy,
    plans the store again (nothing changes); another model is refused naming both."""
    store = tmp_path / "s"
    assert stages.main(plan(store, pool)) == 0
    capsys.readouterr()
    copy = tmp_path / "copy.pt"
    shutil.copyfile(MODEL, copy)
    monkeypatch.chdir(tmp_path)
    for same in (os.path.relpath(MODEL), str(copy), "copy.pt"):
        argv = [same if a == MODEL else a for a in plan(store, pool)]
        assert stages.main(argv) == 0, (same, capsys.readouterr().err)
        assert json.loads(capsys.readouterr().out)["planned"] is False
    other = str(ROOT / "models" / "bgbot-0.pt")
    assert stages.main([other if a == MODEL else a for a in plan(store, pool)]) == 2
    err = capsys.readouterr().err
    assert f"model: {MODEL!r} (SHA-256 " in err and f"in the store, {other!r} (SHA-256 " in err, err
    assert "model_sha256" not in err and err.count("\n") == 1


def test_a_pool_given_twice_is_refused(pool, tmp_path, capsys):
    for again in (str(pool), str(pool) + "/"):
        assert stages.main(plan(tmp_path / "s", pool, "--pool", str(pool), again)) == 2
        err = capsys.readouterr().err
        also = "" if again == str(pool) else f" (also as {str(pool)!r})"
        assert err == f"error: --pool {again!r} is given twice{also}: give it once\n"
    assert not (tmp_path / "s").exists()


def test_targets_of_finished_games_are_read_as_their_results(tmp_path):
    # Row 0: the afterstate of a play that bore off the mover's last checker (the side on roll, 15 on the board and
    # none off, has lost a gammon), stored with the wrong target of rollouts that did not score it; row 1 a race.
    over = np.zeros(26, dtype=np.int8)
    over[[5, 6, 8, 9, 11, 13]] = [2, 4, 2, 2, 1, 4]
    race = starting_position().copy()
    race[:] = 0
    race[[1, 2, 3]] = [5, 5, 5]
    race[[22, 23, 24]] = [-5, -5, -5]
    positions = np.stack([over, race])
    targets = np.array([[1, 0, 0, 0, 0], [0.6, 0.01, 0, 0.02, 0]], dtype=np.float32)
    stderr = np.array([[0.01] * 5, [0.02] * 5], dtype=np.float32)
    t, s = exact_finished_games(positions, targets, stderr)
    assert t.tolist()[0] == [0, 0, 0, 1, 0] and s[0].tolist() == [0] * 5
    assert np.array_equal(t[1], targets[1]) and np.array_equal(s[1], stderr[1])
    assert targets[0].tolist() == [1, 0, 0, 0, 0]  # the inputs are left alone
    save_npz(tmp_path / "part-00000.npz", positions=positions, targets=targets, stderr=stderr, meta={"kind": "rollout"})
    _, read, read_se, _ = load_targets([str(tmp_path)])
    assert read.tolist()[0] == [0, 0, 0, 1, 0] and read_se[0].tolist() == [0] * 5


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda d: d.update(rules=None), "rules is None, not dict"),
        (lambda d: d["rollout"].update(trials="5184"), "rollout.trials is '5184', not int"),
        (lambda d: d.update(part_size=True), "part_size is True, not int"),
        (lambda d: d.update(sources="a"), "sources is 'a', not list"),
    ],
)
def test_a_hand_edited_campaign_file_of_wrong_types_is_refused_naming_the_field(tmp_path, edit, words):
    src = Path(__file__).resolve().parents[1] / "models" / "candidates" / "campaign-1-holdout" / "campaign.json"
    data = json.loads(src.read_text())
    edit(data)
    (tmp_path / "campaign.json").write_text(json.dumps(data))
    with pytest.raises(BgbotError, match=re.escape(words)):
        campaign.load_settings(tmp_path)
