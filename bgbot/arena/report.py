"""The printed report of a tournament (cubeless, cubeful money or matches): one function, :func:`format_table`."""

from __future__ import annotations

from bgbot.arena.stats import MIN_INTERVAL_GAMES
from bgbot.formats.figures import figure

__all__ = ["format_table"]


def _dtp(a: dict) -> str:
    return f"{a['doubles']}/{a['takes']}/{a['passes']}"


def _ppg_interval(row: dict) -> str:
    """A row's ppg interval as the table prints it (18 characters): ``[ +0.123,  +0.456]``, or "too few games" where
    the interval rests on fewer than :data:`bgbot.arena.stats.MIN_INTERVAL_GAMES` games (``interval_reliable``)."""
    if not row.get("interval_reliable", True):
        return f"{'too few games':^18}"
    return f"[{figure(row['ci_low'], '+7.3f')}, {figure(row['ci_high'], '+7.3f')}]"


def format_table(results: dict) -> str:
    """The report of :func:`bgbot.arena.tournament.run`'s results: a title line, one line per pairing, the ranking.

    Cubeless: ppg of A with its 95% CI, win, gammon and backgammon rates of each side (fractions of all games).
    Cubeful money: ppg with its CI, win and gammon rates, cube actions (D/T/P = doubles offered, takes, passes) and the
    mean final cube, and with automatic doubles the share of games that started at each cube value (95% Wilson
    interval over duplicate pairs). Matches: match-win rate of A with its 95% Wilson interval, games per match, cube actions, mean
    cube. Ranking: each player's value with its 95% interval (:func:`bgbot.arena.stats.ranking`).
    A ppg interval over fewer than :data:`bgbot.arena.stats.MIN_INTERVAL_GAMES` games is not printed ("too few
    games", and a note under the table says why; the JSON marks it ``"interval_reliable": false``).
    """
    cube = results.get("cube")
    match = bool(cube and cube["match_length"])
    w = max(len(n) for n in results["players"] + ["player"])
    dtp = "D/T/P(A)  D/T/P(B)"
    rate = f"{results['games_per_s']:.2f} matches/s" if match else f"{results['games_per_s']:.1f} games/s"
    speed = f"{rate} with {results['workers']} worker(s)"
    if cube is None:
        title = f"{results['games']} games per pairing (duplicate dice, seed {results['seed']}); {speed}"
        head = f"{'ppg(A)':>7}  {'95% CI':>18}  {'winA':>6}  {'gamA':>6}  {'bgA':>5}  {'gamB':>6}  {'bgB':>5}"
    elif match:
        title = (
            f"{results['games']} {cube['match_length']}-point matches per pairing (duplicate dice per match pair, "
            f"seed {results['seed']}, Crawford rule); {speed}"
        )
        head = f"{'win(A)':>6}  {'95% CI (Wilson)':>16}  {'games':>5}  {dtp}  {'cube':>5}"
    else:
        title = (
            f"{results['games']} cubeful money games per pairing (duplicate dice, seed {results['seed']}, Jacoby "
            f"{'on' if cube['jacoby'] else 'off'}); {speed}"
        )
        head = f"{'ppg(A)':>7}  {'95% CI':>18}  {'winA':>6}  {'gamA':>6}  {'gamB':>6}  {dtp}  {'cube':>5}"
    if cube is not None and not match and cube.get("auto_doubles"):
        title += f"; automatic doubles: at most {cube['auto_doubles']} a game (Jacoby applies until a player doubles)"
    if results.get("backgammon_value", 3) == 2:
        title += "; backgammons count as gammons"
    lines = [title, "", f"{'A':<{w}}  {'B':<{w}}  {head}"]
    for r in results["pairings"]:
        names = f"{r['a']:<{w}}  {r['b']:<{w}}  "
        if cube is None:
            a, b = r["stats_a"], r["stats_b"]
            cols = (
                f"{figure(r['ppg'], '+7.3f')}  {_ppg_interval(r)}  {a['win_rate']:6.1%}"
                f"  {a['gammon_rate']:6.1%}  {a['backgammon_rate']:5.1%}  {b['gammon_rate']:6.1%}"
                f"  {b['backgammon_rate']:5.1%}"
            )
        elif match:
            ca, cb = r["cube_actions"]["a"], r["cube_actions"]["b"]
            cols = (
                f"{r['match_win_rate']:6.1%}  [{r['ci_low']:6.1%}, {r['ci_high']:6.1%}]"
                f"  {r['mean_games_per_match']:5.2f}  {_dtp(ca):>8}  {_dtp(cb):>8}  {r['mean_cube']:5.2f}"
            )
        else:
            ca, cb = r["cube_actions"]["a"], r["cube_actions"]["b"]
            cols = (
                f"{figure(r['ppg'], '+7.3f')}  {_ppg_interval(r)}  {r['stats_a']['win_rate']:6.1%}"
                f"  {r['stats_a']['gammon_rate']:6.1%}  {r['stats_b']['gammon_rate']:6.1%}"
                f"  {_dtp(ca):>8}  {_dtp(cb):>8}  {r['mean_final_cube']:5.2f}"
            )
        lines.append(names + cols)
    if cube is not None and not match and cube.get("auto_doubles"):
        lines += ["", "Starting cube (automatic doubles): share of games, 95% CI over duplicate pairs"]
        for r in results["pairings"]:
            shares = "  ".join(
                f"{v}: {c['share']:6.2%} [{c['ci_low']:6.2%}, {c['ci_high']:6.2%}] ({c['games']} games)"
                for v, c in r["starting_cubes"].items()
            )
            lines.append(f"{r['a']:<{w}}  {r['b']:<{w}}  {shares}")
    if cube is not None:
        note = "mean cube value of the games played" if match else "mean final cube value"
        lines += ["", f"D/T/P = doubles offered / takes / passes by that player; cube = {note}"]
    what = "match-win rate" if match else "ppg"
    lines += ["", f"Ranking (mean {what} over its pairings, 95% CI):"]
    for k, r in enumerate(results["ranking"], 1):
        if match:
            value = f"{r['value']:6.1%}  [{r['ci_low']:6.1%}, {r['ci_high']:6.1%}]"
        else:
            value = f"{figure(r['value'], '+7.3f')}  {_ppg_interval(r)}"
        lines.append(f"{k:2d}. {r['player']:<{w}}  {value}".rstrip())
    if not match and not all(r.get("interval_reliable", True) for r in results["pairings"]):
        lines += [
            "",
            f"95% CI not shown: {results['games']} games per pairing, fewer than the {MIN_INTERVAL_GAMES} a "
            "t-interval over duplicate pairs needs to be trusted (it may have zero width or pass the feasible range)",
        ]
    if results.get("worker_restarts"):
        lines.append(f"(a worker died {results['worker_restarts']} time(s); its games were replayed)")
    return "\n".join(lines)
