"""``python -m training --config training/configs/NAME.toml --run-dir runs/NAME [--resume]``: see training.cli."""

from .cli import main

raise SystemExit(main())
