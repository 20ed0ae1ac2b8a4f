"""``--capture DIR``: one pcapng per egress port, written as root into a directory a user names,
which may be shared with others.

* What crosses a port is captured where it arrives: dumpcap on the interface at the other end of
  the port's link, inbound frames, stamped by the kernel on arrival. In user mode the ports send
  past the qdisc layer (``PACKET_QDISC_BYPASS``), which also bypasses the sending interface's
  packet taps: a capture there stays empty; the receiving side sees every frame in both modes,
  and its stamp is the end of the frame's transmission, as the model's arrival. A file with no
  frame is said in the run's warnings (`frames_in`).

* DIR's symbolic links are checked by the output rule (`rtnetlab.io.output.resolve`: one made
  by another user is refused, naming it), then DIR is opened one component at a time from ``/``
  without following links; missing directories are made and given to their parent's owner.
* The run makes a folder of its own inside DIR, ``DIR/rtnl-<token>/`` (``mkdir``: never one that
  exists), recorded in the run's record before it is made (and kept: it is the user's output).
* Each file is created in that folder through its descriptor, exclusively and without following
  links (``O_CREAT | O_EXCL | O_NOFOLLOW``), and dumpcap writes to the open file (``-w -``):
  nothing is opened by name once the checks are done. The folder and its files are then given to
  DIR's owner.
* File names map node and port injectively: ``safe_name(node) + "_" + port + ".pcapng"``
  (`rtnetlab.io.output.safe_name`: every byte outside ``[A-Za-z0-9._-]`` percent-encoded, ``E/1``
  -> ``E%2F1``, ``E:1`` -> ``E%3A1``); the port is a number, so the last ``_`` separates the two.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

from rtnetlab import ownership
from rtnetlab.errors import UserError
from rtnetlab.io.output import resolve, safe_name


def file_name(node: str, port: str) -> str:
    """The capture file of port `port` of `node` (a different file for every port)."""
    try:
        return f"{safe_name(node)}_{safe_name(port)}.pcapng"
    except ValueError as e:
        raise UserError(f"--capture: node {node!r}: {e}") from None


def check(path: Path, option: str = "--capture") -> None:
    """Before anything runs: the links on the way to `path` (the output rule), an existing `path`
    must be a directory, and a missing one is made now (so that a place where none can be made
    is refused before the run)."""
    target = resolve(Path(path), option)
    if target.exists() and not target.is_dir():
        raise UserError(f"{option}: {path}: is not a directory")
    os.close(open_directory(Path(path), option))


def frames_in(path: Path) -> int:
    """Packets in a pcapng file (enhanced, simple and obsolete packet blocks); 0 when it cannot be
    read."""
    import struct

    try:
        data = Path(path).read_bytes()
    except OSError:
        return 0
    n, at = 0, 0
    order = "<"
    while at + 12 <= len(data):
        kind = struct.unpack_from(order + "I", data, at)[0]
        if kind == 0x0A0D0D0A:  # section header: its byte-order magic says how to read the rest
            order = "<" if data[at + 8 : at + 12] == b"\x4d\x3c\x2b\x1a" else ">"
        length = struct.unpack_from(order + "I", data, at + 4)[0]
        if length < 12:
            break
        if kind in (2, 3, 6):
            n += 1
        at += length
    return n


def open_directory(path: Path, option: str = "--capture") -> int:
    """A descriptor of directory `path` (made where missing): every symbolic link on the way
    checked by the output rule (`rtnetlab.io.output.resolve`: another user's link is refused,
    naming it), then the path walked from / one name at a time without following links."""
    target = resolve(Path(path), option)
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in target.parts[1:]:
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                parent = os.fstat(fd)
                try:
                    os.mkdir(name, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
                except OSError as e:
                    raise UserError(f"{option}: {path}: cannot make {name} ({e.strerror})") from None
                _give(fd, name, parent)
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                raise UserError(f"{option}: {path}: {name} became a symbolic link meanwhile; refused")
            if not stat.S_ISDIR(st.st_mode):
                raise UserError(f"{option}: {path}: {name} is not a directory")
            try:
                nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as e:
                raise UserError(f"{option}: {path}: cannot open {name} ({e.strerror})") from None
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise


def _give(dir_fd: int, name: str, to: os.stat_result) -> None:
    """A directory we just made inside another user's directory becomes that user's."""
    if os.geteuid() != 0 or to.st_uid == 0:
        return
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError:
        return
    try:
        os.fchown(fd, to.st_uid, to.st_gid)
    finally:
        os.close(fd)


class Captures:
    """The dumpcap processes of one run, their files in the run's own folder inside DIR."""

    def __init__(self, own: ownership.Run, plan: dict, netns_of, directory: Path):
        if shutil.which("dumpcap") is None:
            raise UserError(
                "--capture: dumpcap (Wireshark's capture program, Debian package tshark) is missing"
            )
        self.procs: list[tuple[subprocess.Popen, Path]] = []
        dir_fd = open_directory(directory)
        try:
            owner = os.fstat(dir_fd)
            self.folder = Path(directory) / own.name
            entry = {"kind": "capture", "path": str(self.folder)}
            own.record(entry)
            try:
                os.mkdir(own.name, 0o755, dir_fd=dir_fd)
            except OSError as e:
                own.forget(entry)
                raise UserError(f"--capture: {self.folder}: cannot be made ({e.strerror})") from None
            folder_fd = os.open(own.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
        files = []
        try:
            for p in plan["ports"]:
                node = plan["nodes"][p["node"]]["name"]
                name = file_name(node, p["label"][len(node) + 1 :])
                fd = os.open(
                    name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=folder_fd
                )
                files.append((p, fd, self.folder / name))
            if os.geteuid() == 0 and owner.st_uid != 0:
                for _, fd, _ in files:
                    os.fchown(fd, owner.st_uid, owner.st_gid)
                os.fchown(folder_fd, owner.st_uid, owner.st_gid)
            for p, fd, path in files:
                # dumpcap at the other end of the port's link (inbound frames), writing to the file
                # we opened; it dies with us (SIGTERM: it closes the file whole), and is recorded.
                far = plan["ports"][p["reverse"]]
                proc = ownership.spawn(
                    ["ip", "netns", "exec", netns_of(far["node"]), "dumpcap", "-q", "-i", far["ifname"],
                     "-f", "inbound", "-w", "-"],
                    what=f"dumpcap {p['label']}",
                    own=own,
                    sig=signal.SIGTERM,
                    stdout=fd,
                    stderr=subprocess.PIPE,
                )  # fmt: skip
                self.procs.append((proc, path))
        finally:
            for _, fd, _ in files:
                os.close(fd)
            os.close(folder_fd)
        # dumpcap says "Capturing on ..." once it captures: the run starts after every one has.
        deadline = time.monotonic() + 20
        for proc, path in self.procs:
            line = b""
            while b"Capturing on" not in line:
                ready, _, _ = select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    raise UserError(f"--capture: dumpcap did not start capturing into {path}")
                chunk = proc.stderr.readline()
                if not chunk:
                    raise UserError(f"--capture: dumpcap stopped: {line.decode(errors='replace').strip()}")
                line = chunk

    def stop(self, own: ownership.Run) -> list[str]:
        """Stops every dumpcap (SIGINT: each closes its file whole); the files written."""
        for proc, _ in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc, _ in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stderr:
                proc.stderr.close()
            own.ended(proc.pid)
        return [str(p) for _, p in self.procs]
