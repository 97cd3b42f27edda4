"""Playing games: players, the game engine, tournaments, statistics and the gate."""
