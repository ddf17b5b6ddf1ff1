"""Samplers as small settings objects, one class per sampler, generated from the definitions
the command's flags come from (the library's settings types): the same names (``--step-size``
is ``step_size``), defaults, help texts and checks. ``tallmc.HmcEcs(subsample=1000,
blocks=100)`` is ``tallmc sample hmc-ecs --subsample 1000 --blocks 100``; a switch (``--cv``)
is a boolean (``cv=True``). An unknown setting is a ``TypeError``; a bad value is a
``ValueError`` with the library's message, raised when the object is made.
``help(tallmc.HmcEcs)`` lists every setting with its default.
"""

from __future__ import annotations

import inspect
import json
import numbers

from . import _tallmc
from ._names import field_name, flag_name, keyword_name, pythonic


def _plain(key: str, value, info: dict):
    """``value`` as JSON wants it (NumPy scalars to Python numbers), its kind checked."""
    if not info["takes_value"]:
        if not isinstance(value, bool):
            raise TypeError(f"{key} = {value!r}: expected True or False (a switch)")
        return value
    if isinstance(value, bool):
        raise TypeError(f"{key} = {value!r}: expected a value, not a boolean")
    if info["choices"]:
        if value not in info["choices"]:
            raise ValueError(f"{key} = {value!r}: expected one of {', '.join(info['choices'])}")
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"{key} = {value!r}: expected a number")


class Sampler:
    """Settings of one sampler; pass it to :func:`tallmc.sample`."""

    #: The sampler's name (``hmc-ecs``): its ``tallmc sample`` subcommand.
    command: str = ""
    #: Its settings: flag name → dict(help, default, takes_value, choices, required).
    setting_info: dict = {}

    def __init__(self, **settings):
        known = {keyword_name(f): f for f in self.setting_info}
        unknown = [k for k in settings if k not in known]
        if unknown:
            names = ", ".join(known) or "none"
            raise TypeError(f"{type(self).__name__}() got unexpected setting(s) "
                            f"{', '.join(unknown)}; its settings are: {names}")
        given = {k: v for k, v in settings.items() if v is not None}
        missing = [keyword_name(f) for f, info in self.setting_info.items()
                   if info["required"] and keyword_name(f) not in given]
        if missing:
            raise TypeError(f"{type(self).__name__}() needs {', '.join(missing)} (no default)")
        self.settings = given
        self._json = {"name": self.command}
        for key, value in given.items():
            flag = known[key]
            self._json[field_name(flag)] = _plain(key, value, self.setting_info[flag])
        try:
            _tallmc.check_sampler(json.dumps(self._json))
        except ValueError as e:
            raise ValueError(f"{type(self).__name__}: {pythonic(str(e))}") from None

    def spec(self) -> dict:
        """The sampler's part of the run (the JSON form of the library's settings)."""
        return dict(self._json)

    def takes(self, keyword: str) -> bool:
        """Whether the sampler has the setting ``keyword`` (``cv_order``)."""
        return any(keyword_name(f) == keyword for f in self.setting_info)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.settings.items())
        return f"{type(self).__name__}({args})"


def _class_name(command: str) -> str:
    return "".join(part.capitalize() for part in command.split("-"))


def _doc(command: str, about: str, settings: dict) -> str:
    lines = [about.strip() or f"The ``{command}`` sampler.", "",
             f"Settings of ``tallmc sample {command}`` (keyword arguments; None or omitted "
             "means the default):", ""]
    for name, info in settings.items():
        default = info["default"]
        kind = "switch (bool)" if not info["takes_value"] else (
            "one of " + ", ".join(info["choices"]) if info["choices"] else "value")
        shown = " (required)" if info["required"] else (
            f" [default: {default}]" if default is not None else "")
        lines.append(f"* ``{keyword_name(name)}``: {kind}{shown}. {info['help']}")
    return "\n".join(lines)


def _signature(settings: dict) -> inspect.Signature:
    """Keyword-only parameters named after the settings, defaulting to None (the library's
    default) unless required, so that ``inspect.signature``, ``help`` and notebooks' completion
    show them."""
    return inspect.Signature([
        inspect.Parameter(
            keyword_name(name), inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if info["required"] else None,
            annotation=bool if not info["takes_value"] else inspect.Parameter.empty)
        for name, info in settings.items()
    ])


def _make_classes() -> dict:
    classes = {}
    for entry in _tallmc.sampler_schema():
        command = entry["name"]
        settings = {s["name"]: s for s in entry["settings"]}
        name = _class_name(command)
        classes[name] = type(name, (Sampler,), {
            "command": command,
            "setting_info": settings,
            "__doc__": _doc(command, entry["about"], settings),
            "__module__": "tallmc",
            "__signature__": _signature(settings),
        })
    return classes


SAMPLERS = _make_classes()

__all__ = ["Sampler", "SAMPLERS", "flag_name"]
