"""Errors a user can cause. The CLI prints them as one-line messages and exits with code 2."""

from __future__ import annotations


class UserError(ValueError):
    """A problem with the user's input (file, option, an argument of an API call), one line.

    The command line prints it without traceback and exits with code 2; the Python API raises
    it as it is (a ``ValueError``, so ``except ValueError`` catches every bad input)."""


class ModelError(UserError):
    """A network description broke one or more rules; ``lines`` holds one message per problem
    (``place: rule``). The engine raises it too for any input of its that breaks a rule."""

    def __init__(self, lines: list[str], warnings: list[str] | None = None):
        self.lines = lines
        self.warnings = warnings or []
        super().__init__("\n".join(lines))


class LimitError(UserError):
    """A description passes one of the limits in force (the message names it and says how to
    raise it), or a setting of the limits is wrong. Raised by the engine."""


class AnalysisError(UserError):
    """An analysis that cannot run as asked: a method or option that does not apply to the
    network, a flow it does not have, fifo-lp without a solver. Raised by the engine."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised by the CLI's handler so that it unwinds as Ctrl-C does (temporary files
    removed, a simulation's measurements still reported), with exit code 143."""
