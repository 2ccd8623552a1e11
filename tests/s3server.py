"""An S3-compatible server on 127.0.0.1 for the tests: moto's server mode, offline, no mocking.

The server is a real HTTP endpoint in its own process; funes (LanceDB, pyarrow) talks to it
exactly as to AWS. Tests read the bucket back with boto3 to see what an attacker with bucket
access would see: every object, every byte.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Bucket", "S3Server", "free_port", "start_server"]

CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "funes-test",
    "AWS_SECRET_ACCESS_KEY": "funes-test-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class S3Server:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        )

    def new_bucket(self) -> Bucket:
        name = f"funes-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return Bucket(self, name)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@dataclass
class Bucket:
    server: S3Server
    name: str

    def uri(self, prefix: str = "mem") -> str:
        return f"s3://{self.name}/{prefix}"

    def options(self, endpoint: str | None = None) -> dict[str, str]:
        return {"endpoint": endpoint or self.server.endpoint, "allow_http": "true", "region": "us-east-1"}

    def keys(self) -> list[str]:
        client = self.server.client()
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=self.name)
        return sorted(obj["Key"] for page in pages for obj in page.get("Contents", []))

    def objects(self) -> Iterator[tuple[str, bytes]]:
        """Every object with its whole content, as anyone with read access to the bucket gets it."""
        client = self.server.client()
        for key in self.keys():
            yield key, client.get_object(Bucket=self.name, Key=key)["Body"].read()


#: How long moto may take to answer its first request. It starts in a second or two on a quiet
#: machine; the bound is only there to turn a server that will never come up into an error, so it
#: is generous enough for a machine shared by many loaded jobs (seen: 40 s at a load of 39).
START_SECONDS = 180


def start_server(log_dir: Path, extra_env: dict[str, str] | None = None) -> S3Server:
    """moto on a free port, answering; ``extra_env`` configures it (``INITIAL_NO_AUTH_ACTION_COUNT``)."""
    port = free_port()
    log = log_dir / f"moto-{port}.log"
    env = {**os.environ, **CREDENTIALS, **(extra_env or {})}
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
        )
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/moto-api/", timeout=1).read()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"moto server did not start; see {log}") from None
            time.sleep(0.1)
    return S3Server(proc, port, log)


def _fixtures() -> tuple[object, object]:
    """pytest fixtures for test modules: ``s3`` (one server per module) and ``bucket`` (a fresh one)."""
    import pytest

    @pytest.fixture(scope="module")
    def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
        server = start_server(tmp_path_factory.mktemp("moto"))
        yield server
        server.stop()

    @pytest.fixture
    def bucket(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> Bucket:
        for key, value in CREDENTIALS.items():
            monkeypatch.setenv(key, value)
        return s3.new_bucket()

    return s3, bucket


s3_fixture, bucket_fixture = _fixtures()


def attacker_scan(root: Path, needles: list[str]) -> dict[str, list[str]]:
    """Every file under ``root`` read whole, as an attacker would: which needle is in which file.

    Case-insensitive (the full-text index lowercases), also in UTF-16 and in JSON-escaped form.
    """
    found: dict[str, list[str]] = {}
    forms = {n: _forms(n) for n in needles}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        data = path.read_bytes().lower()
        for needle, variants in forms.items():
            if any(v in data for v in variants):
                found.setdefault(needle, []).append(path.relative_to(root).as_posix())
    return found


def bucket_scan(bucket: Bucket, needles: list[str]) -> dict[str, list[str]]:
    """The same scan over every object of a bucket (listed, then read whole)."""
    found: dict[str, list[str]] = {}
    forms = {n: _forms(n) for n in needles}
    for key, body in bucket.objects():
        data = body.lower()
        for needle, variants in forms.items():
            if any(v in data for v in variants):
                found.setdefault(needle, []).append(key)
    return found


def _forms(needle: str) -> list[bytes]:
    import json

    low = needle.lower()
    return [low.encode(), low.encode("utf-16-le"), json.dumps(low)[1:-1].encode()]
