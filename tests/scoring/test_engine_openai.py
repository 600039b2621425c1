"""The OpenAI-compatible server engine (``unqover.scoring.engines.openai``) against a real local server
(``tests/helpers/completions_server.py``: ``/v1/completions`` with echo and logprobs from a transformers model):
its log S equals the transformers engine's on the same weights within 1e-4 on real UnQover rows, with and without a
chat template and a system prompt, at any concurrency; transient failures are tried again and a lasting one is
refused in one line; the API key comes from the environment only and is recorded nowhere; what the engine cannot
serve is refused in one line before anything is sent. Offline: the server listens on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import json
import re
import socket
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import tiny_models
from completions_server import serving
from unqover.errors import UnqoverError
from unqover.scoring.causal import INSTRUCTION, CausalScorer
from unqover.scoring.engines import engine_named, scorer_for
from unqover.scoring.engines import openai as served
from unqover.scoring.engines.openai import OpenAIEngine, ServedModel
from unqover.scoring.models import load_model
from unqover.scoring.requests import ANSWER_SPANS, CLASSES, CONTINUATIONS, FILL_IN, EngineRequest

SYSTEM = "Answer fairly, without stereotypes."


@pytest.fixture(scope="module")
def rows(religion_tables) -> pa.Table:
    """48 religion rows from two stretches of the dataset (several questions of each context)."""
    religion = religion_tables["qa"]
    return pa.concat_tables([religion.slice(0, 24), religion.slice(300, 24)])


@pytest.fixture(scope="module")
def models(tmp_path_factory, religion_tables) -> dict[str, Path]:
    """A tiny GPT-2 (plain prompts) and a tiny Llama with a chat template, trained tokenizers of the rows' words."""
    religion = religion_tables["qa"]
    texts = sorted(set(religion["context"].to_pylist()[:400]) | set(religion["question"].to_pylist()[:400]))
    texts.append(INSTRUCTION)
    root = tmp_path_factory.mktemp("openai-engine")
    return {
        "gpt2": tiny_models.causal_lm(root / "gpt2", texts, "gpt2"),
        "llama-chat": tiny_models.causal_lm(root / "llama-chat", texts, "llama", chat="llama"),
    }


def request(model: str, url: str, asker: str = "religion", **options) -> EngineRequest:
    return EngineRequest(model_id=model, engine="openai", options={"base_url": url, **options}, asker=asker)


def load(model: str, url: str, **options) -> ServedModel:
    placement, loaded = OpenAIEngine().load(request(model, url, **options), (CONTINUATIONS,))
    assert placement.shard == (0, 1) and placement.is_main
    return loaded


def local_scores(model: Path, rows: pa.Table, **how) -> np.ndarray:
    """The transformers engine's scores of the same weights (float32 on the CPU)."""
    return CausalScorer(load_model(str(model), device="cpu", dtype="float32"), **how).score(rows)


@pytest.mark.parametrize(
    ("name", "how"),
    [
        ("gpt2", {}),
        ("gpt2", {"system_prompt": SYSTEM}),
        ("llama-chat", {}),
        ("llama-chat", {"system_prompt": SYSTEM}),
        ("llama-chat", {"chat_template": "none"}),
    ],
    ids=["plain", "plain+system", "chat", "chat+system", "chat-model-plain"],
)
def test_served_log_s_equals_the_transformers_engine(models, rows, name, how):
    with serving(models[name]) as server:
        model = load(str(models[name]), server.url)
        scorer = OpenAIEngine().scorer(model, CONTINUATIONS, scoring="default", **how)
        got = scorer.score(rows)
        assert server.prompts_seen == 2 * rows.num_rows  # every continuation was asked of the server
    assert scorer.chat == (name == "llama-chat" and how.get("chat_template") != "none")
    want = local_scores(models[name], rows, **how)
    assert got.shape == want.shape == (rows.num_rows, 2)
    assert np.abs(np.log(got) - np.log(want)).max() <= 1e-4
    assert np.log(want).std() > 0.1  # the scores spread: equal numbers are not an accident


def test_the_registry_and_scorer_for_reach_the_engine(models, rows):
    """``--engine openai`` names this engine, which only a named run uses; ``scorer_for`` finds its scorer."""
    engine = engine_named("openai")
    assert isinstance(engine, OpenAIEngine) and not engine.automatic
    assert engine.capabilities == (CONTINUATIONS,)
    assert [option.dest for option in engine.options] == [
        "base_url",
        "tokenizer",
        "concurrency",
        "retries",
        "request_timeout",
    ]
    assert engine.check_options({}) == {
        "base_url": None,
        "tokenizer": None,
        "concurrency": 4,
        "retries": 3,
        "request_timeout": 600.0,
    }
    with serving(models["gpt2"]) as server:
        model = load(str(models["gpt2"]), server.url)
        scorer = scorer_for(model, (CONTINUATIONS,))
        assert isinstance(scorer, CausalScorer) and scorer.served == model.loglikelihood
        np.testing.assert_array_equal(
            scorer.score(rows[:4]), OpenAIEngine().scorer(model, CONTINUATIONS).score(rows[:4])
        )


def test_concurrency_levels_give_identical_numbers(models, rows):
    """Small requests (4 prompts each) sent 1, 2 or 5 at once: the same numbers, bit for bit, and with 5 the
    server does have several requests in flight."""
    with serving(models["gpt2"], delay=0.02) as server:
        model = dataclasses.replace(load(str(models["gpt2"]), server.url), prompts_per_request=4)
        results = {}
        for level in (1, 2, 5):
            server.most_in_flight = 0
            before = server.completions_requests
            scorer = OpenAIEngine().scorer(dataclasses.replace(model, concurrency=level), CONTINUATIONS)
            results[level] = scorer.score(rows)
            assert server.completions_requests - before == 2 * rows.num_rows // 4
            assert (server.most_in_flight == 1) if level == 1 else (server.most_in_flight >= 2)
    np.testing.assert_array_equal(results[1], results[2])
    np.testing.assert_array_equal(results[1], results[5])


def test_the_default_options_fill_the_model(models):
    with serving(models["gpt2"], max_model_len=200) as server:
        model = load(str(models["gpt2"]), server.url + "/")
    assert model.base_url == server.url  # the trailing slash dropped
    assert (model.concurrency, model.prompts_per_request) == (4, served.PROMPTS_PER_REQUEST)
    assert (model.client.retries, model.client.timeout) == (3, 600.0)
    assert model.max_positions == 199  # the server's max_model_len, less the token a request generates
    assert (model.family, model.engine, model.capabilities, model.model) == (
        "causal",
        "openai",
        (CONTINUATIONS,),
        None,
    )
    assert (model.device, model.dtype, model.revision) == ("server", "server", None)


def test_provenance_and_identity_name_the_server_and_its_report(models):
    with serving(models["gpt2"]) as server:
        model = load(str(models["gpt2"]), server.url)
        again = load(str(models["gpt2"]), server.url)  # the report's created time changes: not recorded
    report = {
        "id": str(models["gpt2"]),
        "root": str(models["gpt2"]),
        "owned_by": "unqover-tests",
        "max_model_len": 256,
    }
    assert model.identity() == {"engine": "openai", "served_at": server.url, "server": report}
    assert again.identity() == model.identity()
    assert model.provenance() == {
        "id": str(models["gpt2"]),
        "revision": None,
        "family": "causal",
        "dtype": "server",
        "device": "server",
        "engine": "openai",
        "served_at": server.url,
        "server": report,
    }


def test_a_named_tokenizer_is_used_and_recorded(models, rows):
    """A model served under another name: ``--tokenizer`` gives its tokenizer, and is part of its identity."""
    with serving(models["gpt2"], served_name="tiny-gpt2") as server:
        with pytest.raises(
            UnqoverError, match=r"^cannot load the tokenizer of 'tiny-gpt2': .*; name it with --tokenizer"
        ):
            load("tiny-gpt2", server.url)
        model = load("tiny-gpt2", server.url, tokenizer=str(models["gpt2"]))
        got = OpenAIEngine().scorer(model, CONTINUATIONS).score(rows[:8])
    assert model.identity()["tokenizer"] == str(models["gpt2"]) == model.provenance()["tokenizer"]
    assert np.abs(np.log(got) - np.log(local_scores(models["gpt2"], rows[:8]))).max() <= 1e-4


def test_a_model_the_server_does_not_serve_is_refused(models):
    with serving(models["gpt2"], served_name="tiny-gpt2") as server, pytest.raises(UnqoverError) as err:
        load("gpt2-large", server.url)
    assert str(err.value) == (
        f"the server at {server.url} does not serve 'gpt2-large': it serves 'tiny-gpt2' (give that name as MODEL)"
    )


def test_transient_503s_are_tried_again(models, rows):
    """The first two completions requests answer 503 (Retry-After: 0): the run goes on with the same numbers."""
    with serving(models["gpt2"]) as server:
        want = OpenAIEngine().scorer(load(str(models["gpt2"]), server.url), CONTINUATIONS).score(rows)
    with serving(models["gpt2"], fail_first=2) as server:
        model = load(str(models["gpt2"]), server.url, retries=2, concurrency=1)
        got = OpenAIEngine().scorer(model, CONTINUATIONS).score(rows)
        assert server.completions_requests == 2 + 2 * rows.num_rows // served.PROMPTS_PER_REQUEST
    np.testing.assert_array_equal(got, want)


FAILURES = [
    ({"always_fail": 503}, 3, "answered HTTP 503 (Service Unavailable): the tests' server fails on purpose, after "
     "3 tries (2 retries): try again later, or with more --retries"),
    ({"always_fail": 500}, 3, "answered HTTP 500 (Internal Server Error): the tests' server fails on purpose, after "
     "3 tries (2 retries): try again later, or with more --retries"),
    ({"max_model_len": 12}, 1, "refused the request: HTTP 400 (Bad Request): This model's maximum context length "
     "is 12 tokens"),
]  # fmt: skip


@pytest.mark.parametrize(("failing", "tries", "message"), FAILURES, ids=["503", "500", "400"])
def test_a_failing_request_ends_in_one_line(models, rows, failing, tries, message):
    """A lasting 503 or 500 is tried ``--retries`` times more, then refused in one line; an HTTP 400 (here: the
    sequences are longer than the server's max_model_len, which the engine is told nothing of) is the server's
    answer, not a passing failure: one try, its message in the line."""
    with serving(models["gpt2"], **failing) as server:
        model = dataclasses.replace(load(str(models["gpt2"]), server.url, retries=2), max_positions=None)
        with pytest.raises(UnqoverError) as err:
            OpenAIEngine().scorer(model, CONTINUATIONS).score(rows[:2])
        assert server.completions_requests == tries
    assert str(err.value) == f"the server at {server.url}/completions {message}"


def test_a_base_url_without_the_api_s_path_is_named(models):
    with serving(models["gpt2"]) as server:
        base = server.url.removesuffix("/v1")
        with pytest.raises(UnqoverError) as err:
            load(str(models["gpt2"]), base)
    assert str(err.value) == (
        f"the server at {base}/models refused the request: HTTP 404 (Not Found): no route /models; is {base} the "
        "server's OpenAI-compatible base (…/v1)?"
    )


def test_requests_in_flight_answer_in_order_and_the_first_failure_is_raised(models, rows):
    """Several requests at once against a failing server: the run stops with the line of a sequential one."""
    with serving(models["gpt2"], always_fail=503) as server:
        model = load(str(models["gpt2"]), server.url, retries=0, concurrency=3)
        model = dataclasses.replace(model, prompts_per_request=2)
        with pytest.raises(
            UnqoverError,
            match=r"answered HTTP 503 \(Service Unavailable\): .*, after 1 try \(no retry\): try again",
        ):
            OpenAIEngine().scorer(model, CONTINUATIONS).score(rows[:8])
        assert 1 <= server.completions_requests <= 8

    def ask(chunk: int) -> int:
        time.sleep(0.01 * (chunk % 3))
        if chunk == 7:
            raise ValueError("chunk 7")
        return chunk * chunk

    assert served.in_flight(ask, list(range(7)), 3) == [i * i for i in range(7)]
    with pytest.raises(ValueError, match="chunk 7"):
        served.in_flight(ask, list(range(12)), 4)


def test_the_server_s_positions_bound_the_prompts_before_anything_is_sent(models, rows):
    with serving(models["gpt2"], max_model_len=12) as server:
        scorer = OpenAIEngine().scorer(load(str(models["gpt2"]), server.url), CONTINUATIONS)
        with pytest.raises(
            UnqoverError, match=r"^the longest prompt with its answer is \d+ tokens, more than the 11 "
        ):
            scorer.check_rows(rows)
        assert server.completions_requests == 0


def test_no_connection_gives_up_after_the_retries(monkeypatch):
    """Nothing listens at the port: the tries wait longer each time (the base wait made short here), then one line."""
    waits = []
    monkeypatch.setattr(served.time, "sleep", waits.append)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(UnqoverError) as err:
        load("tiny", url, retries=3)
    assert re.fullmatch(
        rf"the server at {re.escape(url)}/models did not answer after 4 tries \(3 retries\), 600 s each: .+",
        str(err.value),
    )
    assert waits == [0.5, 1.0, 2.0]


def test_a_timeout_is_tried_again_then_refused(models):
    with serving(models["gpt2"], delay=2.0) as server:
        model = load(str(models["gpt2"]), server.url, retries=1, request_timeout=0.2)
        with pytest.raises(UnqoverError) as err:
            model.completions([[1, 2, 3]])
        assert server.completions_requests == 2
    assert str(err.value).startswith(
        f"the server at {server.url}/completions did not answer after 2 tries (1 retry), 0.2 s each: "
    )
    assert "timed out" in str(err.value)


def test_the_wait_honours_retry_after_within_a_bound():
    assert served.wait_seconds(1, "0") == 0.0
    assert served.wait_seconds(1, "7") == 7.0
    assert served.wait_seconds(1, "3600") == served.MAX_WAIT_SECONDS
    assert served.wait_seconds(3, None) == 2.0
    assert served.wait_seconds(2, "Wed, 21 Oct 2015 07:28:00 GMT") == 1.0  # a date: as without one
    assert served.wait_seconds(10, None) == served.MAX_WAIT_SECONDS


def test_the_api_key_comes_from_the_environment_and_is_recorded_nowhere(models, rows, monkeypatch, tmp_path):
    key = "sk-unqover-test-0123456789"
    with serving(models["gpt2"], api_key=key) as server:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        with pytest.raises(UnqoverError) as err:
            load(str(models["gpt2"]), server.url)
        assert str(err.value) == (
            f"the server at {server.url}/models refused the request: HTTP 401 (Unauthorized): Unauthorized"
        )
        monkeypatch.setenv("OPENAI_API_KEY", key)
        model = load(str(models["gpt2"]), server.url)
        scores = OpenAIEngine().scorer(model, CONTINUATIONS).score(rows[:8])
        assert set(server.authorizations) == {None, f"Bearer {key}"}
        assert server.authorizations[-1] == f"Bearer {key}"
    assert np.isfinite(np.log(scores)).all()
    written = json.dumps([model.provenance(), model.identity(), repr(model), repr(model.client)])
    assert key not in written and "OPENAI_API_KEY" not in written


def test_a_server_that_does_not_echo_prompt_log_probabilities_is_refused(models, rows):
    """A server that answers only the generated token's log-probability (llama.cpp's server, TGI's /v1/completions)."""
    with serving(models["gpt2"], echo=False) as server:
        scorer = OpenAIEngine().scorer(load(str(models["gpt2"]), server.url), CONTINUATIONS)
        with pytest.raises(
            UnqoverError, match=r"echoed 1 log-probabilities for a prompt of \d+ tokens: it does not echo"
        ):
            scorer.score(rows[:2])


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({}, "answered no choices"),
        (
            {"choices": [{"index": 0, "logprobs": {"token_logprobs": [None, -1.0, -2.0]}}]},
            "answered 1 choices for 2 prompts",
        ),
        (
            {"choices": [{"index": 0, "logprobs": {"token_logprobs": [None, -1.0, -2.0]}}] * 2},
            r"answered a choice with index 0: each of 0\.\.1 once",
        ),
        (
            {"choices": [{"index": 0, "logprobs": None}, {"index": 1, "logprobs": None}]},
            r"answered no log-probabilities \(logprobs\.token_logprobs\)",
        ),
    ],
)
def test_malformed_answers_are_refused_in_one_line(answer, message):
    with pytest.raises(UnqoverError, match=f"^the server at URL {message}"):
        served.echoed_log_probs(answer, [[1, 2, 3], [4, 5]], "URL")


def test_an_answer_position_without_a_value_is_refused():
    assert served.continuation_log_prob([None, -1.0, -0.5, -0.25, -9.0], 2, 2, "URL") == -0.75
    with pytest.raises(
        UnqoverError,
        match=r"echoed no log-probability for some of an answer's 2 tokens \(positions 2\.\.3: \[-0\.5, None\]\)",
    ):
        served.continuation_log_prob([None, -1.0, -0.5, None], 2, 2, "URL")
    with pytest.raises(UnqoverError, match="echoed no log-probability"):
        served.continuation_log_prob([None, -1.0, -0.5], 2, 2, "URL")
    with pytest.raises(UnqoverError, match="that are no log-probabilities"):
        served.continuation_log_prob([None, 0.5, 0.5], 1, 2, "URL")


CHECKS = [
    ({}, (CONTINUATIONS,), "the openai engine needs --base-url URL: the server's OpenAI-compatible base, e.g. "
     "http://localhost:8000/v1"),
    ({"base_url": "localhost:8000/v1"}, (CONTINUATIONS,), "--base-url 'localhost:8000/v1' is not an http(s) URL: "
     "give the server's base, e.g. http://localhost:8000/v1"),
    ({"base_url": "ftp://host/v1"}, (CONTINUATIONS,), "--base-url 'ftp://host/v1' is not an http(s) URL: give the "
     "server's base, e.g. http://localhost:8000/v1"),
    ({"base_url": "http:///v1"}, (CONTINUATIONS,), "--base-url 'http:///v1' is not an http(s) URL: give the "
     "server's base, e.g. http://localhost:8000/v1"),
    ({"base_url": "http://h/v1", "concurrency": 0}, (CONTINUATIONS,), "--concurrency must be >= 1, got 0"),
    ({"base_url": "http://h/v1", "retries": -1}, (CONTINUATIONS,), "--retries must be >= 0, got -1"),
    ({"base_url": "http://h/v1", "request_timeout": 0.0}, (CONTINUATIONS,), "--request-timeout must be > 0 "
     "seconds, got 0.0"),
    ({"base_url": "http://h/v1"}, (ANSWER_SPANS, FILL_IN), "the openai engine answers continuation log-likelihoods "
     "(causal LMs) only; the religion probe asks for answer-spans or fill-in"),
    ({}, (CLASSES,), "the openai engine answers continuation log-likelihoods (causal LMs) only; the religion probe "
     "asks for classes"),
    ({"base_url": "http://h/v1", "label_map": "x"}, (CONTINUATIONS,), "--label-map do(es) not apply to the openai "
     "engine"),
]  # fmt: skip


@pytest.mark.parametrize(("options", "wants", "message"), CHECKS)
def test_check_refuses_what_a_server_cannot_answer(options, wants, message):
    asked = EngineRequest(model_id="m", engine="openai", options=options, asker="religion")
    with pytest.raises(UnqoverError) as err:
        OpenAIEngine().check(asked, wants)
    assert str(err.value) == message


LOCAL = [
    ({"gguf_file": "m.gguf"}, "--gguf-file"),
    ({"adapter": "./lora"}, "--adapter"),
    ({"model_args": {"attn_implementation": "sdpa"}}, "--model-arg"),
    ({"dtype": "bfloat16"}, "--dtype bfloat16"),
    ({"device": "cuda"}, "--device cuda"),
    ({"allow_pickle": True}, "--allow-pickle"),
    ({"dtype": "float16", "device": "cpu", "adapter": "a"}, "--adapter, --dtype float16, --device cpu"),
]


@pytest.mark.parametrize(("given", "names"), LOCAL)
def test_check_refuses_options_only_a_local_model_takes(given, names):
    asked = EngineRequest(model_id="m", engine="openai", options={"base_url": "http://h:8000/v1"}, **given)
    with pytest.raises(UnqoverError) as err:
        OpenAIEngine().check(asked, (CONTINUATIONS,))
    assert str(err.value) == (
        f"{names} cannot apply to the openai engine: the server holds the model (choose its weights, dtype and "
        "device where the server starts)"
    )


def test_check_passes_a_servable_request():
    asked = EngineRequest(
        model_id="m",
        engine="openai",
        options={"base_url": "https://h.example/v1", "concurrency": 1, "retries": 0, "request_timeout": 1.5},
        dtype="auto",
        device="auto",
    )
    OpenAIEngine().check(asked, (FILL_IN, CONTINUATIONS))
