"""Text rules shared by every layer of the front: whether rich would print a text as it is, and an
option's comma-separated values. Below the command lines (rtnetlab.cli imports them from here), so
that the tables, the capabilities' commands and the sweep's figures use them without importing a
command line."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from rtnetlab.errors import UserError


def plain_text(text: str, markup: bool) -> bool:
    """Whether rich would print `text` as it is: printable ASCII (one cell a character) and no
    markup where markup is read. (Emoji codes are off in every console: a port label such as
    ``ES1:A:`` is text, not ``:A:``.)"""
    return text.replace("\n", "").isprintable() and text.isascii() and not (markup and "[" in text)


def comma_list(
    option: str, text: str, parse: Callable[[str], Any] = str, what: str = "values", *, bad: str = ""
) -> list:
    """A comma-separated option (`--loads 0.1,0.5`): each item, stripped, through `parse` (int,
    float, a duration...), in order.

    One line naming the option when an item is empty or does not parse (`bad`, if given, words it:
    a format of {option}, {text} the whole list and {item} the item refused); a `parse` that
    raises UserError refuses with its own line (an item's own rule). Numbers must be finite (a NaN
    or an infinity in a sweep's axis is always a typo).
    """
    message = bad or "{option}: expected {what} separated by commas, got '{text}'"
    values = []
    for item in (x.strip() for x in text.split(",")):
        try:
            if not item:
                raise ValueError(item)
            values.append(parse(item))
        except UserError:
            raise  # the item's own rule (UserError is a ValueError too)
        except ValueError:
            raise UserError(message.format(option=option, text=text, item=item, what=what)) from None
    if any(isinstance(v, float) and not math.isfinite(v) for v in values):
        raise UserError(f"{option}: numbers must be finite, got '{text}'")
    return values
