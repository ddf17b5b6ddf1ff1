"""Names shared by the command and Python: a setting's flag (``--step-size``) and its keyword
argument (``step_size``; a Python keyword gets a trailing underscore: ``--lambda`` is
``lambda_``), and the library's messages reworded with keyword arguments."""

from __future__ import annotations

import keyword
import re

_FLAG = re.compile(r"--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")


def keyword_name(flag: str) -> str:
    """The keyword argument that sets ``--flag``."""
    name = flag.replace("-", "_")
    return name + "_" if keyword.iskeyword(name) else name


def flag_name(key: str) -> str:
    """The flag a keyword argument sets (the inverse of :func:`keyword_name`)."""
    if key.endswith("_") and keyword.iskeyword(key[:-1]):
        key = key[:-1]
    return key.replace("_", "-")


def field_name(flag: str) -> str:
    """The setting's name in the run's JSON (``step_size``, ``lambda``)."""
    return flag.replace("-", "_")


def pythonic(message: str) -> str:
    """The library's message with its flags as the keyword arguments that set them
    (``--step-size`` → ``step_size``, ``--lambda`` → ``lambda_``)."""
    return _FLAG.sub(lambda m: keyword_name(m.group(1)), message)
