"""Samplers as small settings objects, one class per `tallmc sample` subcommand, built from the
command's own flag definitions: the same names (``step-size`` is ``step_size``), defaults and
validation. ``tallmc.HmcEcs(subsample=1000, blocks=100)`` is ``tallmc sample hmc-ecs
--subsample 1000 --blocks 100``; a switch (``--cv``) is a boolean (``cv=True``); an unknown
setting is a ``TypeError`` and a bad value a ``ValueError`` with the command's message.
``help(tallmc.HmcEcs)`` lists every setting with its default.
"""

from __future__ import annotations

import inspect
import keyword

from . import _tallmc

# Flags that belong to the model, the data, the run or the output, set by the model objects and
# by `tallmc.sample`, not by a sampler's settings.
_RUN_FLAGS = {
    "model", "data", "y-npy", "intercept", "standardize", "prior-sd", "prior-mean", "sigma",
    "chains", "warmup", "draws", "seed", "out", "init", "threads", "no-progress", "no-report",
}


def keyword_name(flag: str) -> str:
    """The keyword argument that sets ``--flag``: dashes become underscores, and a Python
    keyword gets a trailing underscore (``--step-size`` → ``step_size``, ``--lambda`` →
    ``lambda_``)."""
    name = flag.replace("-", "_")
    return name + "_" if keyword.iskeyword(name) else name


def _flag_name(key: str) -> str:
    """The flag a keyword argument sets (the inverse of :func:`keyword_name`)."""
    if key.endswith("_") and keyword.iskeyword(key[:-1]):
        key = key[:-1]
    return key.replace("_", "-")


class Sampler:
    """Settings of one sampler; pass it to :func:`tallmc.sample`."""

    #: The command's subcommand name (``hmc-ecs``).
    command: str = ""
    #: The sampler's own flags: name → dict(help, default, takes_value, choices).
    flag_info: dict = {}

    def __init__(self, **settings):
        unknown = [k for k in settings
                   if _flag_name(k) not in self.flag_info or keyword_name(_flag_name(k)) != k]
        if unknown:
            known = ", ".join(keyword_name(f) for f in self.flag_info) or "none"
            raise TypeError(
                f"{type(self).__name__}() got unexpected setting(s) {', '.join(unknown)}; "
                f"its settings are: {known}")
        self.settings = {k: v for k, v in settings.items() if v is not None}
        # Parse the flags as the command would, now: a bad value fails here, not at sampling.
        try:
            _tallmc.check_arguments(
                ["sample", self.command, "--model", "logistic", "--data", "-", "--out", "-"]
                + self.flags())
        except ValueError as e:
            from ._sample import pythonic
            raise ValueError(f"{type(self).__name__}: {pythonic(str(e))}") from None

    def flags(self) -> list[str]:
        """The command-line flags of these settings."""
        out = []
        for key, value in self.settings.items():
            flag = "--" + _flag_name(key)
            info = self.flag_info[_flag_name(key)]
            if not info["takes_value"]:
                if not isinstance(value, bool):
                    raise TypeError(f"{key} = {value!r}: expected True or False (a switch)")
                if value:
                    out.append(flag)
            elif isinstance(value, bool):
                raise TypeError(f"{key} = {value!r}: expected a value, not a boolean")
            else:
                out += [flag, str(value)]
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.settings.items())
        return f"{type(self).__name__}({args})"


def _class_name(command: str) -> str:
    return "".join(part.capitalize() for part in command.split("-"))


def _doc(command: str, flags: dict) -> str:
    lines = [f"Settings of ``tallmc sample {command}`` (see ``tallmc sample {command} --help``).",
             "", "Settings (keyword arguments; None or omitted means the default):", ""]
    for name, info in flags.items():
        default = info["default"]
        kind = "switch (bool)" if not info["takes_value"] else (
            "one of " + ", ".join(info["choices"]) if info["choices"] else "value")
        shown = f" [default: {default}]" if default is not None else ""
        lines.append(f"* ``{keyword_name(name)}``: {kind}{shown}. {info['help']}")
    return "\n".join(lines)


def _signature(flags: dict) -> inspect.Signature:
    """Keyword-only parameters named after the flags, defaulting to None (the command's
    default), so that ``inspect.signature``, ``help`` and notebooks' completion show them."""
    return inspect.Signature([
        inspect.Parameter(keyword_name(name), inspect.Parameter.KEYWORD_ONLY, default=None,
                          annotation=bool if not info["takes_value"] else inspect.Parameter.empty)
        for name, info in flags.items()
    ])


def _make_classes() -> dict:
    classes = {}
    for command in _tallmc.sampler_names():
        flags = {f["name"]: f for f in _tallmc.sampler_flags(command)
                 if f["name"] not in _RUN_FLAGS}
        name = _class_name(command)
        classes[name] = type(name, (Sampler,), {
            "command": command,
            "flag_info": flags,
            "__doc__": _doc(command, flags),
            "__module__": "tallmc",
            "__signature__": _signature(flags),
        })
    return classes


SAMPLERS = _make_classes()
