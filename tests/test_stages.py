"""Training stages after TD: sample -> targets -> fit -> gate, their files, resume, and the command lines."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bgbot.cli import main as bgbot_main
from bgbot.evaluation import checkpoint, specialists
from bgbot.evaluation.classes import CLASS_NAMES, PositionClass, classify_batch
from bgbot.evaluation.evaluator import afterstate_probabilities, position_probabilities
from bgbot.evaluation.network import Evaluator
from bgbot.rules.movegen import ROLL_WEIGHTS, ROLLS, generate_plays
from bgbot.rules.outcomes import equity
from tests.positions import make_positions
from training import cli
from training.fit import EncodedTargets, SingleFit, load_targets
from training.parts import load_npz, part_number, save_npz
from training.sample import SAMPLE_CLASSES, sample_classes
from training.targets import ply_targets

MODEL = str(Path(__file__).resolve().parents[1] / "models" / "bgbot-1.pt")


def one_ply_by_hand(evaluator, position: np.ndarray) -> np.ndarray:
    """The side on roll's 1-ply probabilities: each roll's best play by 0-ply equity, weighted 1/36 or 2/36."""
    total = np.zeros(5)
    for roll, w in zip(ROLLS, ROLL_WEIGHTS):
        plays = generate_plays(position[None], np.array([roll]))
        probs = afterstate_probabilities(evaluator, plays.afterstates)
        total += w * probs[int(np.argmax(equity(probs)))]
    return total


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen") / "positions"
    argv = ["sample", "--model", MODEL, "--out", str(out), "--positions", "40", "--part-size", "20"]
    assert cli.main([*argv, "--games-in-flight", "16", "--seed", "3", "--quiet"]) == 0
    return out


def test_sample_parts_are_seeded_and_resumable(sampled, tmp_path):
    parts = sorted(sampled.glob("part-*.npz"))
    assert len(parts) == 2
    z = load_npz(parts[1])
    assert z["positions"].shape == (20, 26) and z["positions"].dtype == np.int8
    assert len({p.tobytes() for p in z["positions"]}) == 20  # no repeats within a part
    np.testing.assert_array_equal(z["classes"], sample_classes(z["positions"]))
    assert z["meta"]["generation"] == 1 and z["meta"]["part"] == 1 and z["meta"]["model"] == MODEL
    # part 1 alone, in another directory, is the same part: the dice come from (seed, part)
    (tmp_path / "p").mkdir()
    parts[0].rename(tmp_path / "p" / parts[0].name)  # take part 0 away: a rerun makes it again
    assert cli.main(["sample", "--model", MODEL, "--out", str(sampled), "--positions", "40", "--part-size", "20",
                     "--games-in-flight", "16", "--seed", "3", "--quiet"]) == 0  # fmt: skip
    again = load_npz(sampled / parts[0].name)
    np.testing.assert_array_equal(again["positions"], load_npz(tmp_path / "p" / parts[0].name)["positions"])
    argv = ["sample", "--model", MODEL, "--out", str(sampled), "--positions", "60", "--part-size", "20", "--quiet"]
    assert cli.main([*argv, "--games-in-flight", "16", "--seed", "4"]) == 2  # another seed: not added to this sample
    assert len(list(sampled.glob("part-*.npz"))) == 2


def test_targets_fit_gate(sampled, tmp_path, capsys):
    net, _ = checkpoint.load(MODEL)
    ev = Evaluator(net)
    t1 = tmp_path / "t1"
    assert cli.main(["targets", "--model", MODEL, "--positions", str(sampled), "--out", str(t1), "--kind", "ply1",
                     "--quiet", "--limit", "1"]) == 0  # fmt: skip
    z = load_npz(t1 / "part-00000.npz")
    assert z["meta"]["kind"] == "ply1" and z["targets"].shape == (20, 5)
    for i in (0, 7, 19):
        np.testing.assert_allclose(z["targets"][i], one_ply_by_hand(ev, z["positions"][i]), atol=2e-6)
    np.testing.assert_allclose(ply_targets(ev, z["positions"], 0), ev.evaluate(z["positions"]), atol=0)
    # fit: one epoch, then resume for a second; the curve has a line per epoch plus the start
    run = tmp_path / "fit"
    base = ["fit", "--init", MODEL, "--targets", str(t1), "--run-dir", str(run), "--batch", "8", "--quiet"]
    assert cli.main([*base, "--epochs", "1"]) == 0
    assert cli.main([*base, "--epochs", "1"]) == 2  # already there without --resume
    assert "already holds a fit" in capsys.readouterr().err
    assert cli.main([*base, "--epochs", "2", "--resume"]) == 0
    curve = [json.loads(s) for s in (run / "curve.jsonl").read_text().splitlines()]
    assert [c["epoch"] for c in curve] == [0, 1, 2]
    fitted, meta = checkpoint.load(run / "latest.pt")
    assert isinstance(fitted, specialists.ClassNets) and meta.training_config["epoch"] == 2
    assert (run / "best.pt").exists()
    # gate: duplicate games against the previous generation and pubeval, one JSON record
    rec = tmp_path / "gate.json"
    argv = ["train", "gate", "--candidate", str(run / "latest.pt"), "--against", MODEL, "--games", "4"]
    assert bgbot_main([*argv, "--opponent", "pubeval", "--out", str(rec), "--quiet"]) == 1  # rejected, as bgbot gate
    r = json.loads(rec.read_text())
    assert set(r["results"]) == {MODEL, "pubeval"} and r["results"]["pubeval"]["games"] == 4
    # 4 games: too few for a reliable interval (bgbot.arena.stats.MIN_INTERVAL_GAMES), so never accepted
    assert r["results"][MODEL]["interval_reliable"] is False and r["accepted"] is False


@pytest.fixture(scope="module")
def ply0_targets(sampled, tmp_path_factory):
    out = tmp_path_factory.mktemp("t0") / "ply0"
    argv = ["targets", "--model", MODEL, "--positions", str(sampled), "--out", str(out), "--kind", "ply0"]
    assert cli.main([*argv, "--quiet", "--limit", "1"]) == 0
    return out


def test_fit_single_net_and_v1_specialists(ply0_targets, tmp_path, capsys):
    net, _ = checkpoint.load(MODEL)
    z = load_npz(ply0_targets / "part-00000.npz")
    # epoch 0's validation loss is bgbot-1's own mean squared error over the 5 outputs (1 of 20 positions held out)
    run = tmp_path / "single"
    base = ["fit", "--init", MODEL, "--targets", str(ply0_targets), "--batch", "8", "--quiet", "--seed", "2"]
    assert cli.main([*base, "--run-dir", str(run), "--epochs", "1", "--arch", "single", "--lr", "0.01"]) == 0
    curve = [json.loads(s) for s in (run / "curve.jsonl").read_text().splitlines()]
    val = np.random.default_rng(2).permutation(20)[:1]
    out = Evaluator(net, check=False).evaluate(z["positions"][val])
    assert curve[0]["val"]["all"] == pytest.approx(float(((out - z["targets"][val]) ** 2).mean()), abs=1e-7)
    fitted, meta = checkpoint.load(run / "latest.pt")
    assert not getattr(fitted, "is_class_nets", False) and fitted.config == net.config
    assert meta.training_config["arch"] == "single" and meta.training_config["encoding"] == net.config.encoding_version
    assert not np.allclose(fitted.hidden.weight.detach().numpy(), net.hidden.weight.detach().numpy())
    # a single-net run resumes only as one; specialists never become one net
    assert cli.main([*base, "--run-dir", str(run), "--epochs", "2", "--resume"]) == 2
    assert "this run holds a single net: resume it with --arch single" in capsys.readouterr().err
    spec = tmp_path / "spec"
    assert cli.main([*base, "--run-dir", str(spec), "--epochs", "1", "--encoding", "v1", "--lr", "0"]) == 0
    nets, meta = checkpoint.load(spec / "latest.pt")
    assert {c.encoding_version for c in nets.configs().values()} == {net.config.encoding_version}
    # lr 0: each specialist is still an exact copy of bgbot-1
    ev = specialists.evaluator_for(nets, check=False)
    np.testing.assert_allclose(
        ev.evaluate(z["positions"]), Evaluator(net, check=False).evaluate(z["positions"]), atol=1e-6
    )
    argv = [*base, "--run-dir", str(tmp_path / "x"), "--epochs", "1", "--arch", "single"]
    assert cli.main([*argv[:2], str(spec / "latest.pt"), *argv[3:]]) == 2
    assert "--arch single needs a single net: --init holds specialist nets" in capsys.readouterr().err


def test_encoded_targets_give_the_nets_own_loss(ply0_targets):
    # the fit encodes every position once; its loss over any rows equals the nets' loss computed from the boards
    z = load_npz(ply0_targets / "part-00000.npz")
    pos, tg = z["positions"], z["targets"] + np.float32(0.01)
    net, _ = checkpoint.load(MODEL)
    rows = np.array([3, 0, 17, 3, 9, 12])
    for model in (
        SingleFit(net),
        specialists.from_single(net),
        specialists.from_single(net, net.config.encoding_version),
    ):
        got = float(EncodedTargets(model, pos, tg).loss(rows).detach())
        assert got == pytest.approx(float(model.loss(pos[rows], tg[rows]).detach()), rel=1e-6) and got > 0


def test_targets_of_tagged_parts_and_badly_named_ones(sampled, tmp_path, capsys):
    # parts gathered from several samples keep a tag (part-A1-00003.npz); their targets keep the name and the positions
    import shutil

    src = tmp_path / "gathered"
    src.mkdir()
    shutil.copy(sampled / "part-00001.npz", src / "part-A1-00001.npz")
    argv = ["targets", "--model", MODEL, "--positions", str(src), "--kind", "ply0", "--quiet"]
    assert cli.main([*argv, "--out", str(tmp_path / "t")]) == 0
    z = load_npz(tmp_path / "t" / "part-A1-00001.npz")
    np.testing.assert_array_equal(z["positions"], load_npz(sampled / "part-00001.npz")["positions"])
    assert part_number(src / "part-A1-00001.npz") != part_number(src / "part-B1-00001.npz")
    assert part_number(src / "part-00001.npz") == 1
    shutil.copy(sampled / "part-00001.npz", src / "part-A1-x.npz")
    assert cli.main([*argv, "--out", str(tmp_path / "t2")]) == 2
    assert "part-A1-x.npz': a part is named part-NNNNN.npz or part-TAG-NNNNN.npz" in capsys.readouterr().err


def test_rollout_kind_and_missing_inputs_say_why(tmp_path, capsys, monkeypatch):
    args = ["targets", "--model", MODEL, "--positions", str(tmp_path), "--out", str(tmp_path / "o"), "--quiet"]
    assert cli.main([*args, "--kind", "ply2"]) == 2
    assert "no positions parts" in capsys.readouterr().err
    sample = ["sample", "--model", MODEL, "--out", str(tmp_path / "s")]
    for argv, message in (
        ([*sample, "--positions", "0"], "argument --positions: a whole number >= 1, got 0"),
        ([*sample, "--positions", "5", "--seed", "-1"], "argument --seed: a whole number >= 0, got -1"),
        (["sample", "--model", MODEL, "--out", "", "--positions", "5"], "argument --out: a directory name"),
    ):
        with pytest.raises(SystemExit) as exit_:
            cli.main(argv)
        assert exit_.value.code == 2 and message in capsys.readouterr().err
    gate = ["gate", "--candidate", MODEL, "--against", "pubeval"]
    assert cli.main([*gate, "--games", "3"]) == 2  # the tournament's own check: one line, no traceback
    err = capsys.readouterr().err
    assert err.startswith("error: games per pairing must be an even number") and err.count("\n") == 1
    assert not list(tmp_path.glob("*.npz")) and not (tmp_path / "s").exists()

    # an --out that is a directory is refused before the games (the record was lost after them, naming a temp file)
    def no_games(*a, **k):
        raise AssertionError("games played before --out was checked")

    monkeypatch.setattr("bgbot.arena.benchmark.benchmark", no_games)
    assert cli.main([*gate, "--games", "4", "--out", str(tmp_path)]) == 2
    assert (
        capsys.readouterr().err
        == f"error: --out {str(tmp_path)!r} is not a regular file (a directory?): give the JSON record's file name\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_an_out_that_is_a_file_is_one_line_naming_it(tmp_path, capsys):
    taken = tmp_path / "taken"
    taken.write_text("keep me")
    for stage in ("sample", "select"):
        argv = [stage, "--model", MODEL, "--positions", "5" if stage == "sample" else str(tmp_path), "--quiet"]
        assert cli.main([*argv, "--out", str(taken)]) == 2
        assert capsys.readouterr().err == (
            f"error: --out {str(taken)!r} exists and is not a directory: give a directory for the parts\n"
        ), stage
    assert taken.read_text() == "keep me"


def test_rollout_one_half_move_is_exactly_one_ply():
    # With variance reduction a one-half-move rollout returns the 21-roll mean itself: the 1-ply value, every trial.
    from training.rollout import rollout

    net, _ = checkpoint.load(MODEL)
    ev = Evaluator(net)
    pos = make_positions(200, seed=5)[::40]
    mean, err = rollout(ev, pos, trials=4, horizon=1)
    np.testing.assert_allclose(mean, np.clip(ply_targets(ev, pos, 1), 0, 1), atol=1e-5)
    assert (err < 1e-5).all()
    mean2, err2 = rollout(ev, pos, trials=36, horizon=4, seed=3)
    assert (err2 > 0).any() and (mean2 >= 0).all() and (mean2 <= 1).all()
    np.testing.assert_allclose(equity(mean2), equity(ply_targets(ev, pos, 1)), atol=0.25)


def test_bgbot_train_keeps_the_td_arguments(tmp_path):
    run = tmp_path / "td"
    assert (
        bgbot_main(["train", "--config", "tiny", "--run-dir", str(run), "--games", "64", "--no-eval", "--quiet"]) == 0
    )
    assert (run / "latest.pt").exists()
    run2 = tmp_path / "td2"
    assert cli.main(["td", "--config", "tiny", "--run-dir", str(run2), "--games", "64", "--no-eval", "--quiet"]) == 0
    assert (run2 / "latest.pt").exists()


def test_td_of_specialists_runs_and_resumes(tmp_path):
    cfg = tmp_path / "spec.toml"
    cfg.write_text(
        "specialists = true\ngames = 16\ngames_in_flight = 8\nn_hidden = 8\nlr = 1e-3\nlr_final = 5e-4\n"
        "td_lambda = 0.5\nlambda_horizon = 3\nseed = 4\ncheckpoint_every = 8\neval_every = 0\neval_games = 2\n"
    )
    run = tmp_path / "run"
    assert cli.main(["td", "--config", str(cfg), "--run-dir", str(run), "--quiet", "--no-eval"]) == 0
    net, meta = checkpoint.load(run / "latest.pt")
    assert isinstance(net, specialists.ClassNets) and meta.format_version == 2 and meta.games_trained >= 16
    assert meta.optimizer_state is not None
    args = ["td", "--config", str(cfg), "--run-dir", str(run), "--quiet", "--no-eval", "--resume", "--games", "32"]
    assert cli.main(args) == 0
    assert checkpoint.load(run / "latest.pt")[1].games_trained >= 32


def test_select_keeps_classes_and_win_range(sampled, tmp_path, capsys):
    net, _ = checkpoint.load(MODEL)
    ev = Evaluator(net)
    out = tmp_path / "sel"
    argv = ["select", "--model", MODEL, "--positions", str(sampled), "--out", str(out), "--quiet"]
    assert cli.main([*argv, "--classes", "contact,crashed", "--win", "0.3", "0.8", "--part-size", "7"]) == 0
    summary = json.loads(capsys.readouterr().out)
    every = [load_npz(p) for p in sorted(sampled.glob("part-*.npz"))]
    pos = np.concatenate([z["positions"] for z in every])
    cls = np.concatenate([z["classes"] for z in every])
    win = position_probabilities(ev, pos)[:, 0]
    want = np.flatnonzero(np.isin(cls, [1, 2]) & (win >= 0.3) & (win <= 0.8))
    _, first = np.unique(pos[want], axis=0, return_index=True)
    want = want[np.sort(first)]  # a position in both parts (each game starts alike) is kept once, where first met
    assert summary["scanned"] == 40 and summary["kept"] == len(want) > 0
    parts = sorted(out.glob("part-*.npz"))
    assert len(parts) == -(-len(want) // 7) and all(len(load_npz(p)["positions"]) <= 7 for p in parts)
    got = np.concatenate([load_npz(p)["positions"] for p in parts])
    np.testing.assert_array_equal(got, pos[want])
    meta = load_npz(parts[0])["meta"]
    assert meta["stage"] == "select" and meta["classes"] == ["contact", "crashed"] and meta["win"] == [0.3, 0.8]
    for bad, message in (
        (["--classes", "prime"], "--classes takes distinct names from"),
        (["--win", "0.9", "0.2"], "--win"),
    ):
        assert cli.main([*argv[:-3], "--out", str(tmp_path / "bad"), "--quiet", *bad]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_plain_rollout_targets_are_recorded_and_differ_from_variance_reduced(sampled, tmp_path):
    argv = ["targets", "--model", MODEL, "--positions", str(sampled), "--kind", "rollout", "--limit", "1"]
    argv += ["--trials", "8", "--horizon", "2", "--quiet"]
    assert cli.main([*argv, "--out", str(tmp_path / "vr")]) == 0
    assert cli.main([*argv, "--out", str(tmp_path / "plain"), "--no-variance-reduction"]) == 0
    vr, plain = (load_npz(tmp_path / d / "part-00000.npz") for d in ("vr", "plain"))
    assert vr["meta"]["rollout"]["variance_reduction"] is True
    assert plain["meta"]["rollout"]["variance_reduction"] is False
    assert not np.allclose(vr["targets"], plain["targets"])  # the luck estimate is subtracted only with reduction
    assert (plain["targets"] >= 0).all() and (plain["targets"] <= 1).all()


def test_last_wins_fits_each_position_once_to_its_last_target(sampled, tmp_path):
    z = load_npz(sampled / "part-00000.npz")
    pos = z["positions"]
    for name, rows, value in (("a", slice(0, 20), 0.25), ("b", slice(5, 12), 0.75)):
        (tmp_path / name).mkdir()
        tg = np.full((len(pos[rows]), 5), value, dtype=np.float32)
        save_npz(tmp_path / name / "part-00000.npz", positions=pos[rows], classes=z["classes"][rows],
                        targets=tg, meta={"kind": "x"})  # fmt: skip
    dirs = [str(tmp_path / "a"), str(tmp_path / "b")]
    every, _, _, _ = load_targets(dirs)
    assert len(every) == 27
    got, tg, _, metas = load_targets(dirs, last_wins=True)
    assert len(got) == 20 and len(metas) == 2
    by_key = {p.tobytes(): t[0] for p, t in zip(got, tg)}
    assert len(by_key) == 20
    assert all(by_key[p.tobytes()] == (0.75 if 5 <= i < 12 else 0.25) for i, p in enumerate(pos))


def test_select_refuses_bad_classes_and_an_out_made_otherwise(sampled, tmp_path, capsys):
    argv = ["select", "--model", MODEL, "--positions", str(sampled), "--quiet"]
    for classes in ("contact,,race", "contact,contact", "contact;race"):
        assert cli.main([*argv, "--out", str(tmp_path / "bad"), "--classes", classes]) == 2
        assert capsys.readouterr().err.startswith("error: --classes takes distinct names from")
    assert not (tmp_path / "bad").exists()
    out = tmp_path / "sel"
    assert cli.main([*argv, "--out", str(out), "--win", "0.3", "0.8"]) == 0
    made = json.loads(capsys.readouterr().out)
    before = (out / "part-00000.npz").read_bytes()
    # the same selection again: nothing to make; other criteria: refused, not mixed with the old parts
    assert cli.main([*argv, "--out", str(out), "--win", "0.3", "0.8"]) == 0
    assert json.loads(capsys.readouterr().out) == made | {"made": 0}
    for other, message in (
        (["--win", "0.5", "0.8"], "was made with win [0.3, 0.8], not [0.5, 0.8]"),
        (["--win", "0.3", "0.8", "--classes", "race"], "was made with classes ['contact', 'crashed', 'backgame']"),
        (["--win", "0.3", "0.8", "--max", "3"], "was made with max 0, not 3"),
    ):
        assert cli.main([*argv, "--out", str(out), *other]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert (out / "part-00000.npz").read_bytes() == before
    assert cli.main([*argv, "--out", str(sampled)]) == 2  # the sample itself as --out
    assert "is a sample part, not a select part" in capsys.readouterr().err


def test_unreadable_stage_files_give_one_error_line(sampled, tmp_path, capsys):
    good = (sampled / "part-00000.npz").read_bytes()
    z = load_npz(sampled / "part-00000.npz")
    cases = {
        "truncated": (good[: len(good) // 2], "is not a readable stage file"),
        "text": (b"garbage\n", "is not a readable stage file: not an .npz archive"),
    }
    for name, (data, _) in cases.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "part-00000.npz").write_bytes(data)
    np.savez(tmp_path / "meta.npz", positions=z["positions"], classes=z["classes"], meta=np.array("{not json"))
    np.savez(tmp_path / "shape.npz", positions=z["positions"][:, :20], classes=z["classes"])
    np.savez(tmp_path / "cls.npz", positions=z["positions"], classes=z["classes"][:5])
    for name, message in (("meta", "is not a readable stage file"), ("shape", "positions must be (K, 26) integers"),
                          ("cls", "classes must have shape (20,) for its 20 positions")):  # fmt: skip
        (tmp_path / name).mkdir()
        (tmp_path / f"{name}.npz").rename(tmp_path / name / "part-00000.npz")
        cases[name] = (b"", message)
    for name, (_, message) in cases.items():
        argv = ["select", "--model", MODEL, "--positions", str(tmp_path / name), "--out", str(tmp_path / "o")]
        assert cli.main([*argv, "--quiet"]) == 2, name
        err = capsys.readouterr().err
        assert err.startswith(f"error: '{tmp_path / name / 'part-00000.npz'}'") and message in err, (name, err)
        assert err.count("\n") == 1


def test_rollout_options_are_refused_with_another_kind_and_kinds_never_mix(sampled, tmp_path, capsys):
    argv = ["targets", "--model", MODEL, "--positions", str(sampled), "--out", str(tmp_path / "t"), "--limit", "1"]
    for extra, message in (
        (["--no-variance-reduction"], "error: --no-variance-reduction: only for --kind rollout, not --kind ply0"),
        (["--trials", "72", "--horizon", "0"], "error: --trials, --horizon: only for --kind rollout, not --kind ply0"),
    ):
        assert cli.main([*argv, "--quiet", "--kind", "ply0", *extra]) == 2
        assert capsys.readouterr().err == message + "\n"
    assert not (tmp_path / "t").exists()
    assert cli.main([*argv, "--quiet", "--kind", "ply0"]) == 0
    z = load_npz(tmp_path / "t" / "part-00000.npz")
    assert z["meta"]["kind"] == "ply0" and z["meta"]["rollout"] is None
    assert cli.main([*argv, "--quiet", "--kind", "ply1"]) == 2  # not skipped as if it were done
    assert "part-00000.npz' was made with kind 'ply0', not 'ply1'" in capsys.readouterr().err
    assert cli.main([*argv, "--quiet", "--kind", "ply0", "--positions", str(tmp_path)]) == 2  # no parts there
    other = tmp_path / "other"
    other.mkdir()
    (other / "part-00000.npz").write_bytes((sampled / "part-00001.npz").read_bytes())
    assert cli.main([*argv, "--quiet", "--kind", "ply0", "--positions", str(other)]) == 2
    assert "was made with positions_from" in capsys.readouterr().err


def test_fit_resumes_only_on_its_own_data_and_settings(sampled, ply0_targets, tmp_path, capsys):
    z = load_npz(ply0_targets / "part-00000.npz")
    late = tmp_path / "late"  # new targets for 5 of the positions, listed last
    save_npz(late / "part-00000.npz", positions=z["positions"][:5], classes=z["classes"][:5],
                    targets=np.full((5, 5), 0.5, np.float32), meta={"stage": "targets", "kind": "x"})  # fmt: skip
    run = tmp_path / "fit"
    base = ["fit", "--init", MODEL, "--run-dir", str(run), "--arch", "single", "--batch", "8", "--quiet"]
    data = ["--targets", str(ply0_targets), str(late), "--last-wins"]
    assert cli.main([*base, *data, "--epochs", "1"]) == 0
    cfg = checkpoint.load(run / "latest.pt")[1].training_config
    assert cfg["last_wins"] is True and cfg["positions"] == 20 and cfg["val_frac"] == 0.05
    assert cfg["targets"] == [str(ply0_targets), str(late)]
    curve = (run / "curve.jsonl").read_text()
    for other, message in (
        (data[:-1], "was made with last_wins True, not False"),
        (data[:2] + ["--last-wins"], f"was made with targets {[str(ply0_targets), str(late)]!r}"),
        ([*data, "--lr", "0.01"], "was made with lr 0.0001, not 0.01"),
        ([*data, "--seed", "5"], "was made with seed 1, not 5"),
        ([*data, "--val-frac", "0.5"], "was made with val_frac 0.05, not 0.5"),
    ):
        assert cli.main([*base, *other, "--epochs", "2", "--resume"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1, err
    save_npz(late / "part-00001.npz", positions=z["positions"][5:6], classes=z["classes"][5:6],
                    targets=np.full((1, 5), 0.5, np.float32), meta={"stage": "targets", "kind": "x"})  # fmt: skip
    assert cli.main([*base, *data, "--epochs", "2", "--resume"]) == 2  # same 20 positions, but another target
    assert "was made with data_sha256 " in capsys.readouterr().err
    (late / "part-00001.npz").unlink()
    save_npz(late / "part-00001.npz", positions=-z["positions"][:1], classes=z["classes"][:1],
                    targets=np.full((1, 5), 0.5, np.float32), meta={"stage": "targets", "kind": "x"})  # fmt: skip
    assert cli.main([*base, *data, "--epochs", "2", "--resume"]) == 2
    assert "was made with positions 20, not 21: the target parts changed" in capsys.readouterr().err
    assert (run / "curve.jsonl").read_text() == curve  # nothing fitted by the refused runs
    (late / "part-00001.npz").unlink()
    assert cli.main([*base, *data, "--epochs", "2", "--resume"]) == 0
    assert checkpoint.load(run / "latest.pt")[1].training_config["epoch"] == 2
    for bad in ("0", "1", "nan"):
        assert cli.main([*base[:4], str(tmp_path / "v"), *base[5:], *data, "--val-frac", bad]) == 2
        assert "--val-frac must lie strictly between 0 and 1" in capsys.readouterr().err


def test_bgbot_train_refuses_td_options_before_a_stage(sampled, tmp_path, capsys):
    argv = ["fit", "--init", MODEL, "--targets", str(sampled), "--run-dir", str(tmp_path / "f")]
    assert bgbot_main(["train", "--resume", *argv]) == 2
    assert capsys.readouterr().err == "error: --resume before fit: give the stage's options after its name\n"
    out = tmp_path / "sel"
    argv = ["train", "--quiet", "select", "--model", MODEL, "--positions", str(sampled), "--out", str(out)]
    assert bgbot_main([*argv, "--win", "0.4", "0.6"]) == 0
    assert json.loads(capsys.readouterr().out)["scanned"] == 40 and capsys.readouterr().err == ""


def test_forwarded_stages_name_the_command_they_were_given_as(capsys):
    for main, argv, prog in (
        (bgbot_main, ["train", "select", "--model", MODEL], "bgbot train select"),
        (cli.main, ["select", "--model", MODEL], "python -m training select"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and f"{prog}: error: the following arguments are required: --positions" in err
        assert err.startswith(f"usage: {prog} ")


def test_one_numbering_of_classes_reads_the_committed_parts_as_they_were_written():
    """Sample and target files, the specialists' dispatch and ``bgbot move``'s evaluator names take their codes from
    :class:`PositionClass`; the codes stored in files are those the committed parts hold."""
    part = load_npz(Path(MODEL).parent / "candidates" / "gen5" / "ply2-bgbot4" / "part-00000.npz")
    np.testing.assert_array_equal(sample_classes(part["positions"]), part["classes"])
    assert np.bincount(part["classes"]).tolist() == [0, 979, 578, 292, 151]  # every sample class, BACKGAME = 4
    assert SAMPLE_CLASSES == {1: "contact", 2: "crashed", 3: "race", 4: "backgame"}
    assert (specialists.OVER, specialists.CONTACT, specialists.CRASHED, specialists.RACE) == (0, 1, 2, 3)
    assert specialists.CLASSES == ("contact", "crashed", "race")
    assert CLASS_NAMES == ("over", "bearoff-two-sided", "bearoff-one-sided", "race", "crashed", "contact")
    pos = make_positions(300, seed=8)
    codes = classify_batch(pos)
    np.testing.assert_array_equal(specialists.classify(pos), [PositionClass(c).stored for c in codes])
    assert [CLASS_NAMES[c] for c in codes] == [PositionClass(c).label for c in codes]


def test_sample_refuses_keep_rates_that_are_not_probabilities_or_keep_nothing(tmp_path, capsys):
    argv = ["sample", "--model", MODEL, "--out", str(tmp_path / "s"), "--positions", "10", "--quiet"]
    for keep, message in (
        (["contact=abc"], "RATE a probability from 0 to 1, got 'contact=abc'"),
        (["race=-1"], "RATE a probability from 0 to 1, got 'race=-1'"),
        (["crashed=nan"], "RATE a probability from 0 to 1, got 'crashed=nan'"),
        (["contact=1.5"], "RATE a probability from 0 to 1, got 'contact=1.5'"),
        ([f"{name}=0" for name in SAMPLE_CLASSES.values()], "keep no position"),
    ):
        assert cli.main([*argv, *(a for k in keep for a in ("--keep", k))]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --keep") and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "s").exists()


def test_a_store_or_checkpoint_given_twice_is_refused(tmp_path, monkeypatch, capsys):
    """``fit --decisions S S/`` and ``gate --candidate X --against X`` (the same path however written, compared
    resolved) are one ``error:`` line, status 2, before any work."""
    from bgbot.errors import BgbotError, check_distinct_paths, duplicate_path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "S").mkdir()
    assert duplicate_path(["S", "T", "./S/"]) == ("./S/", "S")
    assert duplicate_path(["S", str(tmp_path / "T"), "T"]) == ("T", str(tmp_path / "T"))
    assert duplicate_path(["S", "T"]) is None
    with pytest.raises(BgbotError) as err:
        check_distinct_paths(["a.pt", "a.pt"], "--model")
    assert str(err.value) == "--model 'a.pt' is given twice: give it once"
    fit = ["fit", "--init", MODEL, "--targets", "S", "--run-dir", str(tmp_path / "run"), "--quiet"]
    for flag in ("--decisions", "--held-out-decisions"):
        assert cli.main([*fit, flag, "S", "S/"]) == 2
        assert capsys.readouterr().err == f"error: {flag} 'S/' is given twice (also as 'S'): give it once\n"
    assert not (tmp_path / "run").exists()
    local = tmp_path / "m.pt"
    local.symlink_to(MODEL)
    for against in ("m.pt", str(local), "./m.pt"):
        assert cli.main(["gate", "--candidate", "m.pt", "--against", against, "--games", "4"]) == 2
        assert capsys.readouterr().err == (
            f"error: --against {against!r} is the candidate 'm.pt': a candidate cannot be gated against itself\n"
        )


@pytest.mark.parametrize(("ci_low", "accepted", "status"), [(0.1, True, 0), (-0.1, False, 1)])
def test_the_training_gate_exits_as_bgbot_gate(tmp_path, monkeypatch, capsys, ci_low, accepted, status):
    """``python -m training gate`` exits 0 when it accepts the candidate and 1 when it rejects it (the record printed
    and written either way), as ``bgbot gate``; its --help gives every exit status."""
    result = {"ppg": 0.3, "ci_low": ci_low, "ci_high": 0.5, "games": 200}
    monkeypatch.setattr("bgbot.arena.benchmark.benchmark", lambda *a, **k: dict(result))
    rec = tmp_path / "gate.json"
    argv = ["gate", "--candidate", MODEL, "--against", "pubeval", "--games", "200", "--out", str(rec), "--quiet"]
    assert cli.main(argv) == status
    assert json.loads(capsys.readouterr().out)["accepted"] is accepted
    assert json.loads(rec.read_text())["accepted"] is accepted
    with pytest.raises(SystemExit) as exit_:
        cli.main(["gate", "--help"])
    assert exit_.value.code == 0
    assert " ".join(capsys.readouterr().out.split()).endswith(
        "Exit status: 0 accepted, 1 rejected (the record printed and written either way), 2 an error (bad input, a "
        "failed write), 130 (Ctrl-C) or 143 (SIGTERM) interrupted: the record so far printed, marked incomplete, "
        "never accepted, --out not written."
    )
