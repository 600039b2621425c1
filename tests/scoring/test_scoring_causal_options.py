"""The causal-LM options of ``unqover probe``: ``--system-prompt``, ``--chat-template auto|none|FILE.jinja``,
``--adapter PATH_OR_ID`` (a PEFT adapter merged into the weights) and ``--model-arg KEY=VALUE`` (more keywords for
``from_pretrained``): each reaches the scores exactly as the scorer documents it, each is recorded in run.json so
that a resumed run with other options is refused, and a value that cannot be used is refused in one line.
Offline, on tiny local models; the adapter is a tiny LoRA made here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import tiny_models
from tests.cli.test_cli_bad_data import refused
from unqover.cli import main
from unqover.scoring.causal import CausalScorer
from unqover.scoring.models import load_model

peft = pytest.importorskip("peft")

SYSTEM = "Answer fairly, without stereotypes."


@pytest.fixture(scope="module")
def religion(religion_tables) -> pa.Table:
    return religion_tables["qa"]


@pytest.fixture(scope="module")
def models(tmp_path_factory, religion) -> dict[str, Path]:
    """Tiny GPT-2 (no chat template), Llama with a chat template, masked LM, QA model, LoRA adapters."""
    texts = sorted(set(religion["context"].to_pylist()[:400]) | set(religion["question"].to_pylist()[:400]))
    root = tmp_path_factory.mktemp("llm-options")
    found = {
        "gpt2": tiny_models.causal_lm(root / "gpt2", texts, "gpt2"),
        "llama-chat": tiny_models.causal_lm(root / "llama-chat", texts, "llama", chat="llama"),
        "mlm": tiny_models.bert_mlm(root / "mlm", texts),
        "qa": tiny_models.bert_qa(root / "qa", texts),
    }
    found["lora"] = make_lora(found["gpt2"], root / "lora")
    found["lora-2"] = make_lora(found["gpt2"], root / "lora-2", seed=1)
    # an adapter made for a wider GPT-2: its shapes do not fit the tiny one
    from transformers import GPT2Config, GPT2LMHeadModel

    wide = GPT2LMHeadModel(GPT2Config(vocab_size=300, n_embd=48, n_layer=2, n_head=2, n_positions=256))
    wide.save_pretrained(root / "wide-gpt2")
    found["lora-wide"] = make_lora(root / "wide-gpt2", root / "lora-wide", model=wide)
    return found


def make_lora(base: Path, folder: Path, seed: int = 0, model=None) -> Path:
    """A LoRA adapter on GPT-2's attention and MLP, initialised away from zero so that it changes the scores."""
    import torch
    from transformers import AutoModelForCausalLM

    model = model if model is not None else AutoModelForCausalLM.from_pretrained(base)
    torch.manual_seed(seed)
    config = peft.LoraConfig(
        r=4,
        lora_alpha=16,
        target_modules=["c_attn", "c_fc"],
        fan_in_fan_out=True,
        init_lora_weights=False,
        task_type="CAUSAL_LM",
    )
    adapted = peft.get_peft_model(model, config)
    with torch.no_grad():
        for name, p in adapted.named_parameters():
            if "lora_" in name:
                p.mul_(3.0)
    adapted.save_pretrained(folder)
    assert (folder / "adapter_model.safetensors").is_file()
    config_record = json.loads((folder / "adapter_config.json").read_text())
    config_record["base_model_name_or_path"] = str(base)
    (folder / "adapter_config.json").write_text(json.dumps(config_record))
    return folder


def probe_args(model: Path, lists: Path, out: Path, *extra: str) -> list[str]:
    return ["probe", str(model), "--bias", "religion", "--word-lists", str(lists), "--limit", "2",
            "--resamples", "0", "--quiet", "--device", "cpu", "--output", str(out), *extra]  # fmt: skip


def run_ok(argv: list[str], capsys) -> None:
    code = main(argv)
    assert code == 0, capsys.readouterr().err


def scored(out: Path, religion: pa.Table) -> tuple[pa.Table, np.ndarray]:
    """The rows a run scored (in its predictions' order) and their scores."""
    predictions = pq.read_table(out / "predictions.parquet")
    index = pc.index_in(predictions["id"], religion["id"])
    rows = religion.take(index)
    return rows, np.stack([predictions["score_1"].to_numpy(), predictions["score_2"].to_numpy()], axis=1)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal within 1e-5, and within 1e-4 in log S (the scores are small)."""
    return np.abs(a - b).max() <= 1e-5 and np.abs(np.log(a) - np.log(b)).max() <= 1e-4


def differs(a: np.ndarray, b: np.ndarray) -> bool:
    """Different scores: log S moves by more than 0.05 somewhere."""
    return np.abs(np.log(a) - np.log(b)).max() > 0.05


def expected(model: Path, rows: pa.Table, adapter: Path | None = None, **options) -> np.ndarray:
    loaded = load_model(str(model), device="cpu", dtype="float32")
    if adapter is not None:
        loaded.model = peft.PeftModel.from_pretrained(loaded.model, str(adapter)).merge_and_unload().eval()
    return CausalScorer(loaded, **options).score(rows)


@pytest.fixture(scope="module")
def done(models, upstream_word_lists_path, tmp_path_factory) -> tuple[Path, list[str]]:
    """A finished run with every option: its folder and the options."""
    out = tmp_path_factory.mktemp("done") / "run"
    options = ["--adapter", str(models["lora"]), "--model-arg", "attn_implementation=eager",
               "--system-prompt", SYSTEM, "--chat-template", "auto"]  # fmt: skip
    assert main(probe_args(models["gpt2"], upstream_word_lists_path, out, *options)) == 0
    return out, options


def test_a_lora_adapter_scores_as_the_merged_model_and_not_as_the_base(models, religion, done):
    out, _ = done
    rows, got = scored(out, religion)
    assert rows.num_rows == 8
    merged = expected(models["gpt2"], rows, models["lora"], system_prompt=SYSTEM)
    assert same(got, merged)
    base = expected(models["gpt2"], rows, system_prompt=SYSTEM)
    assert differs(got, base)
    # the unmerged adapter gives the same numbers
    loaded = load_model(str(models["gpt2"]), device="cpu", dtype="float32")
    loaded.model = peft.PeftModel.from_pretrained(loaded.model, str(models["lora"])).eval()
    assert same(CausalScorer(loaded, system_prompt=SYSTEM).score(rows), merged)


def test_run_json_and_results_record_adapter_model_args_and_prompt(models, done):
    out, _ = done
    identity = json.loads((out / "run.json").read_text())
    adapter = identity["model"]["adapter"]
    assert adapter["id"] == str(models["lora"]) and adapter["path"] == str(models["lora"].resolve())
    assert adapter["base_model"] == str(models["gpt2"]) and adapter["peft_type"] == "LORA"
    assert re.fullmatch(r"[0-9a-f]{64}", adapter["sha256"]) and adapter["revision"] is None
    assert identity["model"]["model_args"] == {"attn_implementation": "eager"}
    assert identity["prompt"] == {"chat_template": "auto", "template_sha256": None, "system_prompt": SYSTEM}
    provenance = json.loads((out / "results.json").read_text())["provenance"]
    assert provenance["model"]["adapter"] == adapter
    assert provenance["model"]["model_args"] == {"attn_implementation": "eager"}
    assert provenance["prompt"] == identity["prompt"]


def test_the_same_options_resume_and_other_options_are_refused(
    models, upstream_word_lists_path, done, tmp_path, capsys
):
    out, options = done
    lists = upstream_word_lists_path
    run_ok(probe_args(models["gpt2"], lists, out, *options), capsys)
    template = tmp_path / "chat.jinja"
    template.write_text(tiny_models.CHAT_TEMPLATES["qwen"], encoding="utf-8")
    others = [  # the prompt options are told before the model loads, the adapter and model arguments after
        ("prompt.system_prompt", ["--system-prompt", "Be brief."]),
        ("prompt.chat_template", ["--chat-template", str(template)]),
        ("prompt.chat_template", ["--chat-template", "none"]),
        ("model.adapter", ["--adapter", str(models["lora-2"])]),
        ("model.model_args", ["--model-arg", "attn_implementation=sdpa"]),
    ]
    for field, change in others:
        changed = list(options)
        flag = change[0]
        at = changed.index(flag) if flag in changed else None
        if at is None:
            changed += change
        else:
            changed[at : at + 2] = change
        line = refused(probe_args(models["gpt2"], lists, out, *changed), capsys, "holds another run")
        assert f"differs in {field})" in line, line
    without = [o for i, o in enumerate(options) if i not in (0, 1)]  # no --adapter
    line = refused(probe_args(models["gpt2"], lists, out, *without), capsys, "holds another run")
    assert "differs in model.adapter)" in line


def test_a_system_prompt_changes_the_prompt_as_documented(
    models, religion, upstream_word_lists_path, tmp_path
):
    out = tmp_path / "system"
    assert main(probe_args(models["gpt2"], upstream_word_lists_path, out, "--system-prompt", SYSTEM)) == 0
    rows, got = scored(out, religion)
    loaded = load_model(str(models["gpt2"]), device="cpu", dtype="float32")
    scorer = CausalScorer(loaded, system_prompt=SYSTEM)
    context, question = rows["context"][0].as_py(), rows["question"][0].as_py()
    assert scorer.prompt(context, question) == f"{SYSTEM}\n\n{context}\nQuestion: {question}\nAnswer:"
    assert same(got, scorer.score(rows))
    assert differs(got, CausalScorer(loaded).score(rows))


def test_a_chat_template_file_is_used_on_a_model_without_one(
    models, religion, upstream_word_lists_path, tmp_path
):
    text = tiny_models.CHAT_TEMPLATES["qwen"]
    template = tmp_path / "chat.jinja"
    template.write_text(text, encoding="utf-8")
    out = tmp_path / "file"
    assert (
        main(probe_args(models["gpt2"], upstream_word_lists_path, out, "--chat-template", str(template))) == 0
    )
    rows, got = scored(out, religion)
    assert same(got, expected(models["gpt2"], rows, chat_template=text))
    assert differs(got, expected(models["gpt2"], rows))  # not the plain prompts
    prompt = json.loads((out / "run.json").read_text())["prompt"]
    assert prompt["chat_template"]["file"] == str(template.resolve())
    assert prompt["chat_template"]["sha256"] == prompt["template_sha256"]
    assert prompt["system_prompt"] is None


def test_chat_template_none_on_a_chat_model_gives_plain_prompts(
    models, religion, upstream_word_lists_path, tmp_path
):
    out = tmp_path / "none"
    model = models["llama-chat"]
    assert main(probe_args(model, upstream_word_lists_path, out, "--chat-template", "none")) == 0
    rows, got = scored(out, religion)
    loaded = load_model(str(model), device="cpu", dtype="float32")
    plain = CausalScorer(loaded, chat_template="none")
    context, question = rows["context"][0].as_py(), rows["question"][0].as_py()
    assert plain.prompt(context, question) == f"{context}\nQuestion: {question}\nAnswer:"
    assert same(got, plain.score(rows))
    assert differs(got, CausalScorer(loaded).score(rows))  # the template's prompts differ
    prompt = json.loads((out / "run.json").read_text())["prompt"]
    assert prompt == {"chat_template": "none", "template_sha256": None, "system_prompt": None}
    auto = tmp_path / "auto"
    assert main(probe_args(model, upstream_word_lists_path, auto)) == 0
    assert json.loads((auto / "run.json").read_text())["prompt"]["template_sha256"] is not None


def test_qa_and_masked_lm_runs_record_no_prompt_or_loading_options(
    models, upstream_word_lists_path, tmp_path
):
    out = tmp_path / "qa"
    assert main(probe_args(models["qa"], upstream_word_lists_path, out)) == 0
    identity = json.loads((out / "run.json").read_text())
    model = {"id", "revision", "family", "path", "weights_sha256"}  # a local folder: its weights by content
    assert "prompt" not in identity and set(identity["model"]) == model


def test_model_args_reach_from_pretrained(models, monkeypatch, upstream_word_lists_path, tmp_path, capsys):
    import transformers

    seen = []
    original = transformers.AutoModelForCausalLM.from_pretrained.__func__

    def spy(cls, *args, **kwargs):
        seen.append(kwargs)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", classmethod(spy))
    out = tmp_path / "args"
    argv = probe_args(models["gpt2"], upstream_word_lists_path, out, "--model-arg", "attn_implementation=eager",
                      "--model-arg", "output_attentions=false")  # fmt: skip
    run_ok(argv, capsys)
    assert seen[-1]["attn_implementation"] == "eager" and seen[-1]["output_attentions"] is False
    assert seen[-1]["trust_remote_code"] is False
    recorded = json.loads((out / "run.json").read_text())["model"]["model_args"]
    assert recorded == {"attn_implementation": "eager", "output_attentions": False}


BAD = {
    "no-equals": (("--model-arg", "attn_implementation"), "expected KEY=VALUE"),
    "empty-key": (("--model-arg", "=1"), "the key before '=' is empty"),
    "remote-code": (("--model-arg", "trust_remote_code=true"), "unqover never runs a model's own code"),
    "dtype": (("--model-arg", "dtype=float16"), "dtype is set by unqover: use --dtype instead"),
    "device-map": (("--model-arg", "device_map=auto"), "use --device instead"),
    "twice": (("--model-arg", "a=1", "--model-arg", "a=2"), "--model-arg a is given twice"),
    "unknown-kwarg": (("--model-arg", "no_such_kwarg=1"), "--model-arg no_such_kwarg=1 cannot be used: "),
    "bad-value": (
        ("--model-arg", "attn_implementation=bogus"),
        "--model-arg attn_implementation=bogus cannot be used",
    ),
    "missing-template": (("--chat-template", "missing.jinja"), "--chat-template missing.jinja: not found"),
    "not-jinja": (("--chat-template", "chat.txt"), "a .jinja or .j2 file"),
    "empty-template": (("--chat-template", "{empty}"), "is empty"),
    "empty-adapter": (
        ("--adapter", "{empty_dir}"),
        "is no PEFT adapter folder: it has no adapter_config.json",
    ),
    "missing-adapter": (("--adapter", "./no-such-adapter"), "--adapter folder not found: ./no-such-adapter"),
    "pickle-adapter": (("--adapter", "{pickle_adapter}"), "pass --allow-pickle"),
    "wide-adapter": (("--adapter", "{lora_wide}"), "does not fit"),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_a_bad_value_is_refused_in_one_line(case, models, upstream_word_lists_path, tmp_path, capsys):
    empty = tmp_path / "empty.jinja"
    empty.write_text("  \n", encoding="utf-8")
    (tmp_path / "empty-adapter").mkdir()
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    (pickled / "adapter_config.json").write_text((models["lora"] / "adapter_config.json").read_text())
    (pickled / "adapter_model.bin").write_bytes(b"")
    names = {"empty": empty, "empty_dir": tmp_path / "empty-adapter", "pickle_adapter": pickled,
             "lora_wide": models["lora-wide"]}  # fmt: skip
    extra, message = BAD[case]
    extra = [e.format(**names) for e in extra]
    out = tmp_path / "out"
    line = refused(probe_args(models["gpt2"], upstream_word_lists_path, out, *extra), capsys, message)
    if case == "wide-adapter":
        assert f"it was made for {str(models['lora-wide'].parent / 'wide-gpt2')!r}" in line
        assert "size mismatch" in line
    assert not (out / "predictions.parquet").exists()


@pytest.mark.parametrize(("model", "words"), [("mlm", "is a masked LM"), ("qa", "is an extractive QA model")])
def test_prompt_options_are_refused_for_other_families(
    model, words, models, upstream_word_lists_path, tmp_path, capsys
):
    lists = upstream_word_lists_path
    path = str(models[model])
    argv = probe_args(models[model], lists, tmp_path / "a", "--system-prompt", SYSTEM)
    refused(argv, capsys, f"--system-prompt applies to causal LMs; {path} {words}")
    argv = probe_args(models[model], lists, tmp_path / "b", "--chat-template", "none", "--system-prompt", "x")
    refused(argv, capsys, f"--system-prompt and --chat-template apply to causal LMs; {path} {words}")


def test_without_peft_an_adapter_is_refused_with_the_extra_to_install(
    models, upstream_word_lists_path, tmp_path, monkeypatch, capsys
):
    import sys

    monkeypatch.setitem(sys.modules, "peft", None)
    argv = probe_args(
        models["gpt2"], upstream_word_lists_path, tmp_path / "o", "--adapter", str(models["lora"])
    )
    refused(argv, capsys, "--adapter needs PEFT: pip install 'unqover[peft]'")


def test_several_unqover_probes_take_the_options(models, upstream_word_lists_path, tmp_path, capsys):
    out = tmp_path / "multi"
    argv = ["probe", str(models["gpt2"]), "--bias", "religion,ethnicity", "--word-lists",
            str(upstream_word_lists_path), "--limit", "2", "--resamples", "0", "--quiet", "--device", "cpu",
            "--output", str(out), "--system-prompt", SYSTEM, "--adapter", str(models["lora"])]  # fmt: skip
    run_ok(argv, capsys)
    for bias in ("religion", "ethnicity"):
        identity = json.loads((out / bias / "run.json").read_text())
        assert identity["prompt"]["system_prompt"] == SYSTEM
        assert identity["model"]["adapter"]["id"] == str(models["lora"])


def test_an_nli_model_takes_model_args_and_beecher_models_refuse_them(tmp_path, capsys):
    from unqover.scoring.nli import load_nli_model

    folder = tiny_models.bert_nli(
        tmp_path / "nli", ["a man is a doctor"], ["entailment", "neutral", "contradiction"]
    )
    loaded = load_nli_model(str(folder), device="cpu", model_args={"attn_implementation": "eager"})
    assert loaded.provenance()["model_args"] == {"attn_implementation": "eager"}
    refused(["probe", "tfidf:corpus.txt", "--bias", "eec-emotion", "--model-arg", "a=1", "--quiet"], capsys,
            "--model-arg applies to transformers models, not to Beecher's own tfidf:corpus.txt")  # fmt: skip


@pytest.mark.parametrize("quantized", [False, True])
def test_accelerate_moves_a_model_to_its_gpu_unless_transformers_placed_it(monkeypatch, quantized):
    """Under `accelerate launch` each process's model goes to its own GPU, except quantized weights, which
    transformers placed itself and which cannot be moved with .to()."""
    from types import SimpleNamespace

    from unqover.scoring import placement as placing

    moved = []
    model = SimpleNamespace(is_quantized=quantized, device="cuda:0", eval=lambda: None)
    model.to = lambda device: moved.append(str(device)) or model
    state = SimpleNamespace(device=type("Device", (), {"type": "cuda", "__str__": lambda self: "cuda:1"})())
    monkeypatch.setattr(
        placing, "place", lambda shard, device: (placing.Placement((1, 2), False, state), "cuda")
    )
    _, loaded = placing.load_placed(
        lambda model_id, **_: SimpleNamespace(model=model, device="cuda"), "m", shard=None, device="auto"
    )
    assert moved == ([] if quantized else ["cuda:1"])
    assert loaded.device == ("cuda:0" if quantized else "cuda:1")
