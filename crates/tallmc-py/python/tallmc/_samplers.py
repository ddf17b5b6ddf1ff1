"""Samplers as small settings objects, one class per `tallmc sample` subcommand, built from the
command's own flag definitions: the same names (``step-size`` is ``step_size``), defaults and
validation. ``tallmc.HmcEcs(subsample=1000, blocks=100)`` is ``tallmc sample hmc-ecs
--subsample 1000 --blocks 100``; a switch (``--cv``) is a boolean (``cv=True``); an unknown
setting is a ``TypeError`` and a bad value a ``ValueError`` with the command's message.
``help(tallmc.HmcEcs)`` lists every setting with its default.
"""

from __future__ import annotations

from . import _tallmc

# Flags that belong to the model, the data, the run or the output, set by the model objects and
# by `tallmc.sample`, not by a sampler's settings.
_RUN_FLAGS = {
    "model", "data", "y-npy", "intercept", "standardize", "prior-sd", "prior-mean", "sigma",
    "chains", "warmup", "draws", "seed", "out", "init", "threads", "no-progress", "no-report",
}


class Sampler:
    """Settings of one sampler; pass it to :func:`tallmc.sample`."""

    #: The command's subcommand name (``hmc-ecs``).
    command: str = ""
    #: The sampler's own flags: name → dict(help, default, takes_value, choices).
    flag_info: dict = {}

    def __init__(self, **settings):
        unknown = [k for k in settings if k.replace("_", "-") not in self.flag_info]
        if unknown:
            known = ", ".join(f.replace("-", "_") for f in self.flag_info) or "none"
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
            flag = "--" + key.replace("_", "-")
            info = self.flag_info[key.replace("_", "-")]
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
        lines.append(f"* ``{name.replace('-', '_')}``: {kind}{shown}. {info['help']}")
    return "\n".join(lines)


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
        })
    return classes


SAMPLERS = _make_classes()
