"""GraphiQL's browser files, fetched from the npm registry at install time (never at
run time, and never committed: they are megabytes of minified code).

``npm pack`` downloads each pinned package and checks it against the registry's
integrity; the tarball is then checked against the integrity pinned here, so a
republished version cannot slip in. The stylesheet's fonts are data: URLs, which a
Content-Security-Policy of 'self' would refuse: they are written out as files of their
own (as are its images) and the stylesheet points at those.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from graphmem.errors import ConfigurationError

#: where the fetched files live: inside the package, beside the page that loads them
VENDOR = Path(__file__).resolve().parent / "vendor"


@dataclass(frozen=True)
class Package:
    spec: str
    integrity: str
    #: file in the tarball → name it is served under
    files: dict[str, str]


PACKAGES = (
    Package(
        "react@18.3.1",
        "sha512-wS+hAgJShR0KhEvPJArfuPVN1+Hz1t0Y6n5jLrGQbkb4urgPE/0Rve+1kMB1v/oWgHgm4WIcV+i7F2pTVj+2iQ==",
        {"package/umd/react.production.min.js": "react.production.min.js"},
    ),
    Package(
        "react-dom@18.3.1",
        "sha512-5m4nQKp+rZRb09LNH59GM4BxTh9251/ylbKIbpe7TpGxfJ+9kv6BLkLBXIjjspbgbnIBNqlI23tRnTWT0snUIw==",
        {"package/umd/react-dom.production.min.js": "react-dom.production.min.js"},
    ),
    Package(
        # 3.x: the last line of GraphiQL with a UMD build (4 and later load from a CDN)
        "graphiql@3.8.3",
        "sha512-cuPDYtXVKV86Pu5PHBX642Odi/uVEE2y1Jxq5rGO/Qy1G2lRp7ZZ7a/T30RzxhuLSWo9zUbzq0P3U49//H0Ugw==",
        {
            "package/graphiql.min.js": "graphiql.min.js",
            "package/graphiql.min.css": "graphiql.min.css",
        },
    ),
)

NPM_FIX = "install Node.js's npm (Debian: apt-get install -y npm)"
_STAMP = ".fetched"
_EMBEDDED = re.compile(rb"url\(data:(font/woff2|font/woff|image/png);base64,([A-Za-z0-9+/=]+)\)")
_SUFFIX = {b"font/woff2": "woff2", b"font/woff": "woff", b"image/png": "png"}


def _stamp() -> str:
    return hashlib.sha256(repr(PACKAGES).encode()).hexdigest()[:16]


def installed(directory: Path = VENDOR) -> bool:
    marker = directory / _STAMP
    return marker.is_file() and marker.read_text().strip() == _stamp()


def _integrity(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def _embedded_to_files(css: bytes, directory: Path) -> bytes:
    def extract(match: re.Match[bytes]) -> bytes:
        data = base64.b64decode(match.group(2))
        name = f"{hashlib.sha256(data).hexdigest()[:16]}.{_SUFFIX[match.group(1)]}"
        (directory / name).write_bytes(data)
        return f"url({name})".encode()

    return _EMBEDDED.sub(extract, css)


def fetch(directory: Path = VENDOR) -> Path:
    """Fetch the pinned packages into ``directory`` (nothing to do when they are there)."""
    if installed(directory):
        return directory
    npm = shutil.which("npm")
    if npm is None:
        raise ConfigurationError(
            f"npm not found on PATH: the GraphQL IDE's files come from it; {NPM_FIX}"
        )
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [npm, "pack", "--json", "--pack-destination", tmp, *(p.spec for p in PACKAGES)],
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp,
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise ConfigurationError(f"npm could not fetch the GraphQL IDE's files: {last}")
        packed = {entry["id"]: Path(tmp) / entry["filename"] for entry in json.loads(done.stdout)}
        staging = Path(tmp) / "vendor"
        staging.mkdir()
        for package in PACKAGES:
            tarball = packed[package.spec]
            if _integrity(tarball) != package.integrity:
                raise ConfigurationError(f"{package.spec} from npm is not the pinned tarball")
            with tarfile.open(tarball) as archive:
                for member, name in package.files.items():
                    source = archive.extractfile(member)
                    if source is None:
                        raise ConfigurationError(f"{package.spec} has no {member}")
                    data = source.read()
                    if name.endswith(".css"):
                        data = _embedded_to_files(data, staging)
                    (staging / name).write_bytes(data)
        (staging / _STAMP).write_text(_stamp() + "\n")
        if directory.exists():
            shutil.rmtree(directory)
        shutil.copytree(staging, directory)
    return directory
