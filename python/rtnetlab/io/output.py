"""Output files: the one rule every file rtnetlab writes follows.

* Checked before any work (`check`): a path that is a directory, one of the command's inputs, or
  another output of the same command is a user error, and so is a place where nothing can be
  written. Missing directories are created when the file is written (as ``mkdir -p`` would),
  and said so (`created_directories`); nothing is created when the command stops before.
* A regular file, or a new path, is written under a temporary name in the same directory and
  renamed over the target once complete: an error, a Ctrl-C or a SIGTERM never leaves a
  half-written file, and the temporary file is removed on every such path. A replaced file
  keeps its permission bits; a symbolic link is followed (the file it points to is replaced,
  the link stays).
* Anything else that exists (a FIFO, a character or block device such as ``/dev/null``, a
  socket) is written directly: renaming would replace it with a plain file.

The engine's pcapng trace writer (crates/core/src/sim/pcap.rs, ``OutputFile``) follows the same
rule. No fsync: the rule is about the process failing, not the machine.
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from rtnetlab.errors import UserError

#: Directories created for outputs during this command, in order, for the command to report.
created_directories: list[Path] = []

_counter = itertools.count()


def _is_special(st: os.stat_result) -> bool:
    return not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode))


def _stat(path: Path, where: str | None = None) -> os.stat_result | None:
    try:
        return path.stat()  # follows symbolic links
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        raise UserError(f"{where or path}: cannot be written ({e.strerror or e})") from None


def _nearest_existing(directory: Path) -> Path:
    d = directory
    while not d.exists() and d != d.parent:
        d = d.parent
    return d


def same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check(outputs: dict[str, Path], inputs: Iterable[Path] = ()) -> None:
    """Checks, before anything runs, that every output (option name -> path) can be written
    without harming anything: not a directory, not an input of the command, not another output,
    and in a place where a file can be created (the nearest existing directory is probed with a
    file of its own, created and removed at once). Raises UserError naming the option."""
    inputs = [Path(p) for p in inputs]
    seen: list[tuple[str, Path]] = []
    for option, path in outputs.items():
        path = Path(path)
        where = f"{option}: {path}" if option else str(path)
        st = _stat(path, where)
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise UserError(f"{where}: is a directory")
        for src in inputs:
            if same_file(path, src):
                raise UserError(f"{where}: is an input of this command ({src}); write the output elsewhere")
        for other_option, other in seen:
            if same_file(path, other):
                raise UserError(f"{where}: is also the output of {other_option or other}")
        seen.append((option, path))
        if st is not None and _is_special(st):
            if not os.access(path, os.W_OK):
                raise UserError(f"{where}: cannot be written (permission denied)")
            continue
        target = path.resolve() if st is not None else path
        existing = _nearest_existing(target.parent)
        if not existing.is_dir():
            raise UserError(f"{where}: {existing} is not a directory")
        try:
            probe = existing / f".{target.name}.{os.getpid()}-{next(_counter)}.probe"
            fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise UserError(f"{where}: cannot be written ({e.strerror or e})") from None


def make_parent(path: Path) -> None:
    parent = path.parent
    if parent.is_dir():
        return
    missing = []
    d = parent
    while not d.exists() and d != d.parent:
        missing.append(d)
        d = d.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"{path}: directory {parent} cannot be created ({e.strerror or e})") from None
    if missing:
        created_directories.append(missing[-1])


class OutputFile:
    """One output being written: `write` text or bytes, then `commit` (or use it as a context
    manager, which commits on success and discards on any exception, Ctrl-C included)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        st = _stat(self.path)
        self._temp: Path | None = None
        self._target = self.path
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise UserError(f"{self.path}: is a directory")
        try:
            if st is not None and _is_special(st):
                # A FIFO or a device: its reader expects the data in it, not a file in its place.
                self._fh = open(self.path, "wb")  # closed by commit or discard
                return
            if st is not None:
                self._target = self.path.resolve()
            else:
                make_parent(self.path)
            while True:
                temp = self._target.with_name(f".{self._target.name}.{os.getpid()}-{next(_counter)}.tmp")
                try:
                    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                    break
                except FileExistsError:
                    continue
            self._temp = temp
            self._fh = os.fdopen(fd, "wb")
            if st is not None:
                os.chmod(temp, stat.S_IMODE(st.st_mode))
        except OSError as e:
            self.discard()
            raise UserError(f"{self.path}: cannot be written ({e.strerror or e})") from None

    def write(self, data: str | bytes) -> None:
        try:
            self._fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        except OSError as e:
            self.discard()
            raise UserError(f"{self.path}: cannot be written ({e.strerror or e})") from None

    def commit(self) -> None:
        try:
            self._fh.close()
            if self._temp is not None:
                os.replace(self._temp, self._target)
                self._temp = None
        except OSError as e:
            self.discard()
            raise UserError(f"{self.path}: cannot be written ({e.strerror or e})") from None

    def discard(self) -> None:
        fh = getattr(self, "_fh", None)
        if fh is not None and not fh.closed:
            try:
                fh.close()
            except OSError:
                pass
        if self._temp is not None:
            self._temp.unlink(missing_ok=True)
            self._temp = None

    def __enter__(self) -> OutputFile:
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def atomic_write(path: Path, data: str | bytes) -> None:
    """Writes `data` (text as UTF-8) to `path` whole or not at all (see the module's rule)."""
    out = OutputFile(Path(path))
    try:
        out.write(data)
    except BaseException:
        out.discard()
        raise
    out.commit()


def write_all(files: dict[Path, str | bytes]) -> None:
    """Writes several files that belong together: every one is complete under its temporary
    name before any is renamed into place."""
    pending: list[OutputFile] = []
    try:
        for path, data in files.items():
            out = OutputFile(Path(path))
            pending.append(out)
            out.write(data)
        for out in pending:
            out.commit()
    except BaseException:
        for out in pending:
            out.discard()
        raise
