"""`python -m rtnetlab.cli`: the `rtnetlab` command."""

from rtnetlab.command import entry

entry()
