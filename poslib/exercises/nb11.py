"""Exercises of notebook 11 (extending a trained model): ReRoPE's distances, Self-Extend's group, the NTK base."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake, _, check_array, not_answered

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
        what=_("8 distances, one per key"),
        diagnoses=[
            (
                _(
                    "clamp: that clamps at w − 1 = {w_minus_1}; ReRoPE keeps the true distance up to w itself "
                    "and gives w = {window} beyond it (bojone/rerope: `.clip(max=window)`), so the two regions "
                    "meet at m − n = w"
                ).format(w_minus_1=WINDOW - 1, window=WINDOW),
                _rerope_row(WINDOW - 1),
            ),
            (_("no clamp: that is plain RoPE's m − n; ReRoPE caps it at the window, min(m − n, w)"), true),
            (
                _(
                    "sign: that is key − query, n − m (T5's r); ReRoPE's distance is query − key, m − n, "
                    "positive for the keys before the query"
                ),
                -true,
            ),
            (
                _(
                    "sign: that is the clamped distance with key − query's sign; ReRoPE's distance is min(m − n, w), "
                    "positive for the keys before the query"
                ),
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
        return not_answered(_("the smallest group size G, a whole number"))
    if isinstance(answer, bool) or not isinstance(answer, int | np.integer):
        return Feedback(
            False, _("type: your answer should be a whole number, got {type}").format(type=type(answer).__name__)
        )
    G = int(answer)
    if G < 1:
        return Feedback(False, _("values: a group holds at least one token, G ≥ 1; got {g}").format(g=G))
    if G == _G:
        return Feedback(True, _("your answer is right."))
    worst = _self_extend_max(L_LONG, G, NEIGHBOR)
    because = []
    if G == _G_RATIO:
        because.append(
            _("L'/L_train = {long}/{train} (PI's factor, not a group chosen for the bound)").format(
                long=L_LONG, train=L_TRAIN
            )
        )
    if G == _G_NO_SHIFT:
        because.append(
            _(
                "the bound on ⌊(L' − 1)/G⌋ without the shift w − ⌊w/G⌋ (= {shift} at G = {g}) "
                "that moves the grouped distances up to continue the neighbour window"
            ).format(shift=NEIGHBOR - NEIGHBOR // G, g=G)
        )
    if because:
        return Feedback(
            False,
            _(
                "G = {g} is {reasons}: with the shift, its largest distance is {worst}, beyond L_train − 1 = {last}"
            ).format(g=G, reasons=_(", or ").join(because), worst=worst, last=L_TRAIN - 1),
        )
    if G == _G_TO_L:
        return Feedback(
            False,
            _(
                "off by one: G = {g} gives a largest distance of {worst} = L_train, one past the distances "
                "0 … {last_distance} a model trained at L_train = {l_train} has seen (the bound is ≤ "
                "L_train − 1)"
            ).format(g=G, worst=worst, last_distance=L_TRAIN - 1, l_train=L_TRAIN),
        )
    if worst > L_TRAIN - 1:
        return Feedback(
            False,
            _("bound: with G = {g} the largest distance is {worst}, beyond L_train − 1 = {last_distance}").format(
                g=G, worst=worst, last_distance=L_TRAIN - 1
            ),
        )
    return Feedback(
        False,
        _(
            "not the smallest: G = {g} keeps the largest distance at {worst} ≤ {last_distance}, but a "
            "smaller group does too, and the smaller the group, the fewer far tokens share one position"
        ).format(g=G, worst=worst, last_distance=L_TRAIN - 1),
    )


def _ntk(base: float, s: float, d: int) -> float:
    return base * s ** (d / (d - 2))


def check_ntk_base(answer: Any) -> Feedback:
    """b' = b · s^(d/(d−2)) with the head dimension d = 64/4 = 16, b = 10⁴, s = 4."""
    d = HEAD_DIM
    return check_array(
        answer,
        _ntk(BASE, S, d),
        what=_("the new base b', a float"),
        rtol=1e-4,  # the base to the nearest unit (48,761, as the takeaway prints it) is right
        diagnoses=[
            (
                _(
                    "linear: b·s = {linear:,.0f} raises the base by the factor itself; the NTK-aware exponent "
                    "d/(d − 2) is what divides the slowest pair's frequency by exactly s"
                ).format(linear=BASE * S),
                BASE * S,
            ),
            (
                _(
                    "head dimension: that uses d = {width}, the model's width; RoPE rotates each head's {d} "
                    "features, so d is the head dimension (Hugging Face: head_dim = hidden_size // "
                    "num_attention_heads)"
                ).format(width=WIDTH, d=d),
                _ntk(BASE, S, WIDTH),
            ),
            (_("that is the factor s^(d/(d − 2)) alone; the new base is b times it"), S ** (d / (d - 2))),
            (_("exponent: inverted; it is d/(d − 2) (above 1), not (d − 2)/d"), BASE * S ** ((d - 2) / d)),
            (_("that is the base divided by the factor; NTK-aware scaling *raises* the base"), BASE / S),
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
            lambda: _(
                "So keys {first} … {last}, at true distances {far_first} … {far_last}, all sit at distance "
                "{window}, and keys {near} keep {near_distances}: however long the input, no distance "
                "exceeds w, so a model trained on more than w tokens meets only distances it has seen; the "
                "price is that the keys beyond the window can no longer be told apart by their distance."
            ).format(
                first=_FAR[0],
                last=_FAR[-1],
                far_first=M_LAST - _FAR[0],
                far_last=M_LAST - _FAR[-1],
                window=WINDOW,
                near=_(", ").join(str(n) for n in _NEAR),
                near_distances=_(", ").join(str(_ROW[n]) for n in _NEAR),
            )
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
            lambda: _(
                "So G = {g}: the last query sees key 0 at distance ⌊{last_position}/{g}⌋ + {neighbor} − "
                "{shift} = {worst} ≤ {last_distance}, while G = {g_to_l} gives {worst_to_l}, one past what "
                "the model saw; this is the group the lab's Self-Extend uses at L' = {times} L_train. "
                "LongLM's README rule, L' ≤ (L_train − w)·G + w, admits G = {g_readme} too "
                "({rest}·{g_readme} + {neighbor} = {admitted}): it allows a largest distance of "
                "{readme_worst}. Beyond the window, {g} tokens in a row now share one position: the price "
                "of staying in range."
            ).format(
                g=_G,
                last_position=L_LONG - 1,
                neighbor=NEIGHBOR,
                shift=NEIGHBOR // _G,
                worst=_WORST,
                last_distance=L_TRAIN - 1,
                g_to_l=_G_TO_L,
                worst_to_l=_WORST_TO_L,
                times=L_LONG // L_TRAIN,
                g_readme=_G_README,
                rest=L_TRAIN - NEIGHBOR,
                admitted=(L_TRAIN - NEIGHBOR) * _G_README + NEIGHBOR,
                readme_worst=_self_extend_max(L_LONG, _G_README, NEIGHBOR),
            )
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
            lambda: _(
                "So b' is about {ntk:,.0f}, {times:.3g} times b, more than s = {s:g}: with {pairs} pairs "
                "per head the exponent d/(d − 2) = {exponent:.2f} is well above 1 ({llama_exponent:.3f} at "
                "LLaMA's d = 128, Exercise 6.2). Pair 0 keeps θ_0 = 1, pair {last_pair} turns exactly "
                "{slowest:.3g} times more slowly, like PI, and pair {mid} only {middle:.3g} times; the "
                "lab's rope+ft_ntk model is fine-tuned at this base."
            ).format(
                ntk=_NTK,
                times=_NTK / BASE,
                s=S,
                pairs=HEAD_DIM // 2,
                exponent=HEAD_DIM / (HEAD_DIM - 2),
                llama_exponent=128 / 126,
                last_pair=HEAD_DIM // 2 - 1,
                slowest=_SLOWDOWN[-1],
                mid=_MID,
                middle=_SLOWDOWN[_MID],
            )
        ),
        mistakes=(
            Mistake("answer = base * s", "linear"),
            Mistake("answer = base * s ** (width / (width - 2))", "the model's width"),
            Mistake("d = width // n_heads\nanswer = s ** (d / (d - 2))", "alone"),
            Mistake("d = width // n_heads\nanswer = base * s ** ((d - 2) / d)", "inverted"),
        ),
    ),
)
