"""Output files: the one rule every file rtnetlab writes follows.

* Checked before any work (`check`): a path that is a directory, one of the command's inputs, or
  another output of the same command is a user error, and so is a place where nothing can be
  written. Missing directories are created when the file is written (as ``mkdir -p`` would),
  and said so (`created_directories`); nothing is created when the command stops before.
* A regular file, or a new path, is written under a temporary name in the same directory and
  renamed over the target once complete: an error, a Ctrl-C or a SIGTERM never leaves a
  half-written file, and the temporary file is removed on every such path. A replaced file
  keeps its permission bits (set on the temporary file before the rename, never through a path).
* Anything else that exists (a FIFO, a character or block device such as ``/dev/null``, a
  socket) is written directly: renaming would replace it with a plain file.
* A symbolic link on the way (the output itself, or a directory above it) is followed only when
  this user made it or root did, and in a directory every user may write to with the sticky bit
  (``/tmp``) only when this user made it: another user's link is refused with one line, so that
  rtnetlab run as root never writes where another user points it (docs/SECURITY.md). The path is
  then walked one directory at a time without following links (``O_NOFOLLOW``), and the
  temporary file is created with ``O_EXCL | O_NOFOLLOW`` inside the directory opened so, so a
  link swapped in after the check is not followed either.

The engine's pcapng trace writer (crates/core/src/sim/pcap.rs, ``OutputFile``) follows the same
rule once `check` has passed its path. No fsync unless asked: the rule is about the process
failing, not the machine. `safe_name` turns any name into a file name of its own.
"""

from __future__ import annotations

import errno
import itertools
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from rtnetlab.errors import UserError

#: Directories created for outputs during this command, in order, for the command to report.
created_directories: list[Path] = []

_counter = itertools.count()
#: Symbolic links followed in one path at most (the kernel's own bound).
MAX_LINKS = 40
# O_PATH: a directory's descriptor for the *at calls, without needing to read the directory.
_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _is_special(st: os.stat_result) -> bool:
    return not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode))


def _cannot(where: str, e: OSError) -> UserError:
    return UserError(f"{where}: cannot be written ({e.strerror or e})")


def _owner(uid: int) -> str:
    import pwd

    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _check_link(link: Path, st: os.stat_result, directory: os.stat_result, where: str) -> None:
    """A link may be followed when this user or root made it, and in a sticky directory every user
    may write to (/tmp) only when this user made it: anyone may plant a link there."""
    me = os.geteuid()
    shared = bool(directory.st_mode & stat.S_ISVTX) and bool(directory.st_mode & stat.S_IWOTH)
    if st.st_uid == me or (st.st_uid == 0 and not shared):
        return
    if shared:
        raise UserError(
            f"{where}: {link} is a symbolic link made by {_owner(st.st_uid)} in {link.parent}, a "
            "directory every user may write to: not followed (write to its target directly if you "
            "trust it)"
        )
    raise UserError(
        f"{where}: {link} is a symbolic link made by {_owner(st.st_uid)}, another user: not "
        "followed (write to its target directly if you trust it)"
    )


def resolve(path: Path, where: str | None = None) -> Path:
    """`path` made absolute with every symbolic link on the way followed, each one checked by the
    module's rule (UserError naming `where` otherwise). What does not exist yet is kept as given."""
    where = where or str(path)
    absolute = Path(path) if Path(path).is_absolute() else Path(os.getcwd()) / path
    rest = list(reversed(absolute.parts))
    done = Path("/")
    done_st = os.stat("/")
    links = 0
    while rest:
        part = rest.pop()
        if part in ("", ".", "/"):
            continue
        if part == "..":
            done = done.parent
            done_st = os.stat(done)
            continue
        here = done / part
        try:
            st = os.lstat(here)
        except (FileNotFoundError, NotADirectoryError):
            # Not there yet: the rest is created (by `make_parent` and the file itself).
            return Path(os.path.normpath(here.joinpath(*reversed(rest))))
        except OSError as e:
            raise _cannot(where, e) from None
        if stat.S_ISLNK(st.st_mode):
            links += 1
            if links > MAX_LINKS:
                raise UserError(f"{where}: more than {MAX_LINKS} symbolic links on the way")
            _check_link(here, st, done_st, where)
            target = Path(os.readlink(here))
            rest += list(reversed(target.parts))
            if target.is_absolute():
                done, done_st = Path("/"), os.stat("/")
            continue
        done, done_st = here, st
    return done


def _open_dir(directory: Path, where: str, create: bool, shown: Path | None = None) -> int:
    """A file descriptor of `directory` (a path `resolve` gave), walked from / one name at a time
    without following links; missing directories are made when `create` (else FileNotFoundError)
    and the first one listed in `created_directories` as the user wrote it (`shown`: `directory`
    as given)."""
    fd = os.open("/", _DIR_FLAGS)
    made: Path | None = None
    try:
        here = Path("/")
        for part in directory.parts[1:]:
            here = here / part
            if create:
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                    made = made or here
                except FileExistsError:
                    pass
            try:
                nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                if e.errno == errno.ELOOP:  # a link appeared since the path was checked
                    raise UserError(f"{where}: {here} became a symbolic link while being written") from None
                raise
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    if made is not None:
        # Missing directories are never links: the user's path ends with the same names.
        up = len(directory.parts) - len(made.parts)
        if shown is not None and len(shown.parts) > up:
            made = shown.parents[up - 1] if up else shown
        created_directories.append(made)
    return fd


def _nearest_existing(directory: Path) -> Path:
    d = directory
    while not d.exists() and d != d.parent:
        d = d.parent
    return d


_SAFE = re.compile(r"[A-Za-z0-9_.-]")


def safe_name(name: str) -> str:
    """`name` as a file name of its own, one-to-one: every byte of its UTF-8 outside
    [A-Za-z0-9._-] written %XX (so `%` itself too), and a leading dot as %2E (no hidden file,
    no `.` or `..`). ValueError when empty or longer than a file name may be (255 bytes)."""
    if not name:
        raise ValueError("an empty name has no file name")
    out = []
    for i, ch in enumerate(name):
        if _SAFE.fullmatch(ch) and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    text = "".join(out)
    if len(text) > 255:
        raise ValueError(f"'{name[:40]}...' is too long for a file name once encoded ({len(text)} bytes)")
    return text


def same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check(outputs: dict[str, Path], inputs: Iterable[Path] = ()) -> None:
    """Checks, before anything runs, that every output (option name -> path) can be written
    without harming anything: no other user's symbolic link on the way, not a directory, not an
    input of the command, not another output, and in a place where a file can be created (the
    nearest existing directory is probed with a file of its own, created and removed at once).
    Raises UserError naming the option."""
    inputs = [Path(p) for p in inputs]
    seen: list[tuple[str, Path]] = []
    for option, path in outputs.items():
        path = Path(path)
        where = f"{option}: {path}" if option else str(path)
        target = resolve(path, where)
        try:
            st = target.stat()
        except (FileNotFoundError, NotADirectoryError):
            st = None
        except OSError as e:
            raise _cannot(where, e) from None
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
            if not os.access(target, os.W_OK):
                raise UserError(f"{where}: cannot be written (permission denied)")
            continue
        existing = _nearest_existing(target.parent)
        if not existing.is_dir():
            raise UserError(f"{where}: {existing} is not a directory")
        try:
            dfd = _open_dir(existing, where, create=False)
            try:
                probe = f".{target.name}.{os.getpid()}-{next(_counter)}.probe"
                fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
                os.close(fd)
                os.unlink(probe, dir_fd=dfd)
            finally:
                os.close(dfd)
        except OSError as e:
            raise _cannot(where, e) from None


def make_parent(path: Path) -> None:
    """The directories above `path` made where missing (each named in `created_directories`),
    through checked links only."""
    try:
        os.close(_open_dir(resolve(path).parent, str(path), create=True, shown=Path(path).parent))
    except OSError as e:
        raise UserError(f"{path}: directory {path.parent} cannot be created ({e.strerror or e})") from None


def directory(path: Path, where: str) -> Path:
    """An output directory (`--out DIR`) made where missing, through checked links only; its
    resolved path."""
    target = resolve(path, where)
    try:
        os.close(_open_dir(target, where, create=True, shown=Path(path)))
    except NotADirectoryError:
        raise UserError(f"{where}: is not a directory") from None
    except OSError as e:
        raise UserError(f"{where}: cannot be created ({e.strerror or e})") from None
    return target


class OutputFile:
    """One output being written: `write` text or bytes, then `commit` (or use it as a context
    manager, which commits on success and discards on any exception, Ctrl-C included).
    `mode`: the permission bits of the file written (default: a replaced file's own, or the
    umask's); `fsync`: flush it to the disk before the rename."""

    def __init__(self, path: Path, mode: int | None = None, fsync: bool = False):
        self.path = Path(path)
        self._temp: str | None = None
        self._dir: int | None = None
        self._fsync = fsync
        where = str(self.path)
        target = resolve(self.path, where)
        self._name = target.name
        try:
            st = target.stat()
        except (FileNotFoundError, NotADirectoryError):
            st = None
        except OSError as e:
            raise _cannot(where, e) from None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise UserError(f"{self.path}: is a directory")
        try:
            self._dir = _open_dir(target.parent, where, create=st is None, shown=self.path.parent)
            if st is not None and _is_special(st):
                # A FIFO or a device: its reader expects the data in it, not a file in its place.
                fd = os.open(self._name, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self._dir)
                self._close_dir()
                self._fh = os.fdopen(fd, "wb")  # closed by commit or discard
                return
            while True:
                temp = f".{self._name}.{os.getpid()}-{next(_counter)}.tmp"
                try:
                    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
                    fd = os.open(temp, flags, 0o666, dir_fd=self._dir)
                    break
                except FileExistsError:
                    continue
            self._temp = temp
            self._fh = os.fdopen(fd, "wb")
            if mode is not None:
                os.fchmod(fd, mode)
            elif st is not None:
                os.fchmod(fd, stat.S_IMODE(st.st_mode))
        except OSError as e:
            self.discard()
            raise _cannot(where, e) from None

    def write(self, data: str | bytes) -> None:
        try:
            self._fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        except OSError as e:
            self.discard()
            raise UserError(f"{self.path}: cannot be written ({e.strerror or e})") from None

    def commit(self) -> None:
        try:
            if self._fsync:
                self._fh.flush()
                os.fsync(self._fh.fileno())
            self._fh.close()
            if self._temp is not None:
                # rename() replaces the name itself: a link put there meanwhile is not followed.
                os.replace(self._temp, self._name, src_dir_fd=self._dir, dst_dir_fd=self._dir)
                self._temp = None
            self._close_dir()
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
            try:
                os.unlink(self._temp, dir_fd=self._dir)
            except FileNotFoundError:
                pass
            self._temp = None
        self._close_dir()

    def _close_dir(self) -> None:
        if self._dir is not None:
            os.close(self._dir)
            self._dir = None

    def __enter__(self) -> OutputFile:
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def atomic_write(path: Path, data: str | bytes, mode: int | None = None) -> None:
    """Writes `data` (text as UTF-8) to `path` whole or not at all (see the module's rule);
    `mode`: its permission bits (e.g. 0o755 for a script), set before it takes the name."""
    out = OutputFile(Path(path), mode)
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
