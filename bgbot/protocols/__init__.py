"""The field's protocols and people-facing interfaces, above :mod:`bgbot.api`: UBGI (:mod:`.ubgi`), GNU Backgammon's
external player (:mod:`.external`), an HTTP JSON API (:mod:`.server`), play in the terminal (:mod:`.play`) and match
analysis (:mod:`.analysis`). Nothing here is imported by the library below it."""
