"""The OpenAI-compatible server engine (``--engine openai --base-url URL``): a causal LM that a server holds.

The server (vLLM, SGLang, ...) holds the weights, this process only the tokenizer: the prompts, answers and tokens are
``unqover probe``'s own (:class:`unqover.scoring.causal.CausalScorer`), and each continuation is asked as the token
ids of its prompt + answer at ``POST {base}/completions`` with ``echo``, ``logprobs: 1``, one generated token and
temperature 0, as lm-evaluation-harness's ``local-completions`` model asks; its log-likelihood is the sum of the
echoed log-probabilities at the answer's positions. Several prompts go in one request, several requests are in flight
at once (``--concurrency``), and a request that fails for a reason that passes (no connection, a timeout, HTTP 429 or
5xx) is tried again a bounded number of times (``--retries``, waiting as ``Retry-After`` says, else longer each time).
An API key is read from ``OPENAI_API_KEY`` only, sent as ``Authorization: Bearer``, and never recorded.

The standard library speaks HTTP: the engine needs nothing beyond the ``models`` extra (transformers, for the
tokenizer). A served model is identified by the base URL and what the server reports of it (``GET {base}/models``).
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from unqover.errors import UnqoverError, first_line
from unqover.options import Option
from unqover.scoring.engines.base import Engine
from unqover.scoring.requests import CONTINUATIONS, Continuations, EngineRequest

if TYPE_CHECKING:  # the command line reads this module's options before anything heavy is imported
    import numpy as np

#: prompts (token-id lists) sent in one ``/completions`` request
PROMPTS_PER_REQUEST = 32
#: what a server's ``/models`` entry says of a model that names its weights (never ``created``: it changes per call)
SERVER_KEYS = ("id", "root", "parent", "owned_by", "max_model_len")
#: the first wait before a retry (doubled each time) and the longest wait, ``Retry-After`` included, in seconds
BACKOFF_SECONDS = 0.5
MAX_WAIT_SECONDS = 60.0
API_KEY_VARIABLE = "OPENAI_API_KEY"


class OpenAIEngine(Engine):
    """A causal LM on an OpenAI-compatible server: continuation log-likelihoods by ``echo``; used only when named."""

    name = "openai"
    about = (
        "a model an OpenAI-compatible server serves with echoed log-probabilities (vLLM, SGLang; --base-url)"
    )
    capabilities = (CONTINUATIONS,)
    automatic = False
    options = (
        Option(
            "--base-url",
            "--engine openai: the server's OpenAI-compatible base URL, e.g. http://localhost:8000/v1 (required)",
            metavar="URL",
        ),
        Option(
            "--tokenizer",
            "--engine openai: the served model's tokenizer, a Hub id or local folder (default: MODEL)",
            metavar="NAME",
        ),
        Option(
            "--concurrency",
            "--engine openai: requests in flight at once (default: 4)",
            type=int,
            metavar="N",
            default=4,
        ),
        Option(
            "--retries",
            "--engine openai: how many times more a request is tried after a failure that passes (no "
            "connection, a timeout, HTTP 429 or 5xx) (default: 3)",
            type=int,
            metavar="N",
            default=3,
        ),
        Option(
            "--request-timeout",
            "--engine openai: seconds to wait for one request's answer (default: 600)",
            type=float,
            metavar="SECONDS",
            default=600.0,
        ),
    )

    def check(self, request: EngineRequest, wants: Sequence[str]) -> None:
        """One line for what cannot be asked of a server, before anything is loaded or sent."""
        options = self.check_options(request.options)
        if CONTINUATIONS not in wants:
            raise UnqoverError(
                f"the openai engine answers continuation log-likelihoods (causal LMs) only; the {request.asker} "
                f"probe asks for {' or '.join(wants)}"
            )
        check_base_url(options["base_url"])
        for name, least in (("concurrency", 1), ("retries", 0)):
            if options[name] < least:
                raise UnqoverError(f"--{name} must be >= {least}, got {options[name]}")
        if not options["request_timeout"] > 0:
            raise UnqoverError(f"--request-timeout must be > 0 seconds, got {options['request_timeout']}")
        local = local_options(request)
        if local:
            raise UnqoverError(
                f"{', '.join(local)} cannot apply to the openai engine: the server holds the model (choose its "
                "weights, dtype and device where the server starts)"
            )

    def load(self, request: EngineRequest, wants: Sequence[str]) -> tuple[Any, ServedModel]:
        """The served model: the server's report of it (it must serve ``request.model_id``) and its tokenizer."""
        from unqover.scoring.models import model_source
        from unqover.scoring.placement import place

        self.check(request, wants)
        options = self.check_options(request.options)
        client = Client(
            options["base_url"].rstrip("/"),
            timeout=float(options["request_timeout"]),
            retries=int(options["retries"]),
        )
        report = served_report(client, request.model_id)
        tokenizer_name = options["tokenizer"] or request.model_id
        try:
            tokenizer = model_source(tokenizer_name, request.revision, request.token).tokenizer()
        except UnqoverError as err:
            hint = "" if options["tokenizer"] else "; name it with --tokenizer (a Hub id or local folder)"
            raise UnqoverError(f"{err}{hint}") from err
        placement = place(request.shard, "cpu")[0]
        served = ServedModel(
            tokenizer=tokenizer,
            model_id=request.model_id,
            base_url=client.base_url,
            report=report,
            max_positions=served_positions(report, tokenizer),
            tokenizer_name=options["tokenizer"],
            client=client,
            concurrency=int(options["concurrency"]),
        )
        return placement, served

    def scorer(
        self,
        model: ServedModel,
        capability: str,
        *,
        chat_template: str = "auto",
        system_prompt: str | None = None,
        **_: Any,
    ):
        """The causal scorer, its continuations answered by the server (:meth:`ServedModel.loglikelihood`)."""
        from unqover.scoring.causal import CausalScorer

        return CausalScorer(
            model, chat_template=chat_template, system_prompt=system_prompt, loglikelihood=model.loglikelihood
        )


def check_base_url(base_url: str | None) -> None:
    """``--base-url`` is given and is an http(s) URL with a host."""
    if not base_url:
        raise UnqoverError(
            "the openai engine needs --base-url URL: the server's OpenAI-compatible base, e.g. "
            "http://localhost:8000/v1"
        )
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnqoverError(
            f"--base-url {base_url!r} is not an http(s) URL: give the server's base, e.g. http://localhost:8000/v1"
        )
    if parts.query or parts.fragment:
        raise UnqoverError(f"--base-url {base_url!r} has a query or fragment: give the server's base, …/v1")


def local_options(request: EngineRequest) -> list[str]:
    """The loading options given that only a local model can take."""
    given = {
        "--gguf-file": request.gguf_file is not None,
        "--adapter": request.adapter is not None,
        "--model-arg": bool(request.model_args),
        f"--dtype {request.dtype}": request.dtype != "auto",
        f"--device {request.device}": request.device != "auto",
        "--allow-pickle": request.allow_pickle,
    }
    return [name for name, present in given.items() if present]


def served_report(client: Client, model_id: str) -> dict:
    """What the server's ``/models`` says of ``model_id`` (:data:`SERVER_KEYS`); one line if it serves another."""
    answer = client.call("/models")
    entries = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "id" in e for e in entries):
        raise UnqoverError(
            f"the server at {client.base_url}/models answered no list of models ({{'data': [...]}})"
        )
    for entry in entries:
        if entry["id"] == model_id:
            return {key: entry[key] for key in SERVER_KEYS if entry.get(key) is not None}
    names = ", ".join(repr(e["id"]) for e in entries) or "no model"
    raise UnqoverError(
        f"the server at {client.base_url} does not serve {model_id!r}: it serves {names} (give that name as MODEL)"
    )


def served_positions(report: Mapping[str, Any], tokenizer) -> int | None:
    """The longest prompt + answer the server takes: its ``max_model_len`` less the one token a request
    generates; else the tokenizer's ``model_max_length`` where it is a real limit (transformers puts 1e30 where
    none is known); else None."""
    limit = report.get("max_model_len")
    if isinstance(limit, int) and limit > 1:
        return limit - 1
    limit = getattr(tokenizer, "model_max_length", None)
    return limit if isinstance(limit, int) and 1 < limit < 10**7 else None


@dataclass
class ServedModel:
    """A causal LM held by a server: what a probe's runner reads of a loaded model (``family``, ``engine``,
    ``capabilities``, ``model_id``, ``revision``, ``device``, ``dtype``, ``provenance()``), the tokenizer the
    prompts are encoded with, and :meth:`loglikelihood`, which asks the server."""

    tokenizer: Any
    model_id: str
    base_url: str
    report: dict
    max_positions: int | None = None
    tokenizer_name: str | None = None  # --tokenizer, where given (else the model argument's)
    client: Client | None = field(default=None, repr=False, compare=False)
    concurrency: int = 4
    prompts_per_request: int = PROMPTS_PER_REQUEST
    model: None = None
    family: str = "causal"
    engine: str = "openai"
    capabilities: tuple[str, ...] = (CONTINUATIONS,)
    revision: str | None = None
    device: str = "server"
    dtype: str = "server"

    def provenance(self) -> dict:
        """The model record of every loaded model, then the engine, the base URL and the server's report."""
        from unqover.scoring.models import model_record

        record = model_record(self.model_id, self.revision, self.family, self.dtype, self.device)
        return {**record, **self.identity()}

    def identity(self) -> dict:
        """What makes two runs the same model: the base URL and what the server reports of the model, and the
        tokenizer where ``--tokenizer`` named one (never the API key)."""
        tokenizer = {"tokenizer": self.tokenizer_name} if self.tokenizer_name else {}
        return {"engine": self.engine, "served_at": self.base_url, "server": dict(self.report), **tokenizer}

    def loglikelihood(self, requests: Continuations) -> np.ndarray:
        """Σ log p of each continuation, asked of the server ``prompts_per_request`` prompts a request,
        ``concurrency`` requests at once (the answer of each continuation is its own: the order of the replies
        changes nothing)."""
        import numpy as np

        sequences = [
            [*requests.prompts[int(p)], *answer]
            for p, answer in zip(requests.answer_prompt, requests.answers, strict=True)
        ]
        starts = [len(requests.prompts[int(p)]) for p in requests.answer_prompt]
        size = self.prompts_per_request
        chunks = [range(lo, min(lo + size, len(sequences))) for lo in range(0, len(sequences), size)]

        def ask(chunk: range) -> list[float]:
            echoed = self.completions([sequences[i] for i in chunk])
            return [
                continuation_log_prob(echoed[k], starts[i], len(requests.answers[i]), self.base_url)
                for k, i in enumerate(chunk)
            ]

        out = np.zeros(len(sequences), dtype=np.float64)
        for chunk, values in zip(chunks, in_flight(ask, chunks, self.concurrency), strict=True):
            out[chunk.start : chunk.stop] = values
        return out

    def completions(self, prompts: list[list[int]]) -> list[list]:
        """The echoed log-probabilities of each prompt's tokens (the first is None), one list per prompt."""
        if self.client is None:
            raise UnqoverError(f"{self.model_id} was not loaded from a server: no client to ask")
        body = {
            "model": self.model_id,
            "prompt": prompts,
            "max_tokens": 1,
            "echo": True,
            "logprobs": 1,
            "temperature": 0,
        }
        answer = self.client.call("/completions", body)
        return echoed_log_probs(answer, prompts, f"{self.base_url}/completions")


def in_flight(ask, chunks: list, concurrency: int) -> list:
    """``ask(chunk)`` for every chunk, ``concurrency`` at once, answers in the chunks' order. The first failure
    stops the asking (the requests in flight end on their own) and is raised; the threads are daemons, so that
    Ctrl-C ends the process without waiting for the requests in flight."""
    if concurrency <= 1 or len(chunks) <= 1:
        return [ask(chunk) for chunk in chunks]
    answers: list = [None] * len(chunks)
    failures: list[BaseException] = []
    waiting = queue.SimpleQueue()
    for index in range(len(chunks)):
        waiting.put(index)

    def work() -> None:
        while not failures:
            try:
                index = waiting.get_nowait()
            except queue.Empty:
                return
            try:
                answers[index] = ask(chunks[index])
            except BaseException as err:  # handed to the asking thread
                failures.append(err)

    workers = [
        threading.Thread(target=work, name=f"unqover-openai-{i}", daemon=True)
        for i in range(min(concurrency, len(chunks)))
    ]
    for worker in workers:
        worker.start()
    try:
        for worker in workers:
            worker.join()
    except BaseException:  # Ctrl-C: the workers stop after their request
        failures.append(KeyboardInterrupt())
        raise
    if failures:
        raise failures[0]
    return answers


def echoed_log_probs(answer: Any, prompts: list[list[int]], url: str) -> list[list]:
    """Each prompt's ``token_logprobs`` from a ``/completions`` answer, checked: one choice per prompt, each index
    once, at least a value per prompt token."""
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not isinstance(choices, list):
        raise UnqoverError(f"the server at {url} answered no choices")
    if len(choices) != len(prompts):
        raise UnqoverError(f"the server at {url} answered {len(choices)} choices for {len(prompts)} prompts")
    by_index: dict[int, list] = {}
    for choice in choices:
        index = choice.get("index") if isinstance(choice, dict) else None
        if not isinstance(index, int) or not 0 <= index < len(prompts) or index in by_index:
            raise UnqoverError(
                f"the server at {url} answered a choice with index {index!r}: each of 0..{len(prompts) - 1} once"
            )
        logprobs = choice.get("logprobs")
        values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
        if not isinstance(values, list):
            raise UnqoverError(
                f"the server at {url} answered no log-probabilities (logprobs.token_logprobs): it must serve "
                "echo with logprobs"
            )
        if len(values) < len(prompts[index]):
            raise UnqoverError(
                f"the server at {url} echoed {len(values)} log-probabilities for a prompt of "
                f"{len(prompts[index])} tokens: it does not echo the prompt's log-probabilities (echo with logprobs)"
            )
        by_index[index] = values
    return [by_index[i] for i in range(len(prompts))]


def continuation_log_prob(values: list, start: int, length: int, url: str) -> float:
    """Σ of the echoed log-probabilities at a continuation's positions (``start`` .. ``start + length``)."""
    span = values[start : start + length]
    if len(span) != length or any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in span):
        raise UnqoverError(
            f"the server at {url} echoed no log-probability for some of an answer's {length} tokens "
            f"(positions {start}..{start + length - 1}: {span!r})"
        )
    import numpy as np

    total = float(np.sum(np.asarray(span, dtype=np.float64)))
    if total != total or total > 1e-6:
        raise UnqoverError(
            f"the server at {url} echoed log-probabilities that are no log-probabilities: {span!r}"
        )
    return min(total, 0.0)


@dataclass(frozen=True)
class Client:
    """JSON over HTTP to one server: bounded tries with waits, one line when it gives up. The API key is read
    from the environment at each request, never kept."""

    base_url: str
    timeout: float = 600.0
    retries: int = 3

    def call(self, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """GET ``path`` (POST ``body`` as JSON when given), tried again on passing failures."""
        url = self.base_url + path
        tries = self.retries + 1
        for attempt in range(1, tries + 1):
            try:
                with urllib.request.urlopen(self.request(url, body), timeout=self.timeout) as response:
                    data = response.read()
            except urllib.error.HTTPError as err:
                message = error_text(err)
                if err.code != 429 and err.code < 500:
                    hint = (
                        f"; is {self.base_url} the server's OpenAI-compatible base (…/v1)?"
                        if err.code == 404 and path == "/models"
                        else ""
                    )
                    raise UnqoverError(
                        f"the server at {url} refused the request: HTTP {err.code}{message}{hint}"
                    ) from None
                if attempt == tries:
                    raise UnqoverError(
                        f"the server at {url} answered HTTP {err.code}{message}, after {self.tries_text()}: try "
                        "again later, or with more --retries"
                    ) from None
                time.sleep(wait_seconds(attempt, err.headers.get("Retry-After")))
                continue
            except (urllib.error.URLError, OSError, http.client.HTTPException) as err:
                if attempt == tries:
                    reason = first_line(getattr(err, "reason", None) or err)
                    raise UnqoverError(
                        f"the server at {url} did not answer after {self.tries_text()}, {self.timeout:g} s "
                        f"each: {reason}"
                    ) from None
                time.sleep(wait_seconds(attempt, None))
                continue
            try:
                return json.loads(data)
            except ValueError:
                raise UnqoverError(f"the server at {url} answered something that is not JSON") from None
        raise AssertionError("unreachable")

    def tries_text(self) -> str:
        """``4 tries (3 retries)``, ``1 try (no retry)``."""
        tries = self.retries + 1
        retries = {0: "no retry", 1: "1 retry"}.get(self.retries, f"{self.retries} retries")
        return f"{tries} {'try' if tries == 1 else 'tries'} ({retries})"

    def request(self, url: str, body: Mapping[str, Any] | None) -> urllib.request.Request:
        headers = {"Accept": "application/json"}
        key = os.environ.get(API_KEY_VARIABLE)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        if body is None:
            return urllib.request.Request(url, headers=headers)
        headers["Content-Type"] = "application/json"
        return urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")


def wait_seconds(attempt: int, retry_after: str | None) -> float:
    """Seconds before try ``attempt + 1``: the server's ``Retry-After`` (in seconds) where it gives one, else
    :data:`BACKOFF_SECONDS` doubled after each try; at most :data:`MAX_WAIT_SECONDS`."""
    try:
        asked = float(retry_after) if retry_after is not None else None
    except ValueError:  # an HTTP date: wait as without one
        asked = None
    wait = asked if asked is not None and asked >= 0 else BACKOFF_SECONDS * 2 ** (attempt - 1)
    return min(wait, MAX_WAIT_SECONDS)


def error_text(err: urllib.error.HTTPError) -> str:
    """`` (REASON): MESSAGE`` of an HTTP error, the message from the server's JSON error where it sends one."""
    try:
        body = err.read()
    except OSError:
        body = b""
    message = None
    try:
        decoded = json.loads(body)
        inner = decoded.get("error", decoded) if isinstance(decoded, dict) else None
        message = inner.get("message") if isinstance(inner, dict) else inner
    except ValueError:
        message = body.decode("utf-8", "replace") if body else None
    reason = f" ({err.reason})" if err.reason else ""
    lines = str(message).strip().splitlines() if message else []
    return f"{reason}: {lines[0][:200]}" if lines else reason
