"""The command line's exit codes (README: "Exit codes")."""

EXIT_OK = 0
EXIT_INPUT = 1
EXIT_USAGE = 2
EXIT_OUTPUT = 3
EXIT_INTERNAL = 4
EXIT_BUDGET = 5
