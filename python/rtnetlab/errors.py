"""Errors a user can cause. The CLI prints them as one-line messages and exits with code 2."""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input (file, option), reported as one line without traceback."""


class ModelError(UserError):
    """A network description broke one or more rules; ``lines`` holds one message per problem."""

    def __init__(self, lines: list[str], warnings: list[str] | None = None):
        self.lines = lines
        self.warnings = warnings or []
        super().__init__("\n".join(lines))


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised by the CLI's handler so that it unwinds as Ctrl-C does (temporary files
    removed, a simulation's measurements still reported), with exit code 143."""
