"""Teaching helpers for the notebooks: toy models, similarity measures, a shipped pretrained table, slider curves.

None of this is a positional scheme. It sits above the scheme layer (``poslib/*.py``), which
imports nothing from here (tests/test_layers.py checks it)::

    toy             one-layer attention models for notebooks 01–03 (offset copy, word order)
    toy_contextual  word recall and position probes for notebook 10 (CoPE, RoPE)
    similarity      cosine-similarity matrices of position tables and their offset profiles
    pretrained      MiniLM's learned position table, read offline with its provenance
    entropy         attention entropy against the number of keys (notebook 06's slider; notebook 00 over seeds)
    sinks           how much of a row a learned attention sink takes, over row lengths and seeds (notebook 09)
"""

from . import entropy, pretrained, similarity, sinks, toy, toy_contextual
from .entropy import attention_entropy_vs_length

__all__ = ["attention_entropy_vs_length", "entropy", "pretrained", "similarity", "sinks", "toy", "toy_contextual"]
