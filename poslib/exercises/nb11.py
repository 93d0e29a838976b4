"""Exercises of notebook 11 (extending a trained model): ReRoPE's distances, Self-Extend's group, the NTK base."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake, check_array, not_answered

# Exercise 11.1: the last query of an 8-token causal input and ReRoPE's window w.
M_LAST, N_KEYS, WINDOW = 7, 8, 3
# Exercise 11.2: the lab's model (L_train = 64, Self-Extend's w = L_train/4) read at L' = 16 · L_train.
L_TRAIN, L_LONG, NEIGHBOR = 64, 1024, 16
# Exercise 11.3: the lab's model (width 64, 4 heads, b = 10⁴), fine-tuned at s = 4.
WIDTH, N_HEADS, BASE, S = 64, 4, 10_000.0, 4.0
HEAD_DIM = WIDTH // N_HEADS


def _rerope_row(clamp: int) -> Any:
    return np.minimum(M_LAST - np.arange(N_KEYS), clamp)


def check_rerope_row(answer: Any) -> Feedback:
    """d'(m, n) = min(m − n, w) for m = 7, n = 0 … 7, w = 3 (the clamp at w itself, as bojone/rerope)."""
    true = M_LAST - np.arange(N_KEYS)
    return check_array(
        answer,
        _rerope_row(WINDOW),
        what="8 distances, one per key",
        diagnoses=[
            (
                f"clamp: that clamps at w − 1 = {WINDOW - 1}; ReRoPE keeps the true distance up to w itself and "
                f"gives w = {WINDOW} beyond it (bojone/rerope: `.clip(max=window)`), so the two regions meet "
                "at m − n = w",
                _rerope_row(WINDOW - 1),
            ),
            ("no clamp: that is plain RoPE's m − n; ReRoPE caps it at the window, min(m − n, w)", true),
            (
                "sign: that is key − query, n − m (T5's r); ReRoPE's distance is query − key, m − n, "
                "positive for the keys before the query",
                -true,
            ),
            (
                "sign: that is the clamped distance with key − query's sign; ReRoPE's distance is min(m − n, w), "
                "positive for the keys before the query",
                -_rerope_row(WINDOW),
            ),
        ],
    )


def _self_extend_max(length: int, G: int, w: int) -> int:
    # the last query (m = length − 1) and key 0: LongLM's floored shift w − ⌊w/G⌋
    last = length - 1
    return last if last < w else last // G + w - w // G


def _smallest_group(fits: Any) -> int:
    return next(G for G in range(1, L_LONG + 1) if fits(G))


_G = _smallest_group(lambda G: _self_extend_max(L_LONG, G, NEIGHBOR) <= L_TRAIN - 1)
_G_RATIO = L_LONG // L_TRAIN  # L'/L_train, PI's factor, mistaken for the group
_G_NO_SHIFT = _smallest_group(lambda G: (L_LONG - 1) // G <= L_TRAIN - 1)  # the shift w − ⌊w/G⌋ left out
_G_TO_L = _smallest_group(lambda G: _self_extend_max(L_LONG, G, NEIGHBOR) <= L_TRAIN)  # ≤ L_train: one too far
# LongLM's README: the input may be up to (L_train − w)·G + w tokens long
_G_README = _smallest_group(lambda G: (L_TRAIN - NEIGHBOR) * G + NEIGHBOR >= L_LONG)


def check_self_extend_group(answer: Any) -> Feedback:
    """The smallest G with ⌊(L' − 1)/G⌋ + w − ⌊w/G⌋ ≤ L_train − 1, for L' = 1024, w = 16, L_train = 64."""
    if answer is None:
        return not_answered("the smallest group size G, a whole number")
    if isinstance(answer, bool) or not isinstance(answer, int | np.integer):
        return Feedback(False, f"type: your answer should be a whole number, got {type(answer).__name__}")
    G = int(answer)
    if G < 1:
        return Feedback(False, f"values: a group holds at least one token, G ≥ 1; got {G}")
    if G == _G:
        return Feedback(True, "your answer is right.")
    worst = _self_extend_max(L_LONG, G, NEIGHBOR)
    because = []
    if G == _G_RATIO:
        because.append(f"L'/L_train = {L_LONG}/{L_TRAIN} (PI's factor, not a group chosen for the bound)")
    if G == _G_NO_SHIFT:
        because.append(
            f"the bound on ⌊(L' − 1)/G⌋ without the shift w − ⌊w/G⌋ (= {NEIGHBOR - NEIGHBOR // G} at G = {G}) "
            "that moves the grouped distances up to continue the neighbour window"
        )
    if because:
        return Feedback(
            False,
            f"G = {G} is " + ", or ".join(because) + f": with the shift, its largest distance is {worst}, "
            f"beyond L_train − 1 = {L_TRAIN - 1}",
        )
    if G == _G_TO_L:
        return Feedback(
            False,
            f"off by one: G = {G} gives a largest distance of {worst} = L_train, one past the distances 0 … "
            f"{L_TRAIN - 1} a model trained at L_train = {L_TRAIN} has seen (the bound is ≤ L_train − 1)",
        )
    if worst > L_TRAIN - 1:
        return Feedback(
            False, f"bound: with G = {G} the largest distance is {worst}, beyond L_train − 1 = {L_TRAIN - 1}"
        )
    return Feedback(
        False,
        f"not the smallest: G = {G} keeps the largest distance at {worst} ≤ {L_TRAIN - 1}, but a smaller group "
        "does too, and the smaller the group, the fewer far tokens share one position",
    )


def _ntk(base: float, s: float, d: int) -> float:
    return base * s ** (d / (d - 2))


def check_ntk_base(answer: Any) -> Feedback:
    """b' = b · s^(d/(d−2)) with the head dimension d = 64/4 = 16, b = 10⁴, s = 4."""
    d = HEAD_DIM
    return check_array(
        answer,
        _ntk(BASE, S, d),
        what="the new base b', a float",
        rtol=1e-4,  # the base to the nearest unit (48,761, as the takeaway prints it) is right
        diagnoses=[
            (
                f"linear: b·s = {BASE * S:,.0f} raises the base by the factor itself; the NTK-aware exponent "
                "d/(d − 2) is what divides the slowest pair's frequency by exactly s",
                BASE * S,
            ),
            (
                f"head dimension: that uses d = {WIDTH}, the model's width; RoPE rotates each head's {d} features, "
                "so d is the head dimension (Hugging Face: head_dim = hidden_size // num_attention_heads)",
                _ntk(BASE, S, WIDTH),
            ),
            ("that is the factor s^(d/(d − 2)) alone; the new base is b times it", S ** (d / (d - 2))),
            ("exponent: inverted; it is d/(d − 2) (above 1), not (d − 2)/d", BASE * S ** ((d - 2) / d)),
            ("that is the base divided by the factor; NTK-aware scaling *raises* the base", BASE / S),
        ],
    )


# The numbers the takeaways quote, from the same formulas as the checkers.
_ROW = _rerope_row(WINDOW)
_FAR = np.flatnonzero(M_LAST - np.arange(N_KEYS) >= WINDOW)  # keys at true distance w or more
_NEAR = np.flatnonzero(M_LAST - np.arange(N_KEYS) < WINDOW)
_WORST = _self_extend_max(L_LONG, _G, NEIGHBOR)
_WORST_TO_L = _self_extend_max(L_LONG, _G_TO_L, NEIGHBOR)
_NTK = _ntk(BASE, S, HEAD_DIM)
_THETA = BASE ** (-2 * np.arange(HEAD_DIM // 2) / HEAD_DIM)
_THETA_NTK = _NTK ** (-2 * np.arange(HEAD_DIM // 2) / HEAD_DIM)
_SLOWDOWN = _THETA / _THETA_NTK  # how many times more slowly each pair turns: 1 for pair 0, s for the last
_MID = HEAD_DIM // 4 - 1  # a pair halfway


EXERCISES = (
    Exercise(
        key="rerope-row",
        title="ReRoPE's distances for one query",
        prompt=(
            "ReRoPE scores query $m$ and key $n$ at the distance $d'(m, n) = \\min(m - n, w)$: the true distance "
            "inside a window $w$, the constant $w$ beyond it. For the last query of an 8-token causal input, "
            "$m = 7$, and its keys $n = 0, \\dots, 7$, compute the eight distances with $w = 3$."
        ),
        hint=(
            "`np.minimum` of the true distances $m - n$ and $w$. At $m - n = w$ both regions give $w$: "
            "the clamp is at $w$, not $w - 1$."
        ),
        setup="m, n, w = 7, np.arange(8), 3",
        stub="answer = None  # 8 distances, one per key",
        solution="answer = np.minimum(m - n, w)",
        check=check_rerope_row,
        takeaway=(
            f"So keys {_FAR[0]} … {_FAR[-1]}, at true distances {M_LAST - _FAR[0]} … {M_LAST - _FAR[-1]}, all sit "
            f"at distance {WINDOW}, and keys {', '.join(str(n) for n in _NEAR)} keep "
            f"{', '.join(str(_ROW[n]) for n in _NEAR)}: however long the input, no distance exceeds w, so a model "
            "trained on more than w tokens meets only distances it has seen; the price is that the keys beyond "
            "the window can no longer be told apart by their distance."
        ),
        mistakes=(
            Mistake("answer = np.minimum(m - n, w - 1)", f"w − 1 = {WINDOW - 1}"),
            Mistake("answer = m - n", "plain RoPE's m − n"),
            Mistake("answer = n - m", "key − query, n − m"),
            Mistake("answer = np.maximum(n - m, -w)", "key − query's sign"),
            Mistake("answer = np.minimum(m - n, w)[:-1]", "without the last one"),
        ),
    ),
    Exercise(
        key="self-extend-group",
        title="Self-Extend's smallest group",
        prompt=(
            "Self-Extend keeps the true distance inside a neighbour window of $w$ tokens and, beyond it, "
            "floor-divides positions by the group size $G$. In an input of $L'$ tokens its largest distance "
            "(the last query and key 0) is $\\lfloor (L' - 1)/G \\rfloor + w - \\lfloor w/G \\rfloor$. A model "
            "trained at $L_{\\mathrm{train}} = 64$ has seen the distances $0, \\dots, 63$ only. Find the smallest "
            "$G$ that keeps every distance of an input of $L' = 1024$ tokens among them, with $w = 16$."
        ),
        hint=(
            "Try $G = 1, 2, \\dots$ until the largest distance is at most $L_{\\mathrm{train}} - 1$. The shift "
            "$w - \\lfloor w/G \\rfloor$ moves the grouped distances up so that they continue the neighbour window."
        ),
        setup="L_long, L_train, w = 1024, 64, 16",
        stub="answer = None  # the smallest group size G",
        solution=("answer = next(G for G in range(1, L_long + 1) if (L_long - 1) // G + w - w // G <= L_train - 1)"),
        check=check_self_extend_group,
        takeaway=(
            f"So G = {_G}: the last query sees key 0 at distance ⌊{L_LONG - 1}/{_G}⌋ + {NEIGHBOR} − "
            f"{NEIGHBOR // _G} = {_WORST} ≤ {L_TRAIN - 1}, while G = {_G_TO_L} gives {_WORST_TO_L}, one past what "
            f"the model saw; this is the group the lab's Self-Extend uses at L' = {L_LONG // L_TRAIN} L_train. "
            f"LongLM's README rule, L' ≤ (L_train − w)·G + w, admits G = {_G_README} too "
            f"({L_TRAIN - NEIGHBOR}·{_G_README} + {NEIGHBOR} = {(L_TRAIN - NEIGHBOR) * _G_README + NEIGHBOR}): "
            f"it allows a largest distance of {_self_extend_max(L_LONG, _G_README, NEIGHBOR)}. Beyond the window, {_G} "
            "tokens in a row now share one position: the price of staying in range."
        ),
        mistakes=(
            Mistake("answer = L_long // L_train", "PI's factor"),
            Mistake(
                "answer = next(G for G in range(1, L_long + 1) if (L_long - 1) // G <= L_train - 1)",
                "without the shift",
            ),
            Mistake(
                "answer = next(G for G in range(1, L_long + 1) if (L_long - 1) // G + w - w // G <= L_train)",
                "off by one",
            ),
            Mistake("answer = 20", "bound"),
            Mistake("answer = 32", "not the smallest"),
            Mistake("answer = 22.0", "type"),
        ),
    ),
    Exercise(
        key="ntk-base",
        title="The NTK-aware base of the lab's fine-tuning",
        prompt=(
            "The lab fine-tunes its RoPE model (width 64, 4 heads, base $b = 10^4$) at $L' = 4L_{\\mathrm{train}}$ "
            "with the NTK-aware base $b' = b\\,s^{d/(d-2)}$ (bloc97, 2023): pair 0 keeps its frequency and the "
            "slowest pair is slowed exactly like PI's. Compute $b'$ for $s = 4$."
        ),
        hint=(
            "RoPE rotates each head's queries and keys on their own: $d$ is the size of the vectors one rotation "
            "acts on. Exercise 6.2 derives the exponent."
        ),
        setup="width, n_heads, base, s = 64, 4, 10_000.0, 4",
        stub="answer = None  # the new base b'",
        solution="d = width // n_heads\nanswer = base * s ** (d / (d - 2))  # ≈ 4.88e4",
        check=check_ntk_base,
        takeaway=(
            f"So b' is about {_NTK:,.0f}, {_NTK / BASE:.3g} times b, more than s = {S:g}: with {HEAD_DIM // 2} "
            f"pairs per head the exponent d/(d − 2) = {HEAD_DIM / (HEAD_DIM - 2):.2f} is well above 1 "
            f"({128 / 126:.3f} at LLaMA's d = 128, Exercise 6.2). Pair 0 keeps θ_0 = 1, pair {HEAD_DIM // 2 - 1} "
            f"turns exactly {_SLOWDOWN[-1]:.3g} times more slowly, like PI, and pair {_MID} only "
            f"{_SLOWDOWN[_MID]:.3g} times; the lab's rope+ft_ntk model is fine-tuned at this base."
        ),
        mistakes=(
            Mistake("answer = base * s", "linear"),
            Mistake("answer = base * s ** (width / (width - 2))", "the model's width"),
            Mistake("d = width // n_heads\nanswer = s ** (d / (d - 2))", "alone"),
            Mistake("d = width // n_heads\nanswer = base * s ** ((d - 2) / d)", "inverted"),
        ),
    ),
)
