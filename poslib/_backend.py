"""One code path for NumPy and PyTorch.

Every scheme in poslib is written once, against the small set of operations
that NumPy and PyTorch spell the same way (``exp``, ``sin``, ``where``,
``arange``…). This module picks the right namespace and smooths over the few
places where the two libraries differ (dtypes, devices, conversion).

Rules the rest of the package relies on:

* ``xp_of(*arrays)`` returns the namespace of the arrays passed, and raises a
  ``TypeError`` naming the arguments when NumPy and torch are mixed.
* ``namespace(backend)`` returns the namespace for ``backend="numpy"|"torch"``,
  used by functions that build arrays from sizes.
* ``select(backend, device, **arrays)`` is the one selector for functions that take
  both: it returns ``(xp, device)``, following the arrays when ``backend`` is None.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Literal

import numpy as np
import torch

Backend = Literal["numpy", "torch"]
Array = Any  # np.ndarray | torch.Tensor

__all__ = ["Array", "Backend", "arange", "asarray", "cast", "is_torch", "namespace", "select", "to_float", "xp_of"]


def is_torch(x: Any) -> bool:
    """True when ``x`` is a ``torch.Tensor``."""
    return isinstance(x, torch.Tensor)


def namespace(backend: str) -> ModuleType:
    """The array namespace for ``backend`` ("numpy" or "torch")."""
    if backend == "numpy":
        return np
    if backend == "torch":
        return torch
    raise ValueError(f"backend must be 'numpy' or 'torch', got {backend!r}")


def xp_of(**arrays: Any) -> ModuleType:
    """The namespace shared by the named array arguments (None and Python scalars are ignored).

    Called as ``xp_of(x=x, positions=positions)`` so that the error can name the
    arguments when a NumPy array meets a torch tensor.
    """
    kinds: dict[str, str] = {}
    for name, value in arrays.items():
        if value is None or isinstance(value, (numbers.Number, range, list, tuple)):
            continue
        if is_torch(value):
            kinds[name] = "torch"
        elif isinstance(value, np.ndarray) or np.isscalar(value):
            kinds[name] = "numpy"
        else:
            raise TypeError(f"{name} must be a NumPy array or a torch tensor, got {type(value).__name__}")
    found = set(kinds.values())
    if len(found) > 1:
        detail = ", ".join(f"{n} is {k}" for n, k in kinds.items())
        raise TypeError(f"mixed NumPy and torch inputs ({detail}); convert them to one kind first")
    return torch if found == {"torch"} else np


def select(backend: str | None = None, device: Any = None, **arrays: Any) -> tuple[ModuleType, Any]:
    """``(xp, device)`` for a function that takes ``backend``/``device`` and, maybe, array parameters.

    ``backend=None`` follows the named ``arrays`` (NumPy when none is an array); an explicit
    ``backend`` must agree with them (a torch tensor cannot be made NumPy silently: it may carry
    gradients). The device is ``device`` when given, else the first torch array's; NumPy has none.
    """
    xp = xp_of(**arrays)
    if backend is not None:
        wanted = namespace(backend)
        if wanted is np and xp is torch:
            names = ", ".join(n for n, v in arrays.items() if is_torch(v))
            raise TypeError(f"backend='numpy' but {names} is a torch tensor; pass backend='torch' or None")
        xp = wanted
    if xp is np:
        if device is not None and str(device) != "cpu":
            raise ValueError(f"device must be None (or 'cpu') for the NumPy backend, got {device!r}")
        return np, None
    if device is None:
        device = next((v.device for v in arrays.values() if is_torch(v)), None)
    return torch, device


def asarray(value: Any, xp: ModuleType, *, dtype: Any = None, like: Array | None = None, device: Any = None) -> Array:
    """Convert ``value`` (array, list, range or scalar) to ``xp``, on ``device`` (or ``like``'s) when torch."""
    if xp is np:
        return np.asarray(value, dtype=dtype)
    if device is None and like is not None and is_torch(like):
        device = like.device
    if isinstance(value, range):
        value = list(value)
    if is_torch(value):
        return value.to(device=device if device is not None else value.device, dtype=dtype or value.dtype)
    return torch.as_tensor(value, dtype=dtype, device=device)


def to_float(value: Any, xp: ModuleType, *, like: Array | None = None, device: Any = None) -> Array:
    """``value`` as a float64 array of ``xp`` (on ``device``, or ``like``'s device)."""
    return asarray(value, xp, dtype=xp.float64, like=like, device=device)


def arange(n: int, xp: ModuleType, *, dtype: Any = None, device: Any = None) -> Array:
    """``0 … n-1`` in ``xp``, float64 unless ``dtype`` says otherwise."""
    dtype = xp.float64 if dtype is None else dtype
    if xp is np:
        return np.arange(n, dtype=dtype)
    return torch.arange(n, dtype=dtype, device=device)


def cast(x: Array, dtype: Any) -> Array:
    """``x`` converted to ``dtype`` (a no-op when it already has it)."""
    if dtype is None:
        return x
    return x.to(dtype) if is_torch(x) else x.astype(dtype, copy=False)


def check_positive(name: str, value: Any) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a positive finite number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")


def check_positive_int(name: str, value: Any) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a positive integer."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def check_even(name: str, value: Any) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a positive even integer."""
    check_positive_int(name, value)
    if value % 2:
        raise ValueError(f"{name} must be even (dimensions are rotated in pairs), got {value}")


def check_choice(name: str, value: Any, choices: Sequence[str]) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
