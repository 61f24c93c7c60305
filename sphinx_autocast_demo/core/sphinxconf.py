"""The settings as Sphinx sees them: registered at ``setup``, refused at ``config-inited``.

Apart from the table (:mod:`.config`) because only the pipeline talks to Sphinx about them; the
rest of the build reads the validated :class:`~.config.Settings`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .config import EXECUTE_MODES, OPTIONS, PREFIX, Option, number_problem, parse_shard
from .conflines import conf_assignment
from .i18n import __, in_console

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config


class NumberDefault:
    """A number setting's default, given to Sphinx as a callable (which Sphinx calls for the
    value). Sphinx converts a ``-D`` value by the type of the default, and refuses a float's
    ("unsupported type, ignoring", Sphinx 7.2 to 9); a callable default's ``-D`` text comes
    through as it was typed, and :func:`validate` reads it as a number."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __call__(self, config: Config) -> float:
        return self.value

    def __repr__(self) -> str:
        return repr(self.value)


def register(app: Sphinx) -> None:
    for option in OPTIONS:
        default = NumberDefault(option.default) if float in option.types else option.default
        # No ``description=``: Sphinx 7.2 (PyTorch's pin) does not take one.
        app.add_config_value(PREFIX + option.name, default, option.rebuild, types=option.types)


def _from_command_line(config: Config, name: str) -> bool:
    """Whether ``name`` was given with ``sphinx-build -D`` (Sphinx 7.2 to 9: ``overrides``)."""
    return name in (getattr(config, "overrides", None) or {})


def _number(app: Sphinx, option: Option, text: str) -> float:
    """A number setting's ``-D`` text as the number (a float; ``inf`` and ``nan`` are left to
    the setting's rule); ConfigError, naming the ``-D`` option, if it is no number."""
    from sphinx.errors import ConfigError

    try:
        return float(text)
    except ValueError:
        given, default = repr(text), repr(option.default)
        raise ConfigError(__(
            "sphinx-build -D {option}={value}: not a number; it must be {rule} (default {default})"
        ).format(option=PREFIX + option.name, value=given, rule=in_console(option.rule),
                 default=default)) from None


def validate(app: Sphinx, config: Config) -> None:
    """``config-inited``: reject bad values with a message that names the conf.py line to fix."""
    from sphinx.errors import ConfigError

    for option in OPTIONS:
        value = config[PREFIX + option.name]
        if (isinstance(value, str) and float in option.types
                and _from_command_line(config, PREFIX + option.name)):
            # Stored as the number, before Sphinx checks the types (config-inited, priority 800).
            value = config[PREFIX + option.name] = _number(app, option, value)
        name, given, default = PREFIX + option.name, repr(value), repr(option.default)
        if not isinstance(value, option.types) or (isinstance(value, bool) and bool not in option.types):
            where, types = _where(app, option.name), " or ".join(t.__name__ for t in option.types)
            raise ConfigError(__(
                "{where}: {option} = {value} must be of type {types} (default {default})"
            ).format(where=where, option=name, value=given, types=types, default=default))
        if option.choices and value not in option.choices:
            where, choices = _where(app, option.name), ", ".join(repr(c) for c in option.choices)
            raise ConfigError(__("{where}: {option} = {value}; choose one of {choices}").format(
                where=where, option=name, value=given, choices=choices))
        if option.rule and number_problem(option.rule, value):
            where = _where(app, option.name)
            raise ConfigError(__(
                "{where}: {option} = {value} must be {rule} (default {default})"
            ).format(where=where, option=name, value=given, rule=in_console(option.rule),
                     default=default))
    shard = os.environ.get("AUTOCAST_DEMO_SHARD") or config[PREFIX + "shard"]
    if shard:

        try:
            parse_shard(shard)
        except ValueError as exc:
            where = ("AUTOCAST_DEMO_SHARD" if os.environ.get("AUTOCAST_DEMO_SHARD")
                     else f"{_where(app, 'shard')}: {PREFIX}shard")
            problem = in_console(exc.args[0])
            raise ConfigError(__("{where}: {problem}").format(where=where, problem=problem)) from None
    env_mode = os.environ.get("AUTOCAST_DEMO_EXECUTE")
    if env_mode and env_mode not in EXECUTE_MODES:
        given, choices = repr(env_mode), ", ".join(EXECUTE_MODES)
        raise ConfigError(__("{variable}={value}; choose one of {choices}").format(
            variable="AUTOCAST_DEMO_EXECUTE", value=given, choices=choices))


def _where(app: Sphinx, name: str) -> str:
    """``conf.py:LINE`` where ``name`` is assigned, or where to look (it may come from ``-D``)."""
    if _from_command_line(app.config, PREFIX + name):  # -D wins over conf.py's line
        return f"sphinx-build -D {PREFIX}{name}"
    found = conf_assignment(str(app.confdir), PREFIX + name)
    return str(found) if found else f"{os.path.join(app.confdir, 'conf.py')} (or sphinx-build -D)"

