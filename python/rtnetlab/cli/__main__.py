"""`python -m rtnetlab.cli`: the `rtnetlab` command."""

from rtnetlab.cli import entry

entry()
