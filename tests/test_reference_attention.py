"""poslib's attention variants against outputs of their published reference implementations, stored as literal numbers.

tests/test_reference.py compares with packages installable from PyPI (tests/reference/generate.py runs them). The
references here are not: importing flash-linear-attention or stickbreaking-attention imports their Triton kernels,
and ChunkLlama's module imports flash-attn. Their naive PyTorch functions were ported line for line to a throwaway
float64 script, run on the inputs below, and their outputs pasted here (17 significant digits); no reference code is
in this repository. The same script compared poslib with them on random inputs (maximum differences: FoX 3e-15,
stick-breaking 9e-16, PaTH 4e-15 on outputs and 3e-14 on logits, DCA 1.3e-15). Sources, read at these commits:

* FOX_FLA: fla-org/flash-linear-attention bc3b101dcb713ddc5bd8924b66754eb68b5ccf89, fla/ops/forgetting_attn/naive.py,
  ``naive_forgetting_attn(q, k, v, g)`` in its (B, T, H, D) layout, scale 1/√d.
* FOX_AUTHORS_2_OF_6: zhixuan-lin/forgetting-transformer 883f260c636e87971339749b0d8310004794a5cc,
  src/forgetting_transformer/ops/forgetting_attention.py, the reference inside ``test_op`` (M = 2 queries, the last
  of N = 6 keys, sm_scale 0.5).
* SB, SB_ATTEND_CURRENT: shawntan/stickbreaking-attention 3147a3841b025a31d271fc8f873120ff6fa0461b,
  stickbreaking_attention/sb_ref.py ``stickbreaking`` with tests/test_attn.py ``ref_fwd`` (remainder added to v).
* PATH_FLA: fla-org/flash-linear-attention bc3b101dcb713ddc5bd8924b66754eb68b5ccf89, fla/ops/path_attn/naive.py,
  ``naive_path_attn(q, k, v, w, beta, g, scale=0.5, chunk_size=4)`` (T = 6 padded to two chunks), in float64.
* DCA_CHUNKLLAMA_ROWS_6_TO_11: HKUNLP/ChunkLlama 2add4d7c99d24dcc1ab03414cc602abb2e28cf2c, chunkllama_attn_replace.py,
  ``forward`` without a KV cache (``chunk_size=5``, ``local_window=2``, base 10000, mscale 1), flash-attn replaced by
  an exact softmax with its log-sum-exp and the merge in float64 (the code merges in bfloat16).

Inputs are sines of the element index, wave(shape, phase): a formula, no random generator to drift between versions.
"""

import math

import numpy as np
import pytest
import torch

import poslib as P

FOX_FLA = [
    [0.963558185417193, 0.9430199312900105, 0.5823306495240819, 0.011592393936158275],
    [-0.1921010239432641, -0.47844345547153055, -0.5922094359135, -0.4923631251202493],
    [-0.05672791408945507, 0.16414271586440338, 0.32580641749351863, 0.36995045273539545],
    [0.6284626920993825, 0.4385397101580244, 0.0904337162557291, -0.2902920776072071],
    [-0.6945981049629686, -0.6413164357413219, -0.35670938577123545, 0.05656415375277765],
    [0.5513303973742889, 0.7157056513515427, 0.6219230396079106, 0.30381032198257674],
]
FOX_AUTHORS_2_OF_6 = [
    [-0.212070868812444, -0.3320115768132056, -0.3321943928609479, -0.21255337448251216],
    [-0.16960628355461166, 0.004453965403323268, 0.17690765138338443, 0.2855500461928567],
]
SB = [
    [0.963558185417193, 0.9430199312900105, 0.5823306495240819, 0.011592393936158275],
    [-0.2751465253259802, -0.5805896060794703, -0.6766117142834712, -0.5285772948474882],
    [-0.25974018646077984, -0.16611940837128583, -0.012578701133596992, 0.14549919346883894],
    [0.46789950283513115, 0.6852114345916571, 0.6553648855010873, 0.38912562414133456],
    [-0.32209510598473234, -0.5795519050182185, -0.627962034388777, -0.4498637685197334],
    [0.08747526449466593, 0.2571377685904219, 0.3340496601820318, 0.29046851506989446],
]
SB_ATTEND_CURRENT = [
    [0.963558185417193, 0.9430199312900105, 0.5823306495240819, 0.011592393936158275],
    [-0.5485993749932874, -0.916937216741262, -0.9545321693881654, -0.6478235844762489],
    [-0.11874786855800738, 0.41994502013050705, 0.807162075266107, 0.90323257001331],
    [0.7117818598663358, 0.21084960462953453, -0.36613693887013365, -0.8110564370393688],
    [-0.9898398633881456, -0.778654816541615, -0.28660589054019364, 0.30882291637339726],
    [0.7858609566158169, 0.9810523542517618, 0.8223742785143786, 0.36706254037107183],
]
PATH_FLA = [
    [0.963558185417193, 0.9430199312900105, 0.5823306495240819, 0.011592393936158275],
    [-0.1770444890176492, -0.45992388416979524, -0.5769069110214842, -0.4857973280304409],
    [-0.03979544983585156, 0.1680938421717354, 0.3153510189320388, 0.3488598330146605],
    [0.5308121877584132, 0.3366105835361358, 0.0209922074039946, -0.3021981411583655],
    [-0.45870181843258234, -0.37430305780971823, -0.15489170038189207, 0.12038970741224994],
    [0.3671820891581428, 0.42155826346431036, 0.323876700951666, 0.1093715284584218],
]
DCA_CHUNKLLAMA_ROWS_6_TO_11 = [
    [-0.17286979027509025, -0.5020407140585752, -0.6501235620365908, -0.5637042638972938],
    [-0.3340148180285986, -0.07826020867565751, 0.20572316819424408, 0.4155013827462663],
    [0.8151617468824286, 0.5397436446757272, 0.06963787012388102, -0.42558656024768754],
    [-0.8799134723939458, -0.8940635820791598, -0.5857214133640797, -0.06610720886788209],
    [0.6023786078105271, 0.786353737849139, 0.686687957296334, 0.33933110830346364],
    [0.02650749464359272, -0.26160335263137013, -0.4553528335356621, -0.4848547422242865],
]


def wave(shape, phase, amp=1.0):
    """amp · sin(0.61·n + phase) for the n-th element in C order."""
    return amp * np.sin(0.61 * np.arange(math.prod(shape)) + phase).reshape(shape)


def log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


def head_first(x):
    return x.transpose(0, 2, 1, 3) if x.ndim == 4 else x.transpose(0, 2, 1)


def close(got, want):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-12, atol=1e-14)


@pytest.fixture(params=["numpy", "torch"])
def kind(request):
    return (lambda x: x) if request.param == "numpy" else torch.tensor


def test_forgetting_attention_matches_flash_linear_attention(kind):
    q, k, v = (head_first(wave((1, 6, 1, 4), p)) for p in (0.1, 0.7, 1.3))
    log_f = head_first(log_sigmoid(2 + 2 * wave((1, 6, 1), 1.9)))
    out, _ = P.forgetting_attention(kind(q), kind(k), kind(v), kind(log_f))
    close(out[0, 0], FOX_FLA)


def test_forgetting_attention_with_fewer_queries_matches_the_authors_reference(kind):
    k, v = (head_first(wave((1, 6, 1, 4), p)) for p in (0.7, 1.3))
    log_f = head_first(log_sigmoid(2 + 2 * wave((1, 6, 1), 1.9)))
    out, _ = P.forgetting_attention(kind(wave((1, 1, 2, 4), 2.5)), kind(k), kind(v), kind(log_f), scale=0.5)
    close(out[0, 0], FOX_AUTHORS_2_OF_6)


@pytest.mark.parametrize("attend_current", [False, True])
def test_stickbreaking_attention_matches_the_reference(kind, attend_current):
    q, k, v = wave((1, 1, 6, 4), 0.1, 2.0), wave((1, 1, 6, 4), 0.7, 2.0), wave((1, 1, 6, 4), 1.3)
    out, _ = P.stickbreaking_attention(kind(q), kind(k), kind(v), attend_current=attend_current)
    close(out[0, 0], SB_ATTEND_CURRENT if attend_current else SB)


def test_path_attention_matches_flash_linear_attention(kind):
    q, k, v = (head_first(wave((1, 6, 1, 4), p)) for p in (0.1, 0.7, 1.3))
    w = head_first(wave((1, 6, 1, 4), 3.1))
    w = w / np.linalg.norm(w, axis=-1, keepdims=True)  # the op's tests pass F.normalize(w)
    beta = head_first(1 + 0.9 * wave((1, 6, 1), 3.7))
    log_f = head_first(log_sigmoid(2 + 2 * wave((1, 6, 1), 1.9)))
    out, _ = P.path_attention(kind(q), kind(k), kind(v), kind(w), kind(beta), log_f=kind(log_f), scale=0.5)
    close(out[0, 0], PATH_FLA)


def test_dual_chunk_attention_matches_chunkllama(kind):
    q, k, v = wave((1, 1, 12, 4), 0.1, 2.0), wave((1, 1, 12, 4), 0.7, 2.0), wave((1, 1, 12, 4), 1.3)
    out, _ = P.dual_chunk_attention(kind(q), kind(k), kind(v), chunk_size=5, local_window=2)
    close(out[0, 0, 6:], DCA_CHUNKLLAMA_ROWS_6_TO_11)
    # the same rows when only they are asked for (a KV cache of the first six keys)
    out, _ = P.dual_chunk_attention(kind(q[..., 6:, :]), kind(k), kind(v), chunk_size=5, local_window=2)
    close(out[0, 0], DCA_CHUNKLLAMA_ROWS_6_TO_11)
