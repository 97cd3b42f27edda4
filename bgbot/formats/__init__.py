"""The field's notations: Position ID, Match ID, XGID, play notation, POSITION/DICE text, .mat files."""
