"""NumPy and PyTorch give the same numbers for every public function (float64 1e-12, float32 1e-5)."""

import numpy as np
import pytest
import torch

import poslib as P
from poslib import teaching

rng = np.random.default_rng(0)
X = rng.standard_normal((2, 3, 6, 16))
Q, K, V = (rng.standard_normal((2, 5, 8)) for _ in range(3))
R9 = rng.standard_normal((9, 8))
W = rng.standard_normal((2, 8, 4))
F16 = P.rope_frequencies(16)
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32}
PATH_W, PATH_BETA = np.stack([R9[:5], R9[4:]]), np.abs(W[:, :5, 1])  # PaTH's w (2, 5, 8) and β (2, 5)
SKEW = W[:, :, :1] * W[:, None, :, 1]  # two 8×8 rank-one products (2, 8, 8), made skew-symmetric:
SKEW = SKEW - np.swapaxes(SKEW, -1, -2)  # non-commuting generators, as LieRE learns them
GEMMA4_FULL = {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6}


def t(a):
    return torch.tensor(a) if isinstance(a, np.ndarray) else a


# (name, numpy call, torch call); array-taking functions get the same inputs converted,
# size-taking functions get backend="torch".
CASES = [
    (
        "apply_rope interleaved",
        lambda: P.apply_rope(X, np.arange(6), F16),
        lambda: P.apply_rope(t(X), torch.arange(6), t(F16)),
    ),
    (
        "apply_rope half",
        lambda: P.apply_rope(X, np.arange(6) * 1000, F16, layout="half"),
        lambda: P.apply_rope(t(X), torch.arange(6) * 1000, t(F16), layout="half"),
    ),
    (
        "apply_rope partial rotary_dim",
        lambda: P.apply_rope(X, np.arange(6) * 999, F16[:4], layout="half", rotary_dim=8),
        lambda: P.apply_rope(t(X), torch.arange(6) * 999, t(F16[:4]), layout="half", rotary_dim=8),
    ),
    (
        "apply_mrope",
        lambda: P.apply_mrope(X, np.arange(18).reshape(3, 6) * 37, F16, [2, 3, 3]),
        lambda: P.apply_mrope(t(X), torch.arange(18).reshape(3, 6) * 37, t(F16), [2, 3, 3]),
    ),
    (
        "apply_mrope interleaved (Qwen3-VL)",
        lambda: P.apply_mrope(X, np.arange(18).reshape(3, 6) * 37, F16, [4, 2, 2], interleaved=True),
        lambda: P.apply_mrope(t(X), torch.arange(18).reshape(3, 6) * 37, t(F16), [4, 2, 2], interleaved=True),
    ),
    *(
        (
            f"apply_mm_rope {scheme}",
            lambda scheme=scheme: P.apply_mm_rope(X, np.arange(18).reshape(3, 6) * 37, F16, [4, 2, 2], scheme=scheme),
            lambda scheme=scheme: P.apply_mm_rope(
                t(X), torch.arange(18).reshape(3, 6) * 37, t(F16), [4, 2, 2], scheme=scheme
            ),
        )
        for scheme in ("mrope", "mrope_interleaved", "videorope", "hope")
    ),
    (
        "mm_rope_frequencies hope (its temporal pairs at frequency 0)",
        lambda: P.mm_rope_frequencies(F16, [4, 2, 2], "hope")[1],
        lambda: P.mm_rope_frequencies(t(F16), [4, 2, 2], "hope")[1],
    ),
    (
        "attention with learned sinks",
        lambda: P.attention(Q, K, V, causal=True, sinks=np.array([0.5, -1.0]))[1],
        lambda: P.attention(t(Q), t(K), t(V), causal=True, sinks=torch.tensor([0.5, -1.0]))[1],
    ),
    (
        "apply_rope_2d",
        lambda: P.apply_rope_2d(X, np.arange(6) // 2, np.arange(6) % 2, F16[:4], layout="half"),
        lambda: P.apply_rope_2d(t(X), torch.arange(6) // 2, torch.arange(6) % 2, t(F16[:4]), layout="half"),
    ),
    (
        "rope_from_config",
        lambda: P.rope_from_config({"head_dim": 16, "partial_rotary_factor": 0.5, "rope_scaling": YARN})[0],
        lambda: P.rope_from_config(
            {"head_dim": 16, "partial_rotary_factor": 0.5, "rope_scaling": YARN}, backend="torch"
        )[0],
    ),
    (
        "apply_xpos",
        lambda: P.apply_xpos(X, np.arange(6), F16, is_key=True),
        lambda: P.apply_xpos(t(X), torch.arange(6), t(F16), is_key=True),
    ),
    ("rope_matrix", lambda: P.rope_matrix(17, 16), lambda: P.rope_matrix(17, 16, backend="torch")),
    (
        "rope_layout_permutation",
        lambda: P.rope_layout_permutation(16),
        lambda: P.rope_layout_permutation(16, backend="torch"),
    ),
    ("rotate_half", lambda: P.rotate_half(X), lambda: P.rotate_half(t(X))),
    ("rope_angles", lambda: P.rope_angles(np.arange(6), F16), lambda: P.rope_angles(torch.arange(6), t(F16))),
    (
        "rope_decay_bound",
        lambda: P.rope_decay_bound(np.arange(-5, 300), 16),
        lambda: P.rope_decay_bound(torch.arange(-5, 300), 16),
    ),
    *[
        (
            f"rope_inv_freq {k}",
            (lambda k=k: P.rope_inv_freq(16, 10000.0, k, seq_len=80)[0]),
            (lambda k=k: P.rope_inv_freq(16, 10000.0, k, seq_len=80, backend="torch")[0]),
        )
        for k in [
            None,
            {"rope_type": "linear", "factor": 4},
            {"rope_type": "ntk", "factor": 4},
            {"rope_type": "dynamic", "factor": 4, "original_max_position_embeddings": 32},
            YARN,
            {
                "rope_type": "llama3",
                "factor": 8,
                "low_freq_factor": 1,
                "high_freq_factor": 4,
                "original_max_position_embeddings": 32,
            },
        ]
    ],
    (
        "sinusoidal_table",
        lambda: P.sinusoidal_table(9, 16, layout="concat"),
        lambda: P.sinusoidal_table(9, 16, layout="concat", backend="torch"),
    ),
    (
        "sinusoidal_encode",
        lambda: P.sinusoidal_encode(np.arange(-4, 4), 8),
        lambda: P.sinusoidal_encode(torch.arange(-4, 4), 8),
    ),
    (
        "sinusoidal_shift_matrix",
        lambda: P.sinusoidal_shift_matrix(3, 8),
        lambda: P.sinusoidal_shift_matrix(3, 8, backend="torch"),
    ),
    ("alibi_slopes", lambda: P.alibi_slopes(12), lambda: P.alibi_slopes(12, backend="torch")),
    (
        "alibi_bias",
        lambda: P.alibi_bias(6, 4, 7, causal=True),
        lambda: P.alibi_bias(6, 4, 7, backend="torch", causal=True),
    ),
    (
        "kerple_bias",
        lambda: P.kerple_bias(np.array([1.0, 2.0]), 0.5, q_len=5, k_len=5, kind="power"),
        lambda: P.kerple_bias(torch.tensor([1.0, 2.0], dtype=torch.float64), 0.5, q_len=5, k_len=5, kind="power"),
    ),
    (
        "sandwich_bias",
        lambda: P.sandwich_bias(3, 16, q_len=5, k_len=6),
        lambda: P.sandwich_bias(3, 16, q_len=5, k_len=6, backend="torch"),
    ),
    (
        "t5_relative_bucket",
        lambda: P.t5_relative_bucket(np.arange(-300, 300)),
        lambda: P.t5_relative_bucket(torch.arange(-300, 300)),
    ),
    (
        "t5_bias",
        lambda: P.t5_bias(np.arange(64.0).reshape(32, 2), 4, 6),
        lambda: P.t5_bias(torch.arange(64.0, dtype=torch.float64).reshape(32, 2), 4, 6),
    ),
    (
        "deberta_relative_position",
        lambda: P.deberta_relative_position(40, 40, bucket_size=8, max_position=64),
        lambda: P.deberta_relative_position(40, 40, bucket_size=8, max_position=64, backend="torch"),
    ),
    (
        "deberta_scores",
        lambda: P.deberta_scores(Q, K, Q[0, :4], K[0, :4]),
        lambda: P.deberta_scores(t(Q), t(K), t(Q[0, :4]), t(K[0, :4])),
    ),
    (
        "transformer_xl_scores",
        lambda: P.transformer_xl_scores(Q, K, R9, Q[0, 0], K[0, 0]),
        lambda: P.transformer_xl_scores(t(Q), t(K), t(R9), t(Q[0, 0]), t(K[0, 0])),
    ),
    (
        "deberta_score_terms",
        lambda: P.deberta_score_terms(Q, K, Q[0, :4], K[0, :4])["position-content"],
        lambda: P.deberta_score_terms(t(Q), t(K), t(Q[0, :4]), t(K[0, :4]))["position-content"],
    ),
    (
        "transformer_xl_score_terms",
        lambda: P.transformer_xl_score_terms(Q, K, R9, Q[0, 0], K[0, 0])["bias-position"],
        lambda: P.transformer_xl_score_terms(t(Q), t(K), t(R9), t(Q[0, 0]), t(K[0, 0]))["bias-position"],
    ),
    (
        "rope_cos_sin",
        lambda: np.stack(P.rope_cos_sin(np.arange(6) * 999, F16, attention_factor=1.3)),
        lambda: torch.stack(P.rope_cos_sin(torch.arange(6) * 999, t(F16), attention_factor=1.3)),
    ),
    (
        "rope_rotate half, partial",
        lambda: P.rope_rotate(X, *P.rope_cos_sin(np.arange(6) * 7, F16[:6]), layout="half", rotary_dim=12),
        lambda: P.rope_rotate(t(X), *P.rope_cos_sin(torch.arange(6) * 7, t(F16[:6])), layout="half", rotary_dim=12),
    ),
    (
        "transformer_xl_encodings",
        lambda: P.transformer_xl_encodings(3, 5, 8),
        lambda: P.transformer_xl_encodings(3, 5, 8, backend="torch"),
    ),
    (
        "absolute_score_terms",
        lambda: P.absolute_score_terms(Q[0], K[0], W[0], W[1])["position-content"],
        lambda: P.absolute_score_terms(t(Q[0]), t(K[0]), t(W[0]), t(W[1]))["position-content"],
    ),
    ("attention", lambda: P.attention(Q, K, V, causal=True)[0], lambda: P.attention(t(Q), t(K), t(V), causal=True)[0]),
    (
        "attention weights",
        lambda: P.attention(Q, K, V, bias=P.alibi_bias(1, 5, causal=False))[1],
        lambda: P.attention(t(Q), t(K), t(V), bias=P.alibi_bias(1, 5, causal=False, backend="torch"))[1],
    ),
    ("attention_entropy", lambda: P.attention_entropy(P.softmax(Q)), lambda: P.attention_entropy(P.softmax(t(Q)))),
    ("relative_distance", lambda: P.relative_distance(3, 5), lambda: P.relative_distance(3, 5, backend="torch")),
    (
        "logn_scale",
        lambda: P.logn_scale(np.array([10, 100, 5000]), 64),
        lambda: P.logn_scale(torch.tensor([10, 100, 5000]), 64),
    ),
    ("learned_lookup", lambda: P.learned_lookup(Q[0], [4, 0]), lambda: P.learned_lookup(t(Q[0]), torch.tensor([4, 0]))),
    ("xpos_scale", lambda: P.xpos_scale(np.arange(5), 8), lambda: P.xpos_scale(torch.arange(5), 8)),
    ("rope_unseen_angle", lambda: P.rope_unseen_angle(F16, 20, 900), lambda: P.rope_unseen_angle(t(F16), 20, 900)),
    (
        "attention_entropy_vs_length",
        lambda: teaching.attention_entropy_vs_length([8, 40], 16, score_std=2.0, n_queries=4),
        lambda: teaching.attention_entropy_vs_length([8, 40], 16, score_std=2.0, n_queries=4, backend="torch"),
    ),
    (
        "rope_cache_drift",
        lambda: P.rope_cache_drift(16, 10000.0, {**YARN, "rope_type": "dynamic"}, 70),
        lambda: P.rope_cache_drift(16, 10000.0, {**YARN, "rope_type": "dynamic"}, 70, backend="torch"),
    ),
    (
        "fire_bias",
        lambda: P.fire_bias(R9[0, :4], R9[1, :4], R9[2:5, :4], R9[5, :3], q_len=7, k_len=9, c=0.7, L=5.0, causal=True),
        lambda: P.fire_bias(
            *(t(a) for a in (R9[0, :4], R9[1, :4], R9[2:5, :4], R9[5, :3])), q_len=7, k_len=9, c=0.7, L=5.0, causal=True
        ),
    ),
    (
        "fire_inputs",
        lambda: P.fire_inputs(7, 9, c=0.7, L=5.0),
        lambda: P.fire_inputs(7, 9, c=0.7, L=5.0, backend="torch"),
    ),
    (
        "fire_weights_from_bias",  # NumPy weights from either kind of values
        lambda: P.fire_weights_from_bias(R9[:2], c=0.5)["w2"],
        lambda: torch.tensor(P.fire_weights_from_bias(t(R9[:2]), c=0.5)["w2"]),
    ),
    (
        "cope_positions",
        lambda: P.cope_positions(P.mask_future(3 * W[..., :4].transpose(0, 2, 1)[:, :, :4]), max_pos=3),
        lambda: P.cope_positions(P.mask_future(t(3 * W[..., :4].transpose(0, 2, 1)[:, :, :4])), max_pos=3),
    ),
    (
        "cope_bias",
        lambda: P.cope_bias(Q, P.mask_future(Q @ K.transpose(0, 2, 1)), R9[:4]),
        lambda: P.cope_bias(t(Q), P.mask_future(t(Q) @ t(K).transpose(1, 2)), t(R9[:4])),
    ),
    (
        "randomized_positions",
        lambda: P.randomized_positions(12, 100, seed=7),
        lambda: P.randomized_positions(12, 100, seed=7, backend="torch"),
    ),
    (
        "alibi_receptive_field",
        lambda: P.alibi_receptive_field(P.alibi_slopes(12), 0.9, length=50),
        lambda: P.alibi_receptive_field(t(P.alibi_slopes(12)), 0.9, length=50),
    ),
    (
        "rerope_relative_positions (leaky)",
        lambda: P.rerope_relative_positions(5, 9, window=3, leak=2.5),
        lambda: P.rerope_relative_positions(5, 9, window=3, leak=2.5, backend="torch"),
    ),
    (
        "rerope_positions",
        lambda: P.rerope_positions(5, 9, window=3, leak=2.5).q_positions,
        lambda: P.rerope_positions(5, 9, window=3, leak=2.5, backend="torch").q_positions,
    ),
    (
        "self_extend_relative_positions",
        lambda: P.self_extend_relative_positions(5, 9, group_size=2, neighbor_window=3).astype(float),
        lambda: P.self_extend_relative_positions(5, 9, group_size=2, neighbor_window=3, backend="torch").double(),
    ),
    (
        "self_extend_positions",
        lambda: P.self_extend_positions(5, 9, group_size=2, neighbor_window=3).q_positions.astype(float),
        lambda: P.self_extend_positions(5, 9, group_size=2, neighbor_window=3, backend="torch").q_positions.double(),
    ),
    (
        "remapped_distances",
        lambda: P.remapped_distances(P.rerope_positions(5, 9, window=3, leak=2.5)),
        lambda: P.remapped_distances(P.rerope_positions(5, 9, window=3, leak=2.5, backend="torch")),
    ),
    (
        "forgetting_attention",
        lambda: P.forgetting_attention(Q, K, V, -np.abs(W[:, :5, 0]))[1],
        lambda: P.forgetting_attention(t(Q), t(K), t(V), t(-np.abs(W[:, :5, 0])))[1],
    ),
    (
        "stickbreaking_attention",
        lambda: P.stickbreaking_attention(Q, K, V, attend_current=True)[0],
        lambda: P.stickbreaking_attention(t(Q), t(K), t(V), attend_current=True)[0],
    ),
    (
        "path_attention",
        lambda: P.path_attention(Q, K, V, PATH_W, PATH_BETA, log_f=-np.abs(W[:, :5, 2]))[0],
        lambda: P.path_attention(t(Q), t(K), t(V), t(PATH_W), t(PATH_BETA), log_f=t(-np.abs(W[:, :5, 2])))[0],
    ),
    (
        "path_deltanet_qk (the corrected keys)",
        lambda: P.path_deltanet_qk(K, K, PATH_W, PATH_BETA)[1],
        lambda: P.path_deltanet_qk(t(K), t(K), t(PATH_W), t(PATH_BETA))[1],
    ),
    (
        "dual_chunk_attention",
        lambda: P.dual_chunk_attention(Q, K, V, chunk_size=3, local_window=1)[1],
        lambda: P.dual_chunk_attention(t(Q), t(K), t(V), chunk_size=3, local_window=1)[1],
    ),
    (
        "dual_chunk_relative_positions",
        lambda: P.dual_chunk_relative_positions(5, 9, chunk_size=3, local_window=1).astype(float),
        lambda: P.dual_chunk_relative_positions(5, 9, chunk_size=3, local_window=1, backend="torch").double(),
    ),
    (
        "rope_remapped_scores",
        lambda: P.rope_remapped_scores(Q, K, P.self_extend_positions(5, group_size=2, neighbor_window=3), F16[:4]),
        lambda: P.rope_remapped_scores(
            t(Q), t(K), P.self_extend_positions(5, group_size=2, neighbor_window=3, backend="torch"), t(F16[:4])
        ),
    ),
    (
        "rope_from_config proportional (Gemma 4)",
        lambda: P.rope_from_config({"head_dim": 16, "rope_parameters": GEMMA4_FULL})[0],
        lambda: P.rope_from_config({"head_dim": 16, "rope_parameters": GEMMA4_FULL}, backend="torch")[0],
    ),
    (
        "vo_rope_attention",
        lambda: P.vo_rope_attention(X, X[:, :1], F16[:2], rope_dim=4, sinks=np.array([0.5, -1.0, 0.0]))[0],
        lambda: P.vo_rope_attention(t(X), t(X[:, :1]), t(F16[:2]), rope_dim=4, sinks=torch.tensor([0.5, -1.0, 0.0]))[0],
    ),
    ("rope_generator", lambda: P.rope_generator(F16, layout="half"), lambda: P.rope_generator(t(F16), layout="half")),
    (
        "axial_rope_generators",
        lambda: P.axial_rope_generators(F16[:4], 2),
        lambda: P.axial_rope_generators(t(F16[:4]), 2),
    ),
    (
        "generator_rotation",
        lambda: P.generator_rotation(SKEW, R9[:, :2]),
        lambda: P.generator_rotation(t(SKEW), t(R9[:, :2])),
    ),
    ("lie_rope", lambda: P.lie_rope(R9[:6], R9[:6, :2], SKEW), lambda: P.lie_rope(t(R9[:6]), t(R9[:6, :2]), t(SKEW))),
]


@pytest.mark.parametrize("name, np_call, torch_call", CASES, ids=[c[0] for c in CASES])
def test_numpy_equals_torch_float64(name, np_call, torch_call):
    a, b = np_call(), torch_call()
    assert isinstance(a, np.ndarray) and isinstance(b, torch.Tensor)
    np.testing.assert_allclose(b.numpy(), a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_numpy_equals_torch_float32(layout):
    a = P.apply_rope(X.astype(np.float32), np.arange(6), F16, layout=layout)
    b = P.apply_rope(torch.tensor(X, dtype=torch.float32), torch.arange(6), t(F16), layout=layout)
    assert a.dtype == np.float32 and b.dtype == torch.float32
    np.testing.assert_allclose(b.numpy(), a, rtol=1e-5, atol=1e-6)


def test_every_public_function_has_a_backend_case():
    covered = {c[0].split()[0] for c in CASES}  # the exact function name that opens each case's label
    skip = {
        "namespace",
        "register_rope_scaling",
        "yarn_attention_factor",
        "longrope_attention_factor",  # a Python float from two numbers
        "yarn_ramp",
        "apply_nope",
        "causal_mask",
        "mask_future",
        "softmax",
        "rope_frequencies",
        "sinusoidal_frequencies",
        "t5_relative_positions",
        "transformer_xl_offsets",
        "deberta_delta",
        "deberta_log_bucket",
        "xpos_zeta",
        "mrope_axis_of_pair",  # an integer index (NumPy), the same for both backends
        "rope_base_lower_bound",  # returns a Python float, built from sizes
        "rope_base_safe_bound",  # returns a Python float, built from sizes
        "self_extend_max_distance",  # a Python int from three sizes
        # Python floats (maxima over arrays); tests/test_lie_rope.py and test_partial_rotary.py run them on torch
        "commutator_norm",
        "relative_drift",
        "rope_convention_gap",
        "mm_rope_pair_axes",  # an integer index per pair (NumPy) from the section sizes, as mrope_axis_of_pair
        "video_position_ids",  # integer position ids (NumPy) from a grid's sizes
        "set_language",  # poslib's language setting, not a computation
    }
    functions = [n for n in P.__all__ if callable(getattr(P, n)) and n[0].islower() and n not in skip]
    missing = [n for n in functions if n not in covered]
    assert not missing, f"no NumPy-vs-torch case for {missing}"


def test_torch_output_stays_on_input_device_and_dtype():
    x = torch.randn(3, 8, dtype=torch.float32)
    y = P.apply_rope(x, torch.arange(3), torch.tensor(F16[:4]))
    assert y.device == x.device and y.dtype == x.dtype


THETA = P.rope_frequencies(128)


def test_new_functions_follow_torch_inputs():
    s = torch.tensor(P.alibi_slopes(8))
    assert isinstance(P.alibi_receptive_field(s), torch.Tensor)
    assert isinstance(P.rope_unseen_angle(torch.tensor(THETA), 10, 20), torch.Tensor)
