"""The knob table (seam/knobs.h) in the package: plan and run take each knob
as a keyword with the table's default, Config holds each as a field, and
every knob set away from its default survives the keywords, the plan's JSON
and its text form."""
import dataclasses
import inspect
import itertools

import pytest

import seam
from seam import _seam

MODEL = "deepseek-v2-lite"  # attention, dense and MoE layers: every knob binds on it
LAYERS = 4


def test_plan_and_run_take_every_knob_as_a_keyword_with_its_default():
    for function in (seam.plan, seam.run):
        parameters = inspect.signature(function).parameters
        for knob in _seam.knobs():
            p = parameters.get(knob["name"])
            assert p is not None, f"seam.{function.__name__} has no keyword {knob['name']}"
            assert p.kind is inspect.Parameter.KEYWORD_ONLY, knob["name"]
            assert p.default == knob["default"] and type(p.default) is type(knob["default"]), knob["name"]


def test_config_has_a_field_for_every_knob_and_no_other():
    assert {f.name for f in dataclasses.fields(seam.Config)} == {k["json"] for k in _seam.knobs()}


def _samples(knob):
    """Values other than the knob's default: small counts, the switch on,
    each other name of an enum, a split of the model's layers."""
    kind = knob["kind"]
    if kind == "count":
        return [1, 2, 4]
    if kind == "bool":
        return [True]
    if kind == "enum":
        return [c for c in knob["choices"] if c != knob["default"]]
    return [[1, LAYERS - 1]]


def _plan(**kw):
    try:
        return seam.plan(MODEL, layers=LAYERS, **kw)
    except seam.BadInput:
        return None


def _showing(knob, knobs):
    """A plan with the knob away from its default, and the same plan's
    configuration without it: the knob alone sets what differs."""
    others = [(o["name"], v) for o in knobs if o is not knob for v in _samples(o)]
    supports = [()] + [(a,) for a in others] + [(a, b) for a, b in itertools.combinations(others, 2) if a[0] != b[0]]
    for value in _samples(knob):
        for support in supports:
            with_it, without = _plan(**dict(support), **{knob["name"]: value}), _plan(**dict(support))
            if with_it is None or without is None:
                continue
            field = knob["json"]
            if getattr(with_it.ranks[0].config, field) != getattr(without.ranks[0].config, field):
                return with_it, value
    pytest.fail(f"no configuration of at most three knobs binds {MODEL} with {knob['name']} away from its default")


def test_every_knob_round_trips_through_the_keywords_json_and_text():
    knobs = _seam.knobs()
    for knob in knobs:
        p, value = _showing(knob, knobs)
        got = getattr(p.ranks[0].config, knob["json"])
        assert got == (tuple(value) if isinstance(value, list) else value), knob["name"]
        for back in (seam.Plan.from_json(p.to_json()), seam.Plan.from_text(p.to_text())):
            assert back == p, knob["name"]
            assert back.ranks[0].config == p.ranks[0].config, knob["name"]
