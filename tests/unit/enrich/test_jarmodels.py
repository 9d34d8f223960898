"""Models that come as Maven jars: installed whole or not at all, checked by the jar's
sha256, never fetched twice; a missing model is one line naming the install command.
The fetch is a local jar built here (the real Maven resolution runs in
tests/integration/test_bge_model.py)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import numpy as np
import pytest

from graphmem.enrich.bge import cls_normalise
from graphmem.enrich.embed import embed_queries
from graphmem.enrich.embedders import make_embedder
from graphmem.enrich.jarmodels import JAR_MODELS, JarModel
from graphmem.errors import ConfigurationError
from graphmem.ops.devstack.models import install


def build_jar(folder: Path, entries: dict[str, bytes]) -> tuple[Path, str]:
    jar = folder / "model-1.0.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        archive.writestr("dev/langchain4j/Some.class", b"\xca\xfe")
    return jar, hashlib.sha256(jar.read_bytes()).hexdigest()


def model_for(sha256: str) -> JarModel:
    return JarModel(
        name="tiny",
        artifact="org.example:model:1.0",
        sha256=sha256,
        onnx="tiny.onnx",
        tokenizer="tiny-tokenizer.json",
        description="a test double",
    )


class JarFetch:
    def __init__(self, jar: Path) -> None:
        self.jar = jar
        self.calls = 0

    def __call__(self, model: JarModel, into: Path) -> Path:
        self.calls += 1
        target = into / model.jar
        target.write_bytes(self.jar.read_bytes())
        return target


def test_a_model_is_unpacked_once_and_found_afterwards(tmp_path: Path) -> None:
    jar, digest = build_jar(tmp_path, {"tiny.onnx": b"weights", "tiny-tokenizer.json": b"{}"})
    model, fetch, models = model_for(digest), JarFetch(jar), tmp_path / "models"
    directory = install(model, models, fetch)
    onnx, tokenizer = model.files(models)
    assert (onnx.read_bytes(), tokenizer.read_bytes()) == (b"weights", b"{}")
    assert onnx.parent == directory == models / "tiny"
    assert sorted(p.name for p in directory.iterdir()) == [
        ".jar-sha256",
        "tiny-tokenizer.json",
        "tiny.onnx",
    ]
    install(model, models, fetch)
    assert fetch.calls == 1
    # a folder left incomplete (the marker gone) is unpacked again
    (directory / ".jar-sha256").unlink()
    install(model, models, fetch)
    assert fetch.calls == 2 and model.files(models) == (onnx, tokenizer)


def test_a_jar_with_another_digest_installs_nothing(tmp_path: Path) -> None:
    jar, _ = build_jar(tmp_path, {"tiny.onnx": b"tampered", "tiny-tokenizer.json": b"{}"})
    model, models = model_for("0" * 64), tmp_path / "models"
    with pytest.raises(ConfigurationError, match="sha256"):
        install(model, models, JarFetch(jar))
    assert not model.directory(models).exists()
    assert [p.name for p in models.iterdir()] == []  # no staging folder left behind


def test_a_jar_without_the_model_installs_nothing(tmp_path: Path) -> None:
    jar, digest = build_jar(tmp_path, {"tiny-tokenizer.json": b"{}"})
    model, models = model_for(digest), tmp_path / "models"
    with pytest.raises(ConfigurationError, match=r"holds no tiny\.onnx"):
        install(model, models, JarFetch(jar))
    assert list(models.iterdir()) == []


def test_a_missing_model_names_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="graphmem services install") as caught:
        make_embedder("bge-small-int8", 1, models_dir=tmp_path)
    assert "\n" not in str(caught.value)
    assert JAR_MODELS["bge-small-int8"].artifact in str(caught.value)


def test_bge_pools_the_cls_token_and_normalises() -> None:
    hidden = np.zeros((2, 3, 4), dtype=np.float32)
    hidden[0, 0] = [3, 4, 0, 0]
    hidden[0, 1:] = 100  # later tokens never count
    hidden[1, 0] = [0, 0, 0, 2]
    mask = np.array([[1, 1, 1], [1, 0, 0]])
    np.testing.assert_allclose(cls_normalise(hidden, mask), [[0.6, 0.8, 0, 0], [0, 0, 0, 1]])


class Recording:
    name = "recording"
    dimension = 2
    query_prefix = "Query: "

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.seen += texts
        return np.ones((len(texts), 2), dtype=np.float32)


def test_queries_get_the_models_instruction_and_documents_do_not() -> None:
    embedder = Recording()
    embed_queries(embedder, ["where is the cat?"])
    embedder.embed(["the cat is on the mat"])
    assert embedder.seen == ["Query: where is the cat?", "the cat is on the mat"]
