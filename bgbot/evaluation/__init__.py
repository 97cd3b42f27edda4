"""Evaluating positions: encodings, networks, checkpoints, pubeval, position classes, search."""
