"""seam's errors as Python exceptions.

Every failure seam reports carries a *kind* and a message that says what is
wrong and what would work instead. The kinds are those of seam's exit codes:

=====================  ===================  ====  ============================
kind                   class                exit  what it means
=====================  ===================  ====  ============================
``invalid-argument``   :class:`BadInput`    2     a size or value that cannot work
``unsupported``        :class:`BadInput`    2     a combination the binder rejects
``malformed``          :class:`BadInput`    2     a file that does not parse
``failed-check``       :class:`CheckFailed` 1     a plan breaks an invariant, or a
                                                  run disagrees with its reference
``deadline-exceeded``  :class:`Deadline`    3     a rank did not reach a collective
``internal``           :class:`InternalError` 4   a bug in seam
=====================  ===================  ====  ============================

``BadInput`` is also a ``ValueError`` and ``Deadline`` a ``TimeoutError``,
so code that already catches those keeps working.
"""
from __future__ import annotations


class Error(Exception):
    """A failure seam reports: ``kind``, ``message``, and for a binder
    rejection the ``stage`` and ``rule`` it breaks (both ``None`` for any
    other failure)."""

    kind: str = "internal"
    exit_status: int = 4

    stage: int | None
    rule: str | None

    def __init__(self, message: str, *, kind: str | None = None, stage: int | None = None,
                 rule: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if kind is not None:
            self.kind = kind
        self.stage = stage
        self.rule = rule


class BadInput(Error, ValueError):
    """Bad input: a value, size, combination or file seam cannot take."""

    kind = "invalid-argument"
    exit_status = 2


class CheckFailed(Error):
    """A failed check: a plan that breaks an invariant, or a run whose output
    differs from its reference. ``violations`` lists what broke, when known."""

    kind = "failed-check"
    exit_status = 1

    def __init__(self, message: str, *, violations: list[str] | None = None, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.violations = list(violations or [])


class Deadline(Error, TimeoutError):
    """A rank did not reach a collective within the run's timeout."""

    kind = "deadline-exceeded"
    exit_status = 3


class InternalError(Error, RuntimeError):
    """A bug in seam (a broken internal invariant), never a user mistake."""

    kind = "internal"
    exit_status = 4


_CLASSES: dict[str, type[Error]] = {
    "invalid-argument": BadInput,
    "unsupported": BadInput,
    "malformed": BadInput,
    "failed-check": CheckFailed,
    "deadline-exceeded": Deadline,
    "internal": InternalError,
}


def from_native(kind: str, message: str, stage: int, rule: str) -> Error:
    """The exception for an error of the native module (called from C++)."""
    return _CLASSES.get(kind, InternalError)(message, kind=kind, stage=None if stage < 0 else stage,
                                             rule=rule or None)
