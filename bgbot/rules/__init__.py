"""The rules of the game: board, dice, cube and match state, outcomes and legal plays (numpy only)."""
