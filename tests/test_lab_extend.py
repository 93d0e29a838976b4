"""The lab's context extension (poslib.lab.extend, ``--extend``) at a tiny size: remapped inference, fine-tuning, CLI.

Everything here runs in seconds; the full experiment (3 seeds, the full preset) is a separate CPU job.
"""

import json
import math

import numpy as np
import pytest
import torch

import poslib as P
from poslib.lab import (
    EXTENSION_VARIANTS,
    FINETUNE_METHODS,
    SCHEMES,
    TRAINING_FREE,
    ExtendConfig,
    LabConfig,
    LabModel,
    LabResults,
    ModelConfig,
    RemapSettings,
    finetune_model,
    load_stdlib_corpus,
    run_extension,
    run_lab,
    split_scheme,
    train_model,
)
from poslib.lab.__main__ import main

TINY = dict(
    train_len=16,
    steps=8,
    eval_lens=(16, 32, 64),
    d_model=32,
    n_heads=4,
    n_layers=1,
    batch_size=8,
    warmup_steps=2,
    n_eval_spans=2,
)


@pytest.fixture(scope="module")
def corpus():
    return load_stdlib_corpus()


def _model(train_len=16):
    torch.manual_seed(0)
    return LabModel("rope", ModelConfig(train_len=train_len, d_model=32, n_heads=4, n_layers=1)).eval()


# ---- the remapped inference variants -------------------------------------------------------------------------------


def test_extension_variants_are_remaps_of_the_rope_model_and_leave_the_lab_schemes_alone():
    assert {split_scheme(s) for s in EXTENSION_VARIANTS} == {
        ("rope", "rerope"),
        ("rope", "leaky_rerope"),
        ("rope", "self_extend"),
    }
    assert not set(EXTENSION_VARIANTS) & set(SCHEMES)  # the committed results list SCHEMES exactly
    assert set(TRAINING_FREE) >= set(EXTENSION_VARIANTS)


@pytest.mark.parametrize("modifier", ["rerope", "leaky_rerope", "self_extend"])
def test_remaps_equal_plain_rope_while_every_distance_is_inside_the_window(modifier):
    model, x = _model(), torch.randint(0, 256, (2, 4))  # 4 bytes: every distance < w = W = 16/4
    with torch.no_grad():
        torch.testing.assert_close(model(x, modifier), model(x), rtol=1e-5, atol=1e-5)
        longer = torch.randint(0, 256, (2, 48))
        assert (model(longer, modifier) - model(longer)).abs().max() > 1e-4


def _brute_weights(model, idx, distances):
    # layer 0's attention weights from its own q, k and the explicit R(d) per pair: independent of poslib.remap
    block = model.blocks[0]
    B, T = idx.shape
    h, hd = model.cfg.n_heads, model.cfg.head_dim
    q, k, _ = block.attn.qkv(block.ln1(model.tok(idx))).view(B, T, 3, h, hd).permute(2, 0, 3, 1, 4).double()
    scores = np.full((B, h, T, T), -np.inf)
    for b in range(B):
        for head in range(h):
            for m in range(T):
                for n in range(m + 1):
                    R = P.rope_matrix(float(distances[m][n]), hd)
                    scores[b, head, m, n] = (R @ q[b, head, m].numpy()) @ k[b, head, n].numpy() / math.sqrt(hd)
    return torch.softmax(torch.tensor(scores), -1)


@pytest.mark.parametrize("modifier", ["rerope", "leaky_rerope", "self_extend"])
def test_the_lab_scores_each_pair_at_its_remapped_distance(modifier):
    model, T = _model(train_len=8), 20  # w = W = 2; Self-Extend at 20 bytes takes G = 4 (max distance 4 + 2 − 0 = 6)
    settings = RemapSettings()
    assert settings.group(T, 8) == 4
    w, k, G = 2, 16.0, 4
    distances = [
        [
            (min(m - n, w) if modifier == "rerope" else (m - n if m - n < w else w + (m - n - w) / k))
            if modifier != "self_extend"
            else (m - n if m - n < w else m // G + w - w // G - n // G)
            for n in range(T)
        ]
        for m in range(T)
    ]
    idx = torch.randint(0, 256, (1, T), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        got = model.forward_with_weights(idx, modifier).weights[0].double()
        torch.testing.assert_close(got, _brute_weights(model, idx, distances), rtol=1e-4, atol=1e-5)


def test_default_group_size_is_the_smallest_that_keeps_distances_below_the_training_length():
    settings, L = RemapSettings(), 64
    W = settings.neighbor_window(L)
    assert W == 16 and settings.window(L) == 16 and settings.leak == 16.0
    for T in (64, 128, 256, 512, 1024):
        G = settings.group(T, L)
        largest = lambda g, T=T: (T - 1) // g + W - W // g  # noqa: E731  (the formula, written again)
        assert largest(G) <= L - 1 and (G == 1 or largest(G - 1) > L - 1), (T, G)
    assert settings.group(64, L) == 1 and RemapSettings(group_size=8).group(1024, L) == 8


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(rerope_window=0), "rerope_window"),
        (dict(self_extend_window=2.5), "self_extend_window"),
        (dict(group_size=-1), "group_size"),
        (dict(leak=1.0), "leak"),
    ],
)
def test_bad_remap_settings_are_named(kwargs, word):
    with pytest.raises(ValueError, match=word):
        RemapSettings(**kwargs)
    with pytest.raises(ValueError, match=word):
        ExtendConfig(**kwargs)


# ---- fine-tuning ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_cfg():
    return LabConfig().replace(**TINY)


@pytest.fixture(scope="module")
def trained(tiny_cfg, corpus):
    return train_model("rope", tiny_cfg, corpus, 0)[0]


@pytest.mark.parametrize("method", list(FINETUNE_METHODS))
def test_finetuning_trains_a_copy_at_the_longer_length_with_a_fixed_scaling(method, tiny_cfg, trained, corpus):
    ext = ExtendConfig(finetune_steps=3, finetune_warmup=1)
    before = {n: p.clone() for n, p in trained.state_dict().items()}
    tuned, record = finetune_model(trained, tiny_cfg, ext, corpus, 0, method)
    assert all(torch.equal(p, before[n]) for n, p in trained.state_dict().items())  # the trained model is untouched
    assert any(not torch.equal(p, before[n]) for n, p in tuned.state_dict().items())
    assert len(record["losses"]) == 3 and record["finetune_len"] == 64 and trained.rope_scaling is None
    rope_type = FINETUNE_METHODS[method]
    expected_scaling = {"rope_type": rope_type, "factor": 4.0, "original_max_position_embeddings": 16}
    assert tuned.rope_scaling == (None if rope_type is None else expected_scaling)
    # the scaling is fixed: at every length the rotation is that of factor s = 4 (PI: positions / 4)
    for T in (16, 64):
        ctx = tuned.position_context(T)
        theta = P.rope_frequencies(tuned.cfg.head_dim)
        if method == "rope+ft_pi":
            expected = np.cos(np.arange(T)[:, None] * theta / 4)
        elif method == "rope+ft":
            expected = np.cos(np.arange(T)[:, None] * theta)
        else:
            continue
        np.testing.assert_allclose(ctx.q_rotation[0].numpy(), expected, rtol=1e-6, atol=1e-6)
    if rope_type is not None:
        with pytest.raises(ValueError, match="modifier"):
            tuned(torch.zeros(1, 4, dtype=torch.long), "ntk")


def test_finetuning_refuses_other_models_and_methods(tiny_cfg, trained, corpus):
    with pytest.raises(ValueError, match="method"):
        finetune_model(trained, tiny_cfg, ExtendConfig(), corpus, 0, "rope+ft_longrope")
    with pytest.raises(ValueError, match="rope"):
        finetune_model(LabModel("alibi", tiny_cfg.model), tiny_cfg, ExtendConfig(), corpus, 0, "rope+ft")


# ---- the whole run and its command line ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run(tiny_cfg, corpus):
    cfg = tiny_cfg.replace(passkey=True, passkey_samples=2, passkey_rows=4, key_digits=2)
    return run_extension(cfg, ExtendConfig(finetune_steps=2, finetune_warmup=1), corpus)


def test_extension_run_scores_every_variant_and_records_its_settings(tiny_run, tmp_path):
    names = [*TRAINING_FREE, *FINETUNE_METHODS]
    assert list(tiny_run.ppl) == names and set(tiny_run.passkey) == set(names)
    assert tiny_run.lab_config.schemes == TRAINING_FREE
    assert set(tiny_run.training) == {"rope", *FINETUNE_METHODS}
    ext = tiny_run.extension
    assert ext["finetune_len"] == 64 and ext["rerope_window"] == 4 and ext["self_extend_window"] == 4
    assert ext["group_size_by_length"] == {"16": 1, "32": 3, "64": 6}  # ⌊(T − 1)/G⌋ + 4 − ⌊4/G⌋ ≤ 15
    assert ext["settings"] == ExtendConfig(finetune_steps=2, finetune_warmup=1).to_dict()
    for L in ("16", "32", "64"):
        assert all(tiny_run.ppl[n][L] > 1 for n in names)
    # self-extend at L_train uses G = 1: plain RoPE, up to rounding (the remap path forms the logits itself)
    assert math.isclose(tiny_run.ppl["rope+self_extend"]["16"], tiny_run.ppl["rope"]["16"], rel_tol=1e-5)
    path = tmp_path / "extend.json"
    tiny_run.save(path)
    assert LabResults.load(path).to_dict() == json.loads(path.read_text())


def test_the_extension_rope_model_is_the_labs(tiny_run, tiny_cfg, corpus):
    cfg = tiny_cfg.replace(schemes=("rope", "rope+ntk"), passkey=True, passkey_samples=2, passkey_rows=4, key_digits=2)
    lab = run_lab(cfg, corpus)
    for scheme in ("rope", "rope+ntk"):
        assert lab.runs[scheme]["0"] == tiny_run.runs[scheme]["0"]
    assert lab.training["rope"]["0"]["losses"] == tiny_run.training["rope"]["0"]["losses"]


ARGS = ["--train-len", "16", "--steps", "2", "--eval-lens", "16,32", "--d-model", "32", "--n-layers", "1"]
ARGS += ["--n-eval-spans", "2", "--no-progress"]


def test_cli_runs_the_extension_and_writes_its_file(tmp_path, capsys):
    out = tmp_path / "ext.json"
    assert main(["--extend", *ARGS, "--finetune-steps", "1", "--leak", "4", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "rope+ft_yarn" in printed and "CPU seconds per model" in printed
    saved = LabResults.load(out)
    assert saved.extension["settings"]["leak"] == 4.0 and saved.extension["settings"]["finetune_steps"] == 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--finetune-steps", "3"], "only apply with --extend"),
        (["--extend", "--schemes", "rope"], "drop --schemes"),
        (["--extend", "--leak", "1"], "leak"),
        (["--extend", "--group-size", "0"], "group_size"),
    ],
)
def test_cli_rejects_what_does_not_fit_the_extension(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_help_documents_the_extension_options(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for option in ("--extend", "--finetune-steps", "--finetune-multiple", "--rerope-window", "--leak", "--group-size"):
        assert option in text
    assert "fine-tuning steps per method and seed (default: 100)" in text


def test_the_lab_cli_also_takes_the_remap_variants_as_schemes(tmp_path, capsys):
    out = tmp_path / "lab.json"
    assert main(["--schemes", "rope,rope+rerope,rope+self_extend", *ARGS, "--out", str(out)]) == 0
    saved = LabResults.load(out)
    assert list(saved.ppl) == ["rope", "rope+rerope", "rope+self_extend"] and saved.extension is None
    assert len(saved.training) == 1  # one rope model, read three ways
