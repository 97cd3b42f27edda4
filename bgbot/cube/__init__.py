"""Cube decisions: match equity tables, Janowski's cubeful formulas and the proper cube action, from outcome
probabilities alone (no boards)."""

from bgbot.cube.decision import (
    NOT_AVAILABLE,
    CubeDecision,
    cubeful_values,
    cubeless_mwc,
    decide,
    janowski_take_point,
    match_json,
    may_double,
    to_json,
)

__all__ = [
    "NOT_AVAILABLE",
    "CubeDecision",
    "cubeful_values",
    "cubeless_mwc",
    "decide",
    "janowski_take_point",
    "match_json",
    "may_double",
    "to_json",
]
