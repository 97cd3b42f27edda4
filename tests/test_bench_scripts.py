"""The benchmark scripts' own game loops: the bare GNU Backgammon reference of scripts/bench_selfplay.py plays only
legal plays (checked against ``gnubg_nn.moves``), so its games/s is that of real games."""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import gnubg_nn
import numpy as np
import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_bare_gnubg_loop_plays_legal_games():
    bench = _load("bench_selfplay")
    rng = random.Random(5)
    start = gnubg_nn.board_from_position_id("4HPwATDgc/ABMA")
    lengths = []
    for g in range(20):
        board = [list(start[0]), list(start[1])]
        gnubg_turn, plies = g % 2 == 0, 0
        d1, d2 = 3, 1
        while True:
            opp, me = board
            legal = set(gnubg_nn.moves(board, d1, d2))
            if gnubg_turn:
                steps = gnubg_nn.best_move(board, d1, d2, n=0) or ()
            else:
                flat = gnubg_nn.pub_best_move(board, d1, d2) or []
                steps = [(flat[i] + 1, flat[i + 1] + 1) for i in range(0, len(flat), 2)]
            bench._play(me, opp, steps)
            plies += 1
            assert min(me + opp) >= 0 and not any(me[i] and opp[23 - i] for i in range(24))
            assert not legal or gnubg_nn.key_of_board([opp, me]) in legal
            if sum(me) == 0:
                break
            board, gnubg_turn = [me, opp], not gnubg_turn
            d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
        lengths.append(plies)
    assert 30 < sum(lengths) / len(lengths) < 100
    assert bench.bare_gnubg_speed(4, seed=1) > 0


def test_profile_selfplay_finds_every_stage_of_the_loop():
    """Each stage that scripts/profile_selfplay.py reports names a function the loop really calls: a renamed function
    would drop out of ``share`` silently. bgbot-5 (specialists on encoding v2) with learning on runs all of them."""
    prof = _load("profile_selfplay")
    config = prof.TrainConfig.load("full")
    out = prof.profile(
        str(SCRIPTS.parent / "models" / "bgbot-5.pt"),
        plies=8,
        games_in_flight=16,
        learn=True,
        config=config,
        top=5,
        warmup=8,
    )
    assert set(out["share"]) == set(prof.STAGES)
    assert all(0 < v <= 1 for v in out["share"].values())
    assert out["share"]["inputs"] <= out["share"]["evaluate"] and out["share"]["features"] <= out["share"]["inputs"]
    assert len(out["top"]) == 5 and out["games_finished"] >= 0
    assert (out["profiled_games_per_s"] is None) == (out["games_finished"] == 0)


def test_profile_selfplay_gives_no_rate_when_no_game_finished():
    """Too few plies for any game to finish: games/s is null, not a measured 0."""
    prof = _load("profile_selfplay")
    out = prof.profile(
        str(SCRIPTS.parent / "models" / "bgbot-1.pt"),
        plies=2,
        games_in_flight=4,
        learn=False,
        config=prof.TrainConfig.load("full"),
        top=1,
        warmup=0,
    )
    assert out["games_finished"] == 0 and out["profiled_games_per_s"] is None


def test_run_script_reports_bad_input_as_one_line(capsys):
    """``bgbot.errors.run_script``: bad input (a BgbotError, an OSError) is one ``error:`` line and status 2, a return
    value is the status, a bug keeps its traceback."""
    from bgbot.errors import BgbotError, run_script

    def bad() -> None:
        raise BgbotError("no checkpoint file at 'x.pt'")

    with pytest.raises(SystemExit) as done:
        run_script(bad)
    assert done.value.code == 2 and capsys.readouterr().err == "error: no checkpoint file at 'x.pt'\n"
    with pytest.raises(SystemExit) as done:
        run_script(lambda: 3)
    assert done.value.code == 3
    with pytest.raises(SystemExit) as done:
        run_script(lambda: None)
    assert done.value.code == 0
    with pytest.raises(ZeroDivisionError):
        run_script(lambda: 1 // 0)


def test_a_benchmark_given_a_missing_checkpoint_says_so_in_one_line(tmp_path):
    """A benchmark script run on a checkpoint that does not exist: one ``error:`` line naming it, status 2, no
    traceback."""
    missing = tmp_path / "missing.pt"
    run = subprocess.run(
        [sys.executable, str(SCRIPTS / "profile_selfplay.py"), "--model", str(missing), "--plies", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().splitlines() == [f"error: no checkpoint file at {str(missing)!r}"]
    assert run.stdout == ""


class _Parsed(Exception):
    """Raised in place of a script's work once its arguments parsed (the tests need the parser, not the run)."""

    def __init__(self, parser: argparse.ArgumentParser, args: argparse.Namespace | None) -> None:
        super().__init__()
        self.parser, self.namespace = parser, args


def _parse(monkeypatch, script: str, argv: list[str]) -> _Parsed:
    """Run ``script``'s ``main()`` with ``argv`` up to its argument parsing: a :class:`_Parsed` holding the parser and
    the arguments, or argparse's ``SystemExit`` (raised out of this function) for a usage error."""
    module = _load(script)
    parse_args = argparse.ArgumentParser.parse_args

    def stop(self, *a, **k):
        raise _Parsed(self, parse_args(self, *a, **k))

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", stop)
    monkeypatch.setattr(sys, "argv", [f"{script}.py", *argv])
    with pytest.raises(_Parsed) as parsed:
        module.main()
    return parsed.value


SCRIPT_USAGE = [
    "profile_selfplay",
    "bench_selfplay",
    "bench_search",
    "bench_movegen",
    "bench_features",
    "bench_decisions",
    "bench_rollout",
    "bench_tournament",
    "add_checksum",
    "plot_progress",
    "opening_rollouts",
    "check_bearoff",
    "cost_table",
    "bench_prune",
    "fit_prune",
    "heldout_loss",
    "referee_loss",
    "reference_error",
    "filter_bias",
    "plays_cost",
    "plays_error",
]
_NEEDS = {
    "heldout_loss": ["--targets", "d", "--model", "x.pt"],
    "referee_loss": ["--model", "x.pt"],
    "reference_error": ["--model", "x.pt"],
    "add_checksum": ["x.pt"],
    "plot_progress": ["dir", "--out", "x.png"],
    "bench_prune": ["--filter", "x.pt"],
    "plays_error": ["--model", "x.pt"],
}


@pytest.mark.parametrize("script", SCRIPT_USAGE)
def test_a_scripts_usage_line_names_its_real_options_and_defaults(monkeypatch, script):
    """The docstring's ``Usage:`` names every option the script has and no other, and a number shown after an option
    (``[--games 3000]``) is its default."""
    module = _load(script)
    usage = module.__doc__.split("Usage:", 1)[1]
    parsed = _parse(monkeypatch, script, _NEEDS.get(script, []))
    options = {o for a in parsed.parser._actions for o in a.option_strings if o.startswith("--")} - {"--help"}
    assert set(re.findall(r"--[a-z0-9][a-z0-9-]*", usage)) == options
    for name, shown in re.findall(r"\[(--[a-z0-9-]+) (\d+)\]", usage):
        assert getattr(parsed.namespace, name[2:].replace("-", "_")) == int(shown), name


BAD_NUMBERS = [
    ("profile_selfplay", "--plies", "0"),
    ("profile_selfplay", "--plies", "-1"),
    ("profile_selfplay", "--games-in-flight", "0"),
    ("profile_selfplay", "--top", "-1"),
    ("bench_selfplay", "--games", "0"),
    ("bench_selfplay", "--rounds", "0"),
    ("bench_selfplay", "--gnubg-games", "1"),
    ("bench_selfplay", "--train-games", "-5"),
    ("bench_search", "--positions", "0"),
    ("bench_search", "--games", "5"),
    ("bench_search", "--workers", "0"),
    ("bench_movegen", "--repeat", "0"),
    ("bench_movegen", "--chunk", "0"),
    ("bench_features", "--positions", "0"),
    ("bench_features", "--seed", "-1"),
    ("bench_decisions", "--positions", "0"),
    ("bench_decisions", "--ply", "3"),
    ("referee_loss", "--positions", "0"),
    ("referee_loss", "--ply", "3"),
    ("bench_rollout", "--trials", "1"),
    ("bench_rollout", "--workers", "0"),
    ("filter_bias", "--positions", "1"),
    ("filter_bias", "--trials", "1"),
    ("bench_tournament", "--games", "3"),
    ("bench_tournament", "--workers", "0"),
    ("plot_progress", "--games", "0"),
    ("plot_progress", "--select", "10,x"),
    ("opening_rollouts", "--candidates", "0"),
    ("opening_rollouts", "--truncate", "-1"),
    ("check_bearoff", "--random", "0"),
    ("bench_distributed", "--trials", "1"),
    ("bench_distributed", "--truncate", "-1"),
    ("bench_distributed", "--games", "3"),
    ("bench_server", "--requests", "0"),
    ("bench_server", "--repeat", "0"),
]


@pytest.mark.parametrize(("script", "option", "value"), BAD_NUMBERS)
def test_a_script_refuses_an_impossible_number_before_it_starts(monkeypatch, capsys, script, option, value):
    """An impossible count (``--games 0``, ``--plies -1``, an odd duplicate game count...) is argparse's usage error
    naming the option, status 2, before any work."""
    with pytest.raises(SystemExit) as done:
        _parse(monkeypatch, script, [*_NEEDS.get(script, []), option, value])
    assert done.value.code == 2
    assert f"error: argument {option}: " in capsys.readouterr().err


def test_int_at_least():
    from bgbot.errors import int_at_least

    assert int_at_least(0)("0") == 0 and int_at_least(4, even=True)("6") == 6
    for parse, text in ((int_at_least(1), "0"), (int_at_least(1), "1.5"), (int_at_least(4, even=True), "5")):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)
    assert int_at_least(200, even=True, most=10_000_000)("10000000") == 10_000_000
    for text in ("\u0663", "\uff13", "1_000", " 3"):  # Python's int reads these; a count is the digits 0-9
        with pytest.raises(argparse.ArgumentTypeError) as err:
            int_at_least(1)(text)
        assert str(err.value) == f"a whole number >= 1, got {text!r}"
    for text in ("198", "201", "10000002"):
        with pytest.raises(argparse.ArgumentTypeError) as err:
            int_at_least(200, even=True, most=10_000_000)(text)
        assert str(err.value) == f"an even whole number 200 .. 10,000,000, got {text}"


def test_bad_data_files_are_bgbot_errors(monkeypatch, tmp_path):
    """A positions file with no IDs, no target files, a corrupt referee cache, a file that is not a checkpoint, and a
    folder with no checkpoints: each a :class:`BgbotError` naming it (one ``error:`` line), not a traceback or an
    empty result."""
    from bgbot.errors import BgbotError

    empty = tmp_path / "empty.txt"
    empty.write_text("# only a comment\n")
    monkeypatch.setattr(sys, "argv", ["bench_movegen.py", "--positions", str(empty), "--repeat", "1"])
    with pytest.raises(BgbotError, match="no position IDs"):
        _load("bench_movegen").main()

    features = _load("bench_features")
    monkeypatch.setattr(features, "TARGETS", tmp_path)
    with pytest.raises(BgbotError, match="no position files"):
        features.afterstates(10, 0)

    cache = tmp_path / "cache.json"
    for text in ("{not json", "[1, 2]"):
        cache.write_text(text)
        with pytest.raises(BgbotError, match="referee cache"):
            _load("bench_decisions").Referee(None, cache)

    not_a_checkpoint = tmp_path / "notes.pt"
    not_a_checkpoint.write_text("not a checkpoint")
    monkeypatch.setattr(sys, "argv", ["add_checksum.py", str(not_a_checkpoint)])
    with pytest.raises(BgbotError, match="notes.pt"):
        _load("add_checksum").main()

    folder = tmp_path / "checkpoints"
    folder.mkdir()
    monkeypatch.setattr(sys, "argv", ["plot_progress.py", str(folder), "--out", str(tmp_path / "p.png")])
    with pytest.raises(BgbotError, match=r"no checkpoints \(\*\.pt\)"):
        _load("plot_progress").main()
    assert not (tmp_path / "p.jsonl").exists()


def test_bench_selfplay_checks_its_checkpoints_before_timing(monkeypatch, tmp_path):
    """A missing ``--baseline`` is reported at once, not after the first rounds of timings."""
    from bgbot.errors import BgbotError

    bench = _load("bench_selfplay")

    def timed(*a, **k):
        raise AssertionError("timed before the checkpoints were checked")

    for name in ("bare_gnubg_speed", "selfplay_speed", "harness_gnubg_speed", "training_speed"):
        monkeypatch.setattr(bench, name, timed)
    missing = tmp_path / "missing.pt"
    monkeypatch.setattr(sys, "argv", ["bench_selfplay.py", "--baseline", str(missing), "--no-2core"])
    with pytest.raises(BgbotError, match="no checkpoint file"):
        bench.main()


def test_bench_rollout_refuses_a_gnubg_time_of_zero(monkeypatch):
    """GNU Backgammon's rollout no slower than its start-up alone (too few trials, a noisy machine): an error, not a
    ratio computed from a clamped time of 1e-9 s."""
    from bgbot.errors import BgbotError

    bench = _load("bench_rollout")
    monkeypatch.setattr(bench, "run_gnubg", lambda script: (0.2, 0.1))

    def not_reached(*a, **k):
        raise AssertionError("bgbot timed although GNU Backgammon's time was unusable")

    monkeypatch.setattr(bench, "run_bgbot", not_reached)
    monkeypatch.setattr(sys, "argv", ["bench_rollout.py", "--trials", "2"])
    with pytest.raises(BgbotError, match="too few --trials"):
        bench.main()


def test_bench_rollout_plain_mode_runs_both_sides_without_variance_reduction(monkeypatch, capsys):
    """``--plain``: GNU Backgammon's script says ``varredn off``, bgbot's trials are plain, 12960 of them by default;
    the JSON has both sides' rates, their ratio and the cost of a position at its standard error."""
    bench = _load("bench_rollout")
    scripts, runs = [], []

    def gnubg(script):
        scripts.append(script)
        return (10.0, 9.0) if "\nrollout\n" in script else (1.0, 0.5)

    def bgbot(trials, workers, seed, vr, move_filter):
        runs.append((trials, workers, seed, vr, move_filter))
        return 20.0, 34.0, [0.55, 0.15, 0.01, 0.12, 0.01], [0.004, 0.003, 0.001, 0.003, 0.001]

    monkeypatch.setattr(bench, "run_gnubg", gnubg)
    monkeypatch.setattr(bench, "run_bgbot", bgbot)
    monkeypatch.setattr(sys, "argv", ["bench_rollout.py", "--plain", "--rounds", "1"])
    bench.main()
    out = json.loads(capsys.readouterr().out)
    assert runs == [(12960, 2, 0, False, False)]
    assert all("set rollout varredn off" in t and "set rollout trials 12960" in t for t in scripts)
    assert out["gnubg"]["trials_per_s"] == 1440.0 and out["bgbot"]["trials_per_s"] == 648.0
    assert out["ratio"] == 0.45 and out["cpu_ratio"] == 0.25
    assert out["per_position"] == {
        "trials": 12960,
        "se_win": 0.004,
        "bgbot_cpu_s": 34.0,
        "gnubg_cpu_s": 8.5,
        "bgbot_positions_per_cpu_s": 0.0294,
        "gnubg_positions_per_cpu_s": 0.1176,
    }
    assert "plain" in out["settings"]
    assert "set rollout varredn on" in bench.gnubg_script(1296, rollout=True)


def test_bench_rollout_interleaves_its_rounds_and_reports_medians(monkeypatch, capsys):
    """``--rounds 3``: GNU Backgammon first in rounds 1 and 3, bgbot first in round 2; ``cpu_ratio`` is the median of
    the rounds' CPU ratios, the times the medians of each side's; ``--model-filter`` reaches bgbot's rollout."""
    bench = _load("bench_rollout")
    order: list[str] = []
    g_cpu = iter([9.5, 10.5, 12.5])  # each round's rollout; start-up 0.5 CPU s
    b_cpu = iter([2.0, 4.0, 3.0])

    def gnubg(script):
        if "\nrollout\n" not in script:
            return 1.0, 0.5
        order.append("gnubg")
        return 10.0, next(g_cpu)

    def bgbot(trials, workers, seed, vr, move_filter):
        assert move_filter and not vr
        order.append("bgbot")
        return 5.0, next(b_cpu), [0.5] * 5, [0.01] * 5

    monkeypatch.setattr(bench, "run_gnubg", gnubg)
    monkeypatch.setattr(bench, "run_bgbot", bgbot)
    monkeypatch.setattr(sys, "argv", ["bench_rollout.py", "--plain", "--model-filter", "--trials", "36"])
    bench.main()
    out = json.loads(capsys.readouterr().out)
    assert order == ["gnubg", "bgbot", "bgbot", "gnubg", "gnubg", "bgbot"]
    assert out["per_round_cpu_ratio"] == [4.5, 2.5, 4.0] and out["cpu_ratio"] == 4.0
    assert out["gnubg"]["cpu_s"] == 10.0 and out["bgbot"]["cpu_s"] == 3.0 and out["ratio"] == 1.8
    assert out["bgbot"]["move_filter"] is True


def test_bench_rollout_reports_a_failed_gnubg_as_bad_input(monkeypatch):
    """GNU Backgammon exiting with an error is an OSError naming it and its status (one ``error:`` line through
    ``run_script``), not a CalledProcessError traceback."""
    bench = _load("bench_rollout")
    monkeypatch.setattr(bench, "GNUBG", "/bin/false")
    with pytest.raises(OSError, match="/bin/false exited with status 1"):
        bench.run_gnubg("quit\n")


def test_is_int_takes_python_and_numpy_integers_never_bools_or_floats():
    import numpy as np

    from bgbot.errors import is_int

    assert all(is_int(v) for v in (0, -3, 2**70, np.int8(1), np.int64(7), np.uint16(3)))
    assert not any(is_int(v) for v in (True, False, np.bool_(True), 1.0, np.float64(2.0), "1", None))


def test_reference_error_scores_bgbot5_against_the_held_out_rollouts(capsys, monkeypatch):
    """bgbot-5's 0-ply against the 200 held-out 5,184-trial rollouts: its figures as measured on 2026-12-02
    (`python scripts/reference_error.py --model models/bgbot-5.pt`): win rmse 0.046, equity rmse 0.105."""
    module = _load("reference_error")
    model = str(SCRIPTS.parent / "models" / "bgbot-5.pt")
    monkeypatch.chdir(SCRIPTS.parent)
    monkeypatch.setattr(sys, "argv", ["reference_error.py", "--model", model])
    module.main()
    out = json.loads(capsys.readouterr().out)["models"][model]
    assert out["positions"] == 200
    assert out["win_rmse"] == pytest.approx(0.0462, abs=5e-4)
    assert out["equity_rmse"] == pytest.approx(0.1050, abs=5e-4)
    assert sum(c["positions"] for c in out["by_class"].values()) == 200
    assert "cube_nets" not in out  # bgbot-5 has none
    six = str(SCRIPTS.parent / "models" / "bgbot-6.pt")  # bgbot-5's play nets, cube nets fitted to rollouts
    monkeypatch.setattr(sys, "argv", ["reference_error.py", "--model", six])
    module.main()
    got = json.loads(capsys.readouterr().out)["models"][six]
    assert got["equity_rmse"] == out["equity_rmse"]  # the play nets
    assert got["cube_nets"]["equity_rmse"] == pytest.approx(0.0697, abs=5e-4)  # the card's figure


def test_bench_decisions_refuses_classes_with_no_position_among_those_asked():
    """``--positions 20 --classes race``: the set's first 20 positions hold no race, so there is nothing to measure: one
    error line naming the classes and the count, status 2, before the referee is asked anything."""
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "bench_decisions.py"), "--positions", "20", "--classes", "race", "--cache", ""],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "no race position among the first 20" in done.stderr
    assert "Traceback" not in done.stderr


def _bench_decisions(monkeypatch, capsys, argv: list[str]) -> dict:
    """``scripts/bench_decisions.py argv`` run in this process: its JSON."""
    monkeypatch.setattr(sys, "argv", ["bench_decisions.py", *argv])
    _load("bench_decisions").main()
    return json.loads(capsys.readouterr().out)


def test_bench_decisions_cube_rollout_is_a_cached_third_cube_contestant(monkeypatch, capsys, tmp_path):
    """``--cube-rollout``: the model's own rollouts decide every cube decision the cube nets decide (the same counts
    under the same keys); ``cube_rollout``'s equity gap to the referee is that of the cached rollouts (made consistent)
    and the cached referee probabilities; a rerun with the same cache rolls out nothing and decides the same; another
    seed is another cache key, so it rolls out again."""
    from bgbot.api import DEFAULT_MODEL
    from bgbot.evaluation.prune import file_sha256
    from bgbot.formats import positionid
    from bgbot.rules.outcomes import check_probabilities, equity

    cache = tmp_path / "cache.json"
    argv = ["--positions", "12", "--cache", str(cache), "--cube-rollout", "vr2-h2"]
    first = _bench_decisions(monkeypatch, capsys, argv)
    cube, record = first["cube"], first["cube_rollout"]
    assert set(cube) == {"bgbot", "gnubg0", "bgbot_rollout"}
    assert {k: v["decisions"] for k, v in cube["bgbot_rollout"].items()} == {
        k: v["decisions"] for k, v in cube["bgbot"].items()
    }
    n = cube["bgbot"]["double"]["decisions"]
    assert n >= 3 and cube["bgbot_rollout"]["take"]["decisions"] >= 1
    sha = file_sha256(DEFAULT_MODEL)[:16]
    assert record["kind"] == "vr2-h2" and record["seed"] == 1 and record["workers"] == 1
    assert record["model_sha256"] == sha and record["cube_ply"] == 0
    assert record["positions"] == record["rollouts_made"] == n
    assert record["cpu_seconds"] > 0 and 0 < record["win_se_mean"] < 0.5
    data = json.loads(cache.read_text())
    keys = [k for k in data if k.startswith("r|")]
    assert len(keys) == n and all(k.startswith(f"r|vr2-h2|1|{sha}|") for k in keys)
    assert all(len(data[k]) == 10 for k in keys)
    rolled = check_probabilities(np.array([data[k][:5] for k in keys]), repair=True)
    ref = np.array([data["p" + k.split("|")[-1]] for k in keys])
    assert all(positionid.encode(positionid.decode(k.split("|")[-1])) == k.split("|")[-1] for k in keys)
    d = equity(rolled) - equity(ref)
    gap = record["equity"]["rollout_minus_referee"]
    assert gap["bias"] == pytest.approx(d.mean()) and gap["rmse"] == pytest.approx(np.sqrt(np.mean(d**2)))
    for name in ("cube_nets_minus_referee", "cube_nets_minus_rollout"):
        assert 0 < abs(record["equity"][name]["bias"]) <= record["equity"][name]["rmse"] < 2

    again = _bench_decisions(monkeypatch, capsys, argv)
    assert again["cube_rollout"]["rollouts_made"] == 0 and again["cube_rollout"]["cpu_seconds"] == 0.0
    assert again["cube_rollout"]["cpu_seconds_per_rollout"] is None and again["referee_calls"] == 0
    assert again["cube"] == cube and again["cube_rollout"]["equity"] == record["equity"]

    other = _bench_decisions(monkeypatch, capsys, [*argv, "--rollout-seed", "2"])
    assert other["cube_rollout"]["rollouts_made"] == n and other["cube_rollout"]["seed"] == 2
    assert len([k for k in json.loads(cache.read_text()) if k.startswith("r|vr2-h2|2|")]) == n


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("vr", "unknown rollout kind 'vr': plainT, vrT, plainT-hH or vrT-hH"),
        ("cubeful72", "unknown rollout kind 'cubeful72': plainT, vrT"),
        ("vr72-h0", "unknown rollout kind 'vr72-h0'"),
        ("vr1", "rollout kind 'vr1': trials must be an integer 2 .."),
    ],
)
def test_bench_decisions_refuses_a_bad_rollout_kind_before_any_work(monkeypatch, capsys, kind, message):
    """A name that is no rollout kind, or one whose trials are out of range: argparse's usage error naming the option
    and the form, status 2."""
    with pytest.raises(SystemExit) as done:
        _parse(monkeypatch, "bench_decisions", ["--cube-rollout", kind])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument --cube-rollout: {message}" in err and "Traceback" not in err


def test_bench_decisions_refuses_a_damaged_cached_rollout(tmp_path):
    """A cache entry under a rollout's key that is not 10 numbers: one error naming the cache, no rollout."""
    from bgbot.api import DEFAULT_MODEL
    from bgbot.errors import BgbotError
    from bgbot.evaluation.prune import file_sha256
    from bgbot.formats import positionid

    bench = _load("bench_decisions")
    ref = bench.Referee(None, tmp_path / "cache.json")
    pos = positionid.decode("4HPwATDgc/ABMA")[None]
    ref.data[bench.rollout_key("vr72", 1, file_sha256(DEFAULT_MODEL), pos[0])] = [0.5] * 5
    with pytest.raises(BgbotError, match=r"cache.json.* something other than 10 numbers"):
        bench.cube_rollouts(ref, pos, "vr72", 1, str(DEFAULT_MODEL), "no evaluator: nothing to roll out")


@pytest.mark.parametrize("flag", [[], ["--no-filter"]])
def test_bench_selfplay_plays_the_models_own_filter_by_default(monkeypatch, capsys, flag):
    """Self-play and training are measured through the model's own move filter (and exact play in the same rounds)
    unless ``--no-filter``; the ratios come from the measured rates."""
    bench = _load("bench_selfplay")
    seen: list = []

    def selfplay(model, games, gif, seed=1, clock=None, move_filter=None):
        seen.append(("selfplay", move_filter is not None))
        return 300.0 if move_filter is not None else 200.0

    def training(model, config, games, seed=1, move_filter=None):
        seen.append(("training", move_filter is not None))
        return 150.0 if move_filter is not None else 100.0

    monkeypatch.setattr(bench, "selfplay_speed", selfplay)
    monkeypatch.setattr(bench, "training_speed", training)
    monkeypatch.setattr(bench, "bare_gnubg_speed", lambda games, seed=1: 100.0)
    monkeypatch.setattr(bench, "harness_gnubg_speed", lambda games, seed=1: 50.0)
    monkeypatch.setattr(sys, "argv", ["bench_selfplay.py", "--rounds", "1", "--no-2core", "--dispatch", "on", *flag])
    bench.main()
    out = json.loads(capsys.readouterr().out)
    if flag:
        assert seen == [("selfplay", False), ("training", False)] and out["filter"] is None
        assert out["selfplay_ratio"] == 2.0 and out["training_ratio"] == 1.0 and out["filter_speedup"] is None
    else:
        assert seen == [("selfplay", True), ("selfplay", False), ("training", True), ("training", False)]
        assert out["filter"]["keep"] == 4 and out["selfplay_ratio"] == 3.0 and out["exact_selfplay_ratio"] == 2.0
        assert out["training_ratio"] == 1.5 and out["exact_training_ratio"] == 1.0
        assert out["filter_speedup"] == out["filter_training_speedup"] == 1.5


def test_bench_selfplay_sets_the_models_own_filter_from_keep_extra_margin(monkeypatch, capsys):
    """``--keep``/``--extra``/``--margin`` set the model's own filter too (they were dropped unless ``--filter``), and
    a bad setting is refused before anything is timed."""
    from bgbot.evaluation import prune

    bench = _load("bench_selfplay")
    used: list = []

    def selfplay(model, games, gif, seed=1, clock=None, move_filter=None):
        used.append(move_filter)
        return 100.0

    monkeypatch.setattr(bench, "selfplay_speed", selfplay)
    argv = ["bench_selfplay.py", "--rounds", "1", "--no-2core", "--no-gnubg", "--dispatch", "on", "--train-games", "0"]
    monkeypatch.setattr(sys, "argv", [*argv, "--keep", "2", "--extra", "3", "--margin", "0.125"])
    bench.main()
    out = json.loads(capsys.readouterr().out)
    assert out["filter"] == {"net": "the model's own (prune.filter_for)", "keep": 2, "extra": 3, "margin": 0.125}
    own = prune.filter_for(bench.DEFAULT_MODEL)
    assert (used[0].keep, used[0].extra, used[0].margin) == (2, 3, 0.125) and used[0].net is not own.net
    assert used[0].net.model_sha256 == own.net.model_sha256 and used[1] is None  # the filter, then exact play
    monkeypatch.setattr(sys, "argv", [*argv, "--margin", "-1"])
    with pytest.raises(prune.PruneError, match="margin is a finite equity >= 0, got margin=-1.0"):
        bench.main()


def test_plays_cost_measures_the_paired_difference_error_of_the_stores_candidates(monkeypatch, capsys):
    """plays_cost on two decisions of campaign-3's part 9: a kind run twice gives the same figures (fixed seed), its
    difference error is the paired one of :func:`bgbot.arena.rollout.rollout_plays` over the store's candidates, and
    it falls with the trials (more trials, smaller error)."""
    import numpy as np

    from bgbot.arena.rollout import Candidate, rollout_plays
    from training import campaign, parts

    module = _load("plays_cost")
    monkeypatch.setattr(sys, "argv", ["plays_cost.py", "--decisions", "2", "--kinds", "plain36,plain144"])
    module.main()
    module.main()
    runs = [json.loads(t) for t in re.findall(r"^\{.*?^\}", capsys.readouterr().out, re.S | re.M)]
    (a, c), (b, _) = runs[0]["kinds"], runs[1]["kinds"]
    assert (
        runs[0]["decisions"] == 2
        and a["diff_se"] == b["diff_se"]
        and c["relative"] == pytest.approx(c["var_x_cpu"] / a["var_x_cpu"])
    )
    assert c["diff_se"] < a["diff_se"]
    store = module.ROOT / "models" / "candidates" / "campaign-3"
    cands, _, st = module.decisions(store, 9, 2)
    model = campaign.model_path(store, st["model"])
    _, ev, _ = parts.load_model(str(model))
    ev = campaign.players_for(ev, campaign.load_settings(store), model)
    ses = []
    for afterstates in cands:
        done = rollout_plays(ev, [Candidate("", x) for x in afterstates], module.settings_for("plain36", True, 5))
        d = [x.estimate.values() - done[0].estimate.values() for x in done[1:]]
        ses.append(np.mean([v.std(ddof=1) / np.sqrt(len(v)) for v in d]))
    assert a["diff_se"] == pytest.approx(float(np.mean(ses)), rel=1e-12) and a["diff_se"] > 0


def test_plays_cost_against_a_reference_separates_bias_from_noise():
    """``against``: differences equal to the reference's are within their noise and pick the same best; shifted by
    0.1 with tiny standard errors, the bias is 0.1 and a shift that reorders the candidates changes the best."""
    import numpy as np

    module = _load("plays_cost")
    ref = [np.array([-0.02, -0.05]), np.array([0.01])]
    se = [np.full(2, 0.01), np.full(1, 0.01)]
    same = module.against(ref, se, ref, se)
    assert same == {"bias_rms": None, "within_noise": True, "same_best": 1.0}
    tiny = [np.full(2, 1e-9), np.full(1, 1e-9)]
    shifted = module.against([r + 0.1 for r in ref], tiny, ref, tiny)
    assert shifted["bias_rms"] == pytest.approx(0.1, rel=1e-6) and shifted["same_best"] == 0.5


@pytest.mark.parametrize(
    ("kind", "want"),
    [
        ("plain324", (324, 0, False)),
        ("vr108-h8", (108, 8, True)),
        ("vr36-h16", (36, 16, True)),
        ("plain36-h0", None),  # a full rollout under a truncated label
        ("vr36-h08", None),
        ("ply2", None),
        ("vr", None),
        ("plain36-h", None),
        ("Plain36", None),
    ],
)
def test_cost_scripts_read_rollout_kinds_with_one_parser(kind, want):
    """``training.rollout.rollout_kind`` names trials, horizon and variance reduction; both cost scripts and
    bench_decisions' ``--cube-rollout`` take it: plays_cost and bench_decisions refuse what it does not parse,
    cost_table takes ``plyN`` besides and refuses the rest."""
    from bgbot.errors import BgbotError
    from training.rollout import rollout_kind

    got = rollout_kind(kind, seed=7, move_filter=True)
    assert (None if got is None else (got.trials, got.truncate, got.variance_reduction)) == want
    assert got is None or (got.seed, got.move_filter) == (7, True)
    plays_cost, cost_table = _load("plays_cost"), _load("cost_table")
    if want is None:
        with pytest.raises(BgbotError, match=f"unknown kind {kind!r}: plainT, vrT"):
            plays_cost.settings_for(kind, False, 5)
    else:
        assert plays_cost.settings_for(kind, False, 5) == rollout_kind(kind, 5, False)
        assert cost_table.settings_for(kind, 5) == rollout_kind(kind, 5)
    if kind == "ply2":
        assert cost_table.settings_for(kind, 5) is None
    elif want is None:
        with pytest.raises(BgbotError, match=f"unknown kind {kind!r}: plyN, plainT"):
            cost_table.settings_for(kind, 5)
    bench = _load("bench_decisions")
    if want is None:
        with pytest.raises(BgbotError, match=f"unknown rollout kind {kind!r}: plainT, vrT"):
            bench.rollout_settings(kind, 5)
    else:
        assert bench.rollout_settings(kind, 5) == rollout_kind(kind, 5)


@pytest.mark.parametrize("kinds", ["plain36-h0", "plain36,plain36", ""])
def test_plays_cost_refuses_a_zero_horizon_and_repeated_or_missing_kinds(monkeypatch, kinds):
    """``-h0`` would be a full rollout under a truncated label; a kind twice or none is a mistake: one error each."""
    from bgbot.errors import BgbotError

    module = _load("plays_cost")
    monkeypatch.setattr(sys, "argv", ["plays_cost.py", "--decisions", "1", "--kinds", kinds])
    with pytest.raises(BgbotError, match="kind"):
        module.main()


def test_plays_error_refuses_a_model_given_twice(capsys):
    """``scripts/plays_error.py --model A --model ./A``: one ``error:`` line naming it, status 2, no model loaded."""
    from bgbot.errors import run_script

    module = _load("plays_error")
    with pytest.raises(SystemExit) as exit_:
        run_script(lambda: module.report(["--model", "A.pt", "--model", "./A.pt", "--store", "nowhere"]))
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "error: --model './A.pt' is given twice (also as 'A.pt'): give it once\n"


def test_plays_error_interval_of_few_decisions_stays_above_zero_and_says_too_few():
    """Six decisions' losses (points): the interval in millipoints is the bootstrap's, never below 0, marked unreliable
    (a normal interval would reach to -7 mp); one decision has no interval at all (null ends, not NaN)."""
    module = _load("plays_error")
    r = module._interval(np.array([0.0, 0.0, 0.0, 0.05, 0.0, 0.002]))
    assert r["mean"] == pytest.approx(52 / 6) and r["lo"] == 0.0 and r["hi"] > r["mean"] and r["n"] == 6
    assert r["interval_reliable"] is False and r["interval_note"].startswith("too few decisions for a 95% interval: 6")
    one = module._interval(np.array([0.01]))
    assert one["lo"] is None and one["hi"] is None and one["interval_reliable"] is False
    assert json.loads(json.dumps(one))["mean"] == pytest.approx(10.0)
