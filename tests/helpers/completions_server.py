"""A real OpenAI-compatible server for the tests, on 127.0.0.1: ``GET /v1/models`` and ``POST /v1/completions``
with ``echo`` and ``logprobs`` for token-id prompts, computed by a transformers causal LM.

It answers as vLLM does: ``/v1/models`` lists the served name with ``root`` (the weights' folder) and
``max_model_len``; each prompt (a list of token ids, or a list of them) is run alone as one full sequence in float32,
its log-softmax taken in float64, and its choice echoes ``token_logprobs`` (None for the first token, then
log p(token | the tokens before)) followed by the one greedily generated token; the choices come in reverse order
(a client must read their ``index``). A prompt + ``max_tokens`` longer
than ``max_model_len`` is refused with HTTP 400, an unknown model with 404.

For the engine's error paths it can fail on purpose: the first ``fail_first`` completions requests answer
``fail_status`` (with ``Retry-After: 0``), ``always_fail`` answers that status to every one, ``api_key`` requires
``Authorization: Bearer KEY`` (else 401), ``delay`` sleeps before each completions answer, ``echo=False`` answers
the generated token's log-probability only (as a server without prompt log-probabilities does). It counts requests and the
most in flight at once, and keeps the ``Authorization`` headers it saw.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class CompletionsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        model_dir: Path | str,
        *,
        served_name: str | None = None,
        max_model_len: int | None = None,
        api_key: str | None = None,
        fail_first: int = 0,
        fail_status: int = 503,
        always_fail: int | None = None,
        delay: float = 0.0,
        echo: bool = True,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.model_dir = str(model_dir)
        self.model = AutoModelForCausalLM.from_pretrained(self.model_dir, dtype=torch.float32).eval()
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        self.served_name = served_name if served_name is not None else self.model_dir
        positions = getattr(self.model.config, "max_position_embeddings", None)
        self.max_model_len = max_model_len if max_model_len is not None else positions
        self.api_key = api_key
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.always_fail = always_fail
        self.delay = delay
        self.echo = echo
        self.completions_requests = 0
        self.prompts_seen = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.authorizations: list[str | None] = []
        self.lock = threading.Lock()
        self.model_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), CompletionsHandler)

    def handle_error(self, request, client_address) -> None:
        """A client that stopped waiting (a timeout test) is no error of the server's."""
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def echoed(self, ids: list[int]) -> dict:
        """One choice's ``logprobs``: the prompt's tokens with their log-probabilities, then one greedy token."""
        import torch

        with self.model_lock, torch.no_grad():
            logits = self.model(torch.tensor([ids])).logits[0]
        log_probs = logits.double().log_softmax(-1)
        nxt = int(log_probs[-1].argmax())
        values = [None] + [float(log_probs[t - 1, ids[t]]) for t in range(1, len(ids))]
        values.append(float(log_probs[-1, nxt]))
        if not self.echo:
            return {
                "tokens": self.tokenizer.convert_ids_to_tokens([nxt]),
                "token_logprobs": values[-1:],
                "text": "",
            }
        tokens = self.tokenizer.convert_ids_to_tokens([*ids, nxt])
        return {"tokens": tokens, "token_logprobs": values, "text": self.tokenizer.decode([*ids, nxt])}


class CompletionsHandler(BaseHTTPRequestHandler):
    server: CompletionsServer

    def log_message(self, *_) -> None:
        pass

    def do_GET(self) -> None:
        if not self.authorized():
            return
        if self.path.rstrip("/") != "/v1/models":
            self.answer(404, {"error": {"message": f"no route {self.path}"}})
            return
        entry = {
            "id": self.server.served_name,
            "object": "model",
            "created": int(time.time()),
            "owned_by": "unqover-tests",
            "root": self.server.model_dir,
            "parent": None,
            "max_model_len": self.server.max_model_len,
        }
        self.answer(200, {"object": "list", "data": [entry]})

    def do_POST(self) -> None:
        server = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if not self.authorized():
            return
        if self.path != "/v1/completions":
            self.answer(404, {"error": {"message": f"no route {self.path}"}})
            return
        with server.lock:
            server.completions_requests += 1
            count = server.completions_requests
            server.in_flight += 1
            server.most_in_flight = max(server.most_in_flight, server.in_flight)
        try:
            if server.delay:
                time.sleep(server.delay)
            if server.always_fail is not None or count <= server.fail_first:
                status = server.always_fail if server.always_fail is not None else server.fail_status
                reply = (status, {"error": {"message": "the tests' server fails on purpose"}}, "0")
            else:
                reply = (*self.complete(body), None)
        finally:  # no longer in flight before the answer leaves: the client may send its next request at once
            with server.lock:
                server.in_flight -= 1
        self.answer(*reply)

    def complete(self, body: dict) -> tuple[int, dict]:
        """The status and answer of a completions request."""
        server = self.server
        if body.get("model") != server.served_name:
            return 404, {"error": {"message": f"The model `{body.get('model')}` does not exist."}}
        if not (body.get("echo") and body.get("logprobs") == 1 and body.get("max_tokens") == 1):
            return 400, {"error": {"message": "the tests' server answers echo, logprobs 1, max_tokens 1"}}
        prompts = body["prompt"]
        if prompts and isinstance(prompts[0], int):
            prompts = [prompts]
        longest = max(len(ids) for ids in prompts)
        if server.max_model_len is not None and longest + 1 > server.max_model_len:
            message = f"This model's maximum context length is {server.max_model_len} tokens"
            return 400, {"object": "error", "message": message}
        with server.lock:
            server.prompts_seen += len(prompts)
        choices = [{"index": i, "logprobs": server.echoed(ids)} for i, ids in enumerate(prompts)]
        for choice in choices:
            choice["text"] = choice["logprobs"].pop("text")
            choice["finish_reason"] = "length"
        return 200, {"object": "text_completion", "model": server.served_name, "choices": choices[::-1]}

    def authorized(self) -> bool:
        """Keep the Authorization header; with an API key, refuse a request without it (401)."""
        given = self.headers.get("Authorization")
        with self.server.lock:
            self.server.authorizations.append(given)
        if self.server.api_key is not None and given != f"Bearer {self.server.api_key}":
            self.answer(401, {"error": {"message": "Unauthorized"}})
            return False
        return True

    def answer(self, status: int, payload: dict, retry_after: str | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if retry_after is not None:
            self.send_header("Retry-After", retry_after)
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def serving(model_dir: Path | str, **options) -> Iterator[CompletionsServer]:
    """A :class:`CompletionsServer` answering in a thread for the ``with`` block, shut down after it."""
    server = CompletionsServer(model_dir, **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
