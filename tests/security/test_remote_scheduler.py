"""`--scheduler`: a tcp:// scheduler is refused unless trusted (a local user can bind a loopback
port and answer with a crafted result, which the client unpickles), a tls:// one is used with
the user's CA, certificate and key, checked before anything starts, and a real TLS scheduler
and worker started here run a sweep end to end."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("dask.distributed")
x509 = pytest.importorskip("cryptography.x509")

from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

SPEC = """
network: {generate: {virtual_links: 10, switches: 1, planes: 1}}
vary: {generate.virtual_links: [5, 10]}
seeds: 2
run: {analyze: {methods: [tfa]}}
keep: [analyze.tfa.max_delay_us]
"""

# A hostile local user's "scheduler": it listens on a loopback port and records who connects.
LISTENER = r"""
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
s.settimeout(60)
try:
    while True:
        conn, _ = s.accept()
        print("connected", flush=True)
        conn.close()
except (TimeoutError, KeyboardInterrupt):
    pass
"""


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_ca(directory: Path, name: str) -> tuple[Path, ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(_name(name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    path = directory / f"{name}.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path, key, cert


def issue(directory: Path, name: str, ca_key, ca_cert) -> tuple[Path, Path]:
    """A certificate of `ca` for `name` (scheduler, worker or client: Dask checks the CA only)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    cert_path, key_path = directory / f"{name}.pem", directory / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    key_path.chmod(0o600)
    return cert_path, key_path


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("pki")
    ca, ca_key, ca_cert = make_ca(d, "cluster-ca")
    other_ca, other_key, other_cert = make_ca(d, "other-ca")
    files = {"ca": ca, "other_ca": other_ca}
    for who in ("scheduler", "worker", "client"):
        files[f"{who}_cert"], files[f"{who}_key"] = issue(d, who, ca_key, ca_cert)
    files["stranger_cert"], files["stranger_key"] = issue(d, "stranger", other_key, other_cert)
    return files


def dask_cli() -> str:
    return str(Path(sys.executable).with_name("dask"))


@pytest.fixture(scope="module")
def tls_cluster(pki, tmp_path_factory):
    """A TLS scheduler and one worker started here (the remote cluster of the tests)."""
    d = tmp_path_factory.mktemp("cluster")
    tls = lambda who: ["--tls-ca-file", str(pki["ca"]), "--tls-cert", str(pki[f"{who}_cert"]),  # noqa: E731
                       "--tls-key", str(pki[f"{who}_key"])]
    scheduler_file = d / "scheduler.json"
    procs = [
        subprocess.Popen(
            [dask_cli(), "scheduler", "--host", "127.0.0.1", "--port", "0", "--protocol", "tls",
             *tls("scheduler"), "--no-dashboard", "--dashboard-address", "127.0.0.1:0",
             "--scheduler-file", str(scheduler_file)],
            cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists():
            assert procs[0].poll() is None, "the scheduler did not start"
            assert time.monotonic() < deadline
            time.sleep(0.1)
        address = json.loads(scheduler_file.read_text())["address"]
        procs.append(
            subprocess.Popen(
                [dask_cli(), "worker", address, *tls("worker"), "--nthreads", "1", "--nworkers", "1",
                 "--no-dashboard", "--local-directory", str(d)],
                cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            )
        )
        yield address
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def sweep(rtnetlab: Path, tmp_path: Path, *options: str) -> subprocess.CompletedProcess:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    return subprocess.run(
        [str(rtnetlab), "sweep", str(spec), "--out", str(tmp_path / "out"), "--json", *options],
        capture_output=True,
        text=True,
        timeout=300,
    )


def one_line_error(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    errors = json.loads(p.stdout)["errors"]
    assert len(errors) == 1 and "Traceback" not in p.stderr, p.stderr
    place, message = errors[0]["place"], errors[0]["message"]
    return f"{place}: {message}" if place else message


def test_a_tls_scheduler_runs_the_sweep_end_to_end(rtnetlab, tmp_path, pki, tls_cluster):
    p = sweep(
        rtnetlab, tmp_path, "--scheduler", tls_cluster, "--tls-ca", str(pki["ca"]),
        "--tls-cert", str(pki["client_cert"]), "--tls-key", str(pki["client_key"]),
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert (doc["rows"], doc["failed"], doc["scheduler"], doc["workers"]) == (4, 0, tls_cluster, None)
    assert tls_cluster.startswith("tls://127.0.0.1:")


def test_a_client_of_another_ca_is_not_admitted(rtnetlab, tmp_path, pki, tls_cluster):
    p = sweep(
        rtnetlab, tmp_path, "--scheduler", tls_cluster, "--tls-ca", str(pki["ca"]),
        "--tls-cert", str(pki["stranger_cert"]), "--tls-key", str(pki["stranger_key"]),
    )
    assert one_line_error(p).startswith(f"--scheduler: {tls_cluster}: cannot connect")
    assert not (tmp_path / "out").exists(), "nothing is written when the cluster does not answer"
    # Nor is a scheduler whose certificate this client's CA did not sign.
    p = sweep(
        rtnetlab, tmp_path, "--scheduler", tls_cluster, "--tls-ca", str(pki["other_ca"]),
        "--tls-cert", str(pki["client_cert"]), "--tls-key", str(pki["client_key"]),
    )
    assert one_line_error(p).startswith(f"--scheduler: {tls_cluster}: cannot connect")


def test_a_tcp_scheduler_on_a_loopback_port_of_another_user_is_refused(nobody, rtnetlab, tmp_path):
    listener = nobody.popen([nobody.python, "-c", LISTENER], stdout=subprocess.PIPE, text=True)
    try:
        port = int(listener.stdout.readline())
        p = sweep(rtnetlab, tmp_path, "--scheduler", f"tcp://127.0.0.1:{port}")
        message = one_line_error(p)
        assert message.startswith(
            f"--scheduler: tcp://127.0.0.1:{port}: a tcp:// scheduler is not authenticated"
        )
        assert "--trust-scheduler" in message
        assert not (tmp_path / "out").exists()
    finally:
        listener.send_signal(signal.SIGINT)
        out, _ = listener.communicate(timeout=30)
    assert "connected" not in out, "the sweep connected to another user's port"


def test_trust_is_the_users_word_for_tcp_only():
    from rtnetlab.sweep import cluster

    assert cluster.remote("tcp://10.0.0.5:8786", trust=True) == cluster.Remote("tcp://10.0.0.5:8786")
    assert cluster.remote(None) is None


@pytest.mark.parametrize(
    "options, expected",
    [
        (["--scheduler", "tls://127.0.0.1:8786"], "--tls-ca: a tls:// scheduler needs --tls-ca"),
        (["--scheduler", "tls://127.0.0.1:8786", "--tls-ca", "{ca}"], "--tls-cert: a tls:// scheduler needs"),
        (["--scheduler", "tls://127.0.0.1:8786", "--tls-ca", "{missing}", "--tls-cert", "{cert}"],
         "--tls-ca: {missing}: no such file"),
        (["--scheduler", "tls://127.0.0.1:8786", "--tls-ca", "{key}", "--tls-cert", "{cert}"],
         "--tls-ca: {key}: not a PEM certificate"),
        (["--scheduler", "tls://127.0.0.1:8786", "--tls-ca", "{ca}", "--tls-cert", "{cert}",
          "--tls-key", "{other_key}"], "--tls-key: {other_key}: not the key of {cert}"),
        (["--scheduler", "tcp://127.0.0.1:8786", "--tls-ca", "{ca}"],
         "--tls-ca: only with a tls:// scheduler"),
        (["--tls-cert", "{cert}"], "--tls-cert: only with --scheduler tls://"),
        (["--trust-scheduler"], "--trust-scheduler: only with --scheduler tcp://"),
        (["--scheduler", "inproc://x"], "--scheduler: 'inproc://x' is not a scheduler address"),
        (["--scheduler", "127.0.0.1:8786"], "--scheduler: '127.0.0.1:8786' is not a scheduler address"),
    ],
)
def test_scheduler_options_are_checked_before_anything_starts(rtnetlab, tmp_path, pki, options, expected):
    names = {
        "ca": pki["ca"], "cert": pki["client_cert"], "key": pki["client_key"],
        "other_key": pki["worker_key"], "missing": tmp_path / "missing.pem",
    }
    p = sweep(rtnetlab, tmp_path, *[o.format(**names) for o in options])
    assert one_line_error(p).startswith(expected.format(**names))
    assert not (tmp_path / "out").exists()
