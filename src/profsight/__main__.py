"""``python -m profsight``: the command line."""

from profsight.cli.entry import entry

entry()
