"""DroPE in the lab's extension run (poslib.lab.extend.drope_model, ``--drope-steps``), at a tiny size.

RoPE dropped from the trained rope model means the same weights read without positions (the lab's ``nope``
model); recalibration trains a copy at L_train; the option is off by default and then leaves the results file's
settings, and so every earlier run's checkpoint key, as they were.
"""

import json
import math

import pytest
import torch
from test_lab_extend import TINY  # the extension tests' tiny model: DroPE is one more reading of it

from poslib.lab import LabConfig, train_model
from poslib.lab.data import load_stdlib_corpus
from poslib.lab.extend import DROPE, ExtendConfig, _checkpoint_key, drope_model, run_extension
from poslib.lab.model import LabModel


@pytest.fixture(scope="module")
def tiny():
    cfg = LabConfig().replace(**TINY)
    corpus = load_stdlib_corpus()
    return cfg, corpus, train_model("rope", cfg, corpus, 0)[0]


def test_dropping_rope_keeps_the_weights_and_reads_them_without_positions(tiny):
    cfg, corpus, trained = tiny
    dropped, record = drope_model(trained, cfg, ExtendConfig(drope_steps=3), corpus, 0, stop_after=0)
    assert dropped.name == "nope" and record["losses"] == [] and record["recalibration_len"] == 16
    assert all(torch.equal(p, trained.state_dict()[n]) for n, p in dropped.state_dict().items())
    x = torch.arange(16).reshape(1, 16) % 7
    with torch.no_grad():
        want = LabModel("nope", cfg.model)
        want.load_state_dict(trained.state_dict())
        want.eval()
        assert torch.equal(dropped(x), want(x))
        assert not torch.allclose(dropped(x), trained(x))  # RoPE did carry position: dropping it changes the logits


def test_recalibration_trains_a_copy_at_the_training_length(tiny):
    cfg, corpus, trained = tiny
    before = {n: p.clone() for n, p in trained.state_dict().items()}
    dropped, record = drope_model(trained, cfg, ExtendConfig(drope_steps=3, finetune_warmup=1), corpus, 0)
    assert len(record["losses"]) == 3 and all(math.isfinite(v) for v in record["losses"])
    assert all(torch.equal(p, before[n]) for n, p in trained.state_dict().items())  # the trained model is untouched
    assert any(not torch.equal(p, before[n]) for n, p in dropped.state_dict().items())
    with torch.no_grad():
        assert dropped(torch.zeros(1, 64, dtype=torch.long)).shape == (1, 64, cfg.model.vocab_size)  # any length


def test_drope_is_off_by_default_and_leaves_earlier_settings_and_keys_alone(tiny):
    cfg, corpus, trained = tiny
    assert "drope_steps" not in ExtendConfig().to_dict() and ExtendConfig(drope_steps=20).to_dict()["drope_steps"] == 20
    assert _checkpoint_key(cfg, ExtendConfig()) == _checkpoint_key(cfg, ExtendConfig(drope_steps=0))
    assert json.loads(_checkpoint_key(cfg, ExtendConfig()))[1] == ExtendConfig().to_dict()
    assert DROPE == "rope+drope"
    with pytest.raises(ValueError, match="drope_steps"):
        drope_model(trained, cfg, ExtendConfig(), corpus, 0)
    with pytest.raises(ValueError, match="rope"):
        drope_model(LabModel("alibi", cfg.model), cfg, ExtendConfig(drope_steps=2), corpus, 0)
    with pytest.raises(ValueError, match="drope_steps"):
        ExtendConfig(drope_steps=-1)


def test_a_whole_extension_run_with_drope_holds_its_model_in_the_results(tiny):
    """The run assembles rope+drope beside the fine-tunes (a run once trained every seed and then failed here)."""
    cfg, corpus, _ = tiny
    ext = ExtendConfig(finetune_steps=2, finetune_warmup=1, drope_steps=2)
    results = run_extension(cfg, ext, corpus)
    assert set(results["training"][DROPE]) == {str(seed) for seed in cfg.train.seeds}
    assert all(ppl > 0 for ppl in results["ppl"][DROPE].values())


def test_recalibration_trains_on_pretrainings_mix_with_its_passkey_rows(tiny, monkeypatch):
    # pretraining with --passkey adds passkey rows to every step; DroPE recalibrates on "the pretraining data", so
    # it must add them too (the first version did not, and its model could not be asked for a key afterwards): the
    # model must see the rows (8 text + 4 passkey per step) and the loss must score their answer digits
    cfg, corpus, trained = tiny
    with_keys = cfg.replace(passkey=True, passkey_rows=4, key_digits=2)
    rows: list[int] = []
    forward = LabModel.forward

    def counting(self, x, *args, **kwargs):
        if self.training:
            rows.append(x.shape[0])
        return forward(self, x, *args, **kwargs)

    monkeypatch.setattr(LabModel, "forward", counting)
    ext = ExtendConfig(drope_steps=3, finetune_warmup=1)
    _, keyed = drope_model(trained, with_keys, ext, corpus, 0)
    assert rows == [8 + 4] * 3, rows
    rows.clear()
    _, plain = drope_model(trained, cfg, ext, corpus, 0)
    assert rows == [8] * 3, rows
    # the same text rows in both runs' first step: the difference of the first losses is the answer digits' loss
    # (a key the recalibrated model never saw costs about ln 256 per digit, far above 1)
    assert keyed["losses"][0] - plain["losses"][0] > 1.0, (keyed["losses"][0], plain["losses"][0])
