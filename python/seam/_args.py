"""The package's arguments checked before they reach the native module, as
the command line checks its flags: each refusal is a :class:`BadInput`
naming the argument."""
from __future__ import annotations

import math
import os

from ._errors import BadInput


def text(name: str, value: object) -> str:
    """A str the native module can take: UTF-8 throughout (a lone surrogate,
    as ``os.fsdecode`` makes of a byte that is not UTF-8, is refused)."""
    if not isinstance(value, str):
        raise BadInput(f"{name} must be a str, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise BadInput(f"{name}={value!r} is not UTF-8 text: it holds the lone surrogate {value[e.start]!r} at "
                       f"index {e.start}") from None
    return value


def path(name: str, value: object) -> bytes:
    """A file path as the bytes the system names it by: a str (a lone
    surrogate is the byte os.fsdecode made it from), bytes or a path-like."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, (str, bytes)):
        raise BadInput(f"{name} must be a path (str or os.PathLike), not {type(value).__name__}")
    try:
        raw = os.fsencode(value)
    except UnicodeEncodeError as e:
        raise BadInput(f"{name}={value!r} is not a path this system can name: it holds {value[e.start]!r} at index "
                       f"{e.start}") from None
    if not raw:
        raise BadInput(f"{name} is empty")
    if b"\0" in raw:
        raise BadInput(f"{name}={value!r} holds a NUL byte")
    return raw


def integer(name: str, value: object, lo: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInput(f"{name} must be an int, not {type(value).__name__}")
    if value < lo or value > 1 << 30:
        raise BadInput(f"{name}={value} must be at least {lo}" if value < lo else f"{name}={value} is too large")
    return value


def _number(name: str, value: object, unit: str) -> float:
    """A number of `unit`s as a float (an int too large for one is an
    infinity); the native module refuses NaN, an infinity, zero or less,
    and more than a day, as the command line does."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadInput(f"{name} must be a number of {unit}, not {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        return math.inf


def seconds(name: str, value: object) -> float:
    """A number of seconds."""
    return _number(name, value, "seconds")


def millis(name: str, value: object) -> float:
    """A number of milliseconds."""
    return _number(name, value, "milliseconds")


def strings(name: str, values: object) -> list[str]:
    """A command line: a list (or tuple) of str, each UTF-8."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
        raise BadInput(f"{name} is a command line as a list of strings, not {type(values).__name__}")
    return [text(f"{name}[{i}]", v) for i, v in enumerate(values)]
