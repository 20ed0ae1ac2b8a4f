"""The Dask cluster a sweep runs on, and who may talk to it (docs/SWEEPS.md, docs/SECURITY.md).

A Dask cluster runs whatever function it is sent, as the user who started it, and the client
unpickles what the cluster returns. So:

* The embedded cluster (the default) admits no one else: its scheduler (in this process) and
  its worker processes (each under a nanny) listen on 127.0.0.1 with mutual TLS, on credentials
  made for this run only and kept in memory (`Security.temporary()`); another local user can
  neither connect nor submit a function. No HTTP server listens (`nohttp`), and the scratch
  directory of every member (Dask's `local_directory`, which Dask also puts on `sys.path`) is
  the private folder of the sweep's recorded run (`rtnetlab.ownership`: 0700, in the state
  directory), removed when the cluster closes, normally or not, and by `testbed down --all` or
  the next sweep after a SIGKILL, with the workers the record lists.
* A remote scheduler (`--scheduler`) is trusted with this process: `tls://` with the user's CA,
  certificate and key (anyone holding a certificate of that CA is the cluster), or `tcp://` only
  with `--trust-scheduler`, because whoever answers at that address, another local user on a
  loopback port included, could run code here through a crafted result.

Every place that builds a Dask cluster goes through `connect`.
"""

from __future__ import annotations

import os
import re
import shutil
import ssl
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rtnetlab.errors import UserError

SCHEMES = ("tls://", "tcp://")
#: Scratch directories of earlier versions (rtnetlab-sweep-<pid>-<random>, in the temporary
#: directory), still removed when their sweep is gone.
SCRATCH_PREFIX = "rtnetlab-sweep-"
TRUST_HELP = (
    "a tcp:// scheduler is not authenticated: whoever answers at that address (another local user "
    "too, on a loopback port) runs code in this process through the results it returns"
)


@dataclass(frozen=True)
class Remote:
    """A remote scheduler checked by `remote`: its address and, for tls://, the client's files."""

    address: str
    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None


def _readable(option: str, path: Path) -> Path:
    try:
        with open(path, "rb"):
            pass
    except FileNotFoundError:
        raise UserError(f"{option}: {path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{option}: {path}: is a directory") from None
    except OSError as e:
        raise UserError(f"{option}: {path}: cannot be read ({e.strerror or e})") from None
    return path


def _ssl_reason(e: ssl.SSLError) -> str:
    return (e.reason or str(e)).replace("_", " ").lower()


def remote(
    scheduler: str | None,
    tls_ca: Path | None = None,
    tls_cert: Path | None = None,
    tls_key: Path | None = None,
    trust: bool = False,
) -> Remote | None:
    """The `--scheduler` options checked before anything starts (None: the embedded cluster).
    The TLS files are loaded here as the connection will load them, so a wrong file is one line
    naming its option, not a failure at connection time."""
    tls = {"--tls-ca": tls_ca, "--tls-cert": tls_cert, "--tls-key": tls_key}
    given = [o for o, v in tls.items() if v is not None]
    if scheduler is None:
        if given:
            raise UserError(f"{given[0]}: only with --scheduler tls://HOST:PORT")
        if trust:
            raise UserError("--trust-scheduler: only with --scheduler tcp://HOST:PORT")
        return None
    if not scheduler.startswith(SCHEMES) or len(scheduler.split("://", 1)[1]) == 0:
        raise UserError(
            f"--scheduler: '{scheduler}' is not a scheduler address (tls://HOST:8786 with --tls-ca, "
            "--tls-cert and --tls-key, or tcp://HOST:8786 with --trust-scheduler)"
        )
    if scheduler.startswith("tcp://"):
        if given:
            raise UserError(f"{given[0]}: only with a tls:// scheduler, got {scheduler}")
        if not trust:
            raise UserError(
                f"--scheduler: {scheduler}: {TRUST_HELP}; use tls:// with --tls-ca, --tls-cert and "
                "--tls-key, or add --trust-scheduler if you trust that address and every worker of it"
            )
        return Remote(scheduler)
    if tls_ca is None or tls_cert is None:
        missing = "--tls-ca" if tls_ca is None else "--tls-cert"
        raise UserError(
            f"{missing}: a tls:// scheduler needs --tls-ca (the cluster's CA), --tls-cert and "
            "--tls-key (this client's certificate and key; the key may be in the certificate's file)"
        )
    ca, cert = _readable("--tls-ca", tls_ca), _readable("--tls-cert", tls_cert)
    key = _readable("--tls-key", tls_key) if tls_key is not None else None
    try:
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(ca))
    except ssl.SSLError as e:
        raise UserError(f"--tls-ca: {ca}: not a PEM certificate ({_ssl_reason(e)})") from None
    if not ctx.get_ca_certs():
        raise UserError(f"--tls-ca: {ca}: holds no CA certificate")
    try:
        ctx.load_cert_chain(str(cert), str(key) if key else None)
    except ssl.SSLError as e:
        where = "--tls-key" if key is not None else "--tls-cert"
        raise UserError(
            f"{where}: {key or cert}: not the key of {cert}, or not PEM ({_ssl_reason(e)})"
        ) from None
    return Remote(scheduler, ca, cert, key)


@contextmanager
def connect(workers: int, scheduler: Remote | None) -> Iterator[object]:
    """A Dask client on `scheduler`, or on an embedded cluster of `workers` processes with one
    thread each (the engine releases the GIL, but points are mostly Python between engine calls,
    so processes scale and threads would not). Closed on every exit path."""
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)
    with _remote_client(scheduler) if scheduler is not None else _embedded(workers) as client:
        try:
            yield client
        except BaseException:
            # Stopped midway (an error, Ctrl-C, SIGTERM): while closing, the cluster logs every
            # task it can no longer report, hundreds of lines; the command says what happened.
            logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)
            raise


@contextmanager
def _remote_client(scheduler: Remote) -> Iterator[object]:
    from dask.distributed import Client, Security

    security = None
    if scheduler.address.startswith("tls://"):
        security = Security(
            require_encryption=True,
            tls_ca_file=str(scheduler.ca),
            tls_client_cert=str(scheduler.cert),
            tls_client_key=str(scheduler.key) if scheduler.key else None,
        )
    try:
        client = Client(scheduler.address, timeout="10s", security=security)
    except (OSError, TimeoutError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise UserError(f"--scheduler: {scheduler.address}: cannot connect ({reason})") from None
    try:
        yield client
    finally:
        client.close(timeout=10)


def remove_stale_scratch(base: str | None = None) -> list[str]:
    """Removes the scratch directories that earlier versions made in the temporary directory for
    embedded clusters later killed outright (SIGKILL leaves them no chance): only this user's, of
    mode 0700, named by SCRATCH_PREFIX, whose process is gone. Returns their paths."""
    base = base or tempfile.gettempdir()
    removed = []
    me = os.geteuid()
    for entry in os.scandir(base):
        m = re.fullmatch(rf"{SCRATCH_PREFIX}(\d+)-\w+", entry.name)
        if m is None:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != me or stat.S_IMODE(st.st_mode) != 0o700:
            continue
        try:
            os.kill(int(m[1]), 0)
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
        except (PermissionError, OverflowError):
            pass  # a process of another user has that id now
    return removed


def remove_dead_sweeps() -> list[str]:
    """Removes what the records of sweeps killed outright list (their scratch folders, workers
    still alive by pid and start time), as `testbed down --all` would: a SIGKILL leaves a sweep
    no chance to, and the next sweep is the first to notice."""
    from rtnetlab import ownership

    removed = []
    for doc in ownership.records():
        if doc.get("command") == "sweep" and not ownership.owner_alive(doc):
            try:
                removed += ownership.clean(doc["run"])["removed"]
            except UserError:
                pass  # its owner came back to life (a pid reused meanwhile): not ours to clean
    return removed


@contextmanager
def _embedded(workers: int) -> Iterator[object]:
    import logging

    import dask
    from dask.distributed import Client, Nanny, Security, SpecCluster
    from distributed.worker_memory import parse_memory_limit

    from rtnetlab import ownership
    from rtnetlab.sweep import nohttp

    remove_stale_scratch()
    remove_dead_sweeps()
    # One recorded run: Dask's scratch space (which Dask puts on the workers' sys.path) is the
    # run's private folder, not the predictable /tmp/dask-scratch-space another user can make
    # first, and `testbed down --all` removes it, and the workers, after a SIGKILL.
    with ownership.Run("sweep") as own:
        scratch = str(own.folder())
        security = Security.temporary()
        common = {
            "host": "127.0.0.1",
            "protocol": "tls://",
            "security": security,
            "dashboard": False,
            "dashboard_address": None,
        }
        worker = {
            "cls": Nanny,
            "options": {
                **common,
                "nthreads": 1,
                "worker_class": nohttp.Worker,
                "local_directory": scratch,
                # As LocalCluster: the host's memory shared by the workers.
                "memory_limit": parse_memory_limit("auto", 1, workers, logger=logging.getLogger(__name__)),
                # A point's error is its row's; what a worker logs besides is its cluster closing
                # under it (heartbeats to a scheduler gone), with tracebacks.
                "silence_logs": logging.CRITICAL,
            },
        }
        config = {"temporary-directory": scratch}
        with dask.config.set(config):
            cluster = SpecCluster(
                scheduler={"cls": nohttp.Scheduler, "options": {**common, "port": 0}},
                workers=dict.fromkeys(range(workers), worker),
                security=security,
                silence_logs=logging.ERROR,
            )
            try:
                client = Client(cluster, security=security)
                try:
                    for pid in client.run(os.getpid).values():
                        own.add_process(pid, "sweep worker")
                    yield client
                finally:
                    client.close(timeout=10)
            finally:
                cluster.close(timeout=10)
