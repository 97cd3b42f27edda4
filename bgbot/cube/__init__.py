"""Cube decisions: match equity tables, Janowski's cubeful formulas and the proper cube action, from outcome
probabilities alone (no boards)."""

from bgbot.cube.decision import (
    NOT_AVAILABLE,
    CubeAction,
    CubeDecision,
    TakeAction,
    action_text,
    batch_values,
    cubeful_values,
    cubeless_mwc,
    decide,
    doubles,
    janowski_take_point,
    match_json,
    may_double,
    proper_actions,
    take_action,
    to_json,
)

__all__ = [
    "NOT_AVAILABLE",
    "CubeAction",
    "CubeDecision",
    "TakeAction",
    "action_text",
    "batch_values",
    "cubeful_values",
    "cubeless_mwc",
    "decide",
    "doubles",
    "janowski_take_point",
    "match_json",
    "may_double",
    "proper_actions",
    "take_action",
    "to_json",
]
