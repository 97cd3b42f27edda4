"""bgbot: a backgammon bot with a numpy-vectorised move generator and a self-play-trained value network."""

__version__ = "0.1.0"
