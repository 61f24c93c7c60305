"""options.py, config.py, sphinxconf.py and conflines.py without a build: the option table read
into values (and described on the reference page, docs/_ext/autocast_reference.py), the conf.py
values validated, the number rules at their bounds, and the messages that name what to fix."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import sphinx.locale
from fakes import Loud
from sphinx.errors import ConfigError

from sphinx_autocast_demo.core import config, conflines, sphinxconf
from sphinx_autocast_demo.core.config import PREFIX
from sphinx_autocast_demo.core.i18n import CATALOG
from sphinx_autocast_demo.core.model import Location
from sphinx_autocast_demo.read import directives, options
from sphinx_autocast_demo.read.syntax import SyntaxProblem

DEMO = options.named(options.DEMO)
DOCS = Path(__file__).parents[2] / "docs"


class Conf(dict):
    """What Sphinx's Config is to validate(): values by name, and the ``-D`` overrides."""

    def __init__(self, overrides: dict[str, str], **values: object) -> None:
        super().__init__({PREFIX + o.name: o.default for o in config.OPTIONS})
        self.update({PREFIX + name: value for name, value in values.items()})
        self.overrides = overrides


def settings(**values: object) -> config.Settings:
    return config.settings(Conf({}, **values))  # type: ignore[arg-type]


@pytest.fixture
def no_env(monkeypatch):
    for name in ("AUTOCAST_DEMO_EXECUTE", "AUTOCAST_DEMO_SHARD"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def validate(tmp_path, conf_py: str, overrides: dict[str, str] | None = None, **values: object) -> Conf:
    (tmp_path / "conf.py").write_text(conf_py, encoding="utf-8")
    conf = Conf(overrides or {}, **values)
    sphinxconf.validate(SimpleNamespace(confdir=str(tmp_path), config=conf), conf)  # type: ignore[arg-type]
    return conf


# -- options.py: one table, read ------------------------------------------------------------------

def test_an_option_left_out_takes_its_conf_value_or_its_own_default(no_env):
    conf = settings(backend="eager", timeout=7)
    assert options.read(DEMO["backend"], {}, conf) == "eager"
    assert options.read(DEMO["backend"], {"backend": "aot_eager"}, conf) == "aot_eager"
    assert options.read(DEMO["timeout"], {}, conf) == 7.0
    assert options.read(DEMO["timeout"], {"timeout": "2.5"}, conf) == 2.5
    assert options.read(DEMO["show"], {}, conf) == "table"  # its own default: it mirrors nothing
    assert options.read(DEMO["caption"], {}, conf) == ""
    assert options.read(DEMO["alike"], {"alike": None}, conf) is True  # a flag: given or not
    assert options.read(DEMO["alike"], {}, conf) is False
    assert options.read(DEMO["dtype"], {}, conf, default="float16") == "float16"  # the caller's


def test_a_choice_not_known_names_the_choices_and_the_closest(no_env):
    conf = settings()
    with pytest.raises(SyntaxProblem) as info:
        options.read(DEMO["backend"], {"backend": "inducto"}, conf)
    assert str(info.value) == (":backend: 'inducto' is not known (did you mean inductor?); choose one "
                               "of aot_eager, inductor, eager")
    # The conf value's "" (unset: the device's default) is no choice for the option.
    with pytest.raises(SyntaxProblem, match=r"choose one of bfloat16, float16, float32$"):
        options.read(DEMO["dtype"], {"dtype": "float64"}, conf)


@pytest.mark.parametrize(("name", "raw", "message"), [
    ("timeout", "0", ":timeout: '0' must be a number of seconds > 0 and at most 86400 (24 h); "
     "leave the option out to use autocast_demo_timeout (120 s)"),
    ("timeout", "soon", ":timeout: 'soon' must be a number of seconds > 0"),
    ("timeout", "inf", ":timeout: 'inf' must be a number of seconds > 0"),
    # Only the timeout names the conf value its demo gets without the option.
    ("grad-tolerance", "-1", ":grad-tolerance: '-1' must be a finite number >= 0 (0: bitwise equal)"),
])
def test_a_bad_number_says_the_rule(no_env, name, raw, message):
    with pytest.raises(SyntaxProblem) as info:
        options.read(DEMO[name], {name: raw}, settings())
    assert str(info.value).startswith(message)
    assert ("leave the option out" in str(info.value)) == (name == "timeout")


def test_the_reference_shows_each_options_syntax_and_default():
    assert DEMO["backend"].shown_syntax == "``aot_eager``, ``inductor``, ``eager``"
    assert DEMO["backend"].shown_default == "``autocast_demo_backend``"
    assert DEMO["show"].shown_syntax == "``table``, ``record``, ``outputs``"
    assert DEMO["show"].shown_default == "``table``"
    assert DEMO["name"].shown_default == "``autocast-demo-N``"
    assert DEMO["caption"].conf is None and DEMO["caption"].rule == ""
    assert options.named(options.SETUP)["show"].kind == "flag"
    assert set(options.DIRECTIVES) == {"autocast-demo", "autocast-demo-setup", "autocast-demo-summary"}



def test_reference_descriptions_follow_the_code():
    path = DOCS / "_ext" / "autocast_reference.py"
    spec = importlib.util.spec_from_file_location("autocast_reference", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["autocast_reference"] = module
    spec.loader.exec_module(module)
    # The directives read their options from the table the page lists: one declaration.
    assert directives.AutocastDemo.known == tuple(o.name for o in options.DIRECTIVES["autocast-demo"])
    assert directives.AutocastDemoSetup.known == tuple(
        o.name for o in options.DIRECTIVES["autocast-demo-setup"])
    for directive in options.DIRECTIVES:
        assert all(all(cell.strip() for cell in row) for row in module.rows(directive)), directive
    # An option that mirrors a conf value takes its default, choices and rule from it.
    mirrored = {o.name: o for o in options.DEMO if o.mirrors}
    assert len(mirrored) == 8
    assert all(o.conf is not None for o in mirrored.values())
    assert mirrored["backend"].allowed == config.BACKENDS
    assert mirrored["dtype"].allowed == config.DTYPES  # without the conf value's "" (unset)
    assert mirrored["timeout"].rule == config.TIMEOUT_RULE
    assert module.rows("autocast-demo")[5][1:3] == [
        "``aot_eager``, ``inductor``, ``eager``", "``autocast_demo_backend``"]


# -- config.py: settings as a build uses them -----------------------------------------------------

def test_execution_modes_say_what_a_build_may_do():
    assert config.Execution.of("auto") == config.Execution("auto", runs=True, reuses=True)
    assert config.Execution.of("force") == config.Execution("force", runs=True, reuses=False)
    assert config.Execution.of("never") == config.Execution("never", runs=False, reuses=True)


def test_settings_are_normalised_and_the_dtype_follows_the_device(no_env):
    found = settings(device="cuda", timeout=5, values=["off"], fail_on_mismatch=0)
    # The dtype as conf.py gives it: "" names none, and each demo's is filled in for its device.
    assert found.dtype == "" and settings(device="cuda", dtype="float32").dtype == "float32"
    assert config.autocast_dtype(found, "cuda") == ("float16", "device")
    assert config.autocast_dtype(found, "cpu") == ("bfloat16", "device")
    assert isinstance(found.timeout, float) and found.timeout == 5.0
    assert found.values == ("off",) and found.fail_on_mismatch is False
    assert found.execution.runs  # "auto"


def test_the_autocast_dtype_is_the_demos_then_conf_pys_for_its_device_then_the_devices(no_env):
    named = settings(device="cpu", dtype="float16")
    assert config.autocast_dtype(named, "cpu", "float32") == ("float32", "demo")
    assert config.autocast_dtype(named, "cpu") == ("float16", "conf")
    # conf.py's dtype is for its device: a CUDA demo casts as its readers' torch.autocast("cuda").
    assert config.autocast_dtype(settings(device="cpu", dtype="bfloat16"), "cuda") == (
        "float16", "device")
    assert config.autocast_dtype(settings(device="cuda", dtype="bfloat16"), "cuda") == (
        "bfloat16", "conf")
    assert config.autocast_dtype(settings(), "cuda", "bfloat16") == ("bfloat16", "demo")


def test_the_environment_variables_win_over_conf_py(no_env):
    no_env.setenv("AUTOCAST_DEMO_EXECUTE", "never")
    no_env.setenv("AUTOCAST_DEMO_SHARD", "2/3")
    found = settings(execute="force", shard="1/3")
    assert (found.execute, found.shard, found.execution.runs) == ("never", "2/3", False)
    no_env.setenv("AUTOCAST_DEMO_EXECUTE", "")  # set but empty: conf.py's
    assert settings(execute="force").execution == config.Execution.of("force")



def test_number_rules_at_their_bounds():
    timeout, tolerance = config.TIMEOUT_RULE, config.TOLERANCE_RULE
    assert not config.number_problem(timeout, 86400) and not config.number_problem(timeout, 0.5)
    assert config.number_problem(timeout, 86400.5) and config.number_problem(timeout, 0)
    assert config.number_problem(timeout, 10**400)  # too large for a float
    assert not config.number_problem(tolerance, 0) and not config.number_problem(tolerance, 1e9)
    assert config.number_problem(tolerance, -1e-300) and config.number_problem(tolerance, float("nan"))
    keep = config.KEEP_RULE  # 0 is allowed: no worker is kept; -1 (the default): a terminal's
    assert not config.number_problem(keep, 0) and not config.number_problem(keep, 86400)
    assert not config.number_problem(keep, -1) and not config.number_problem(keep, -1.0)
    assert config.number_problem(keep, -2) and config.number_problem(keep, -0.5)
    assert config.number_problem(keep, 86400.5) and config.number_problem(keep, float("inf"))


# -- sphinxconf.py: validation names the line to fix --------------------------------------------

CONF_PY = "import os\nextensions = ['sphinx_autocast_demo']\nautocast_demo_timeout = 'slow'\n"


@pytest.mark.parametrize(("values", "message"), [
    ({"timeout": "slow"}, "conf.py:3: autocast_demo_timeout = 'slow' must be of type int or float "
     "(default 120.0)"),
    ({"timeout": 0}, "conf.py:3: autocast_demo_timeout = 0 must be a number of seconds > 0 and at "
     "most 86400 (24 h) (default 120.0)"),
    # Not assigned in conf.py: where to look.
    ({"jobs": True}, "conf.py (or sphinx-build -D): autocast_demo_jobs = True must be of type int "
     "(default 0)"),
    ({"device": "tpu"}, "conf.py (or sphinx-build -D): autocast_demo_device = 'tpu'; choose one of "
     "'cpu', 'cuda'"),
])
def test_a_bad_conf_value_names_its_line_and_what_it_must_be(tmp_path, no_env, values, message):
    with pytest.raises(ConfigError) as info:
        validate(tmp_path, CONF_PY, **values)
    assert str(info.value) == os.path.join(str(tmp_path), message)


def test_a_number_given_with_dash_d_is_read_as_a_number(tmp_path, no_env):
    over = {PREFIX + "timeout": "2.5", PREFIX + "output_tolerance": "1e-2"}
    conf = validate(tmp_path, CONF_PY, over, timeout="2.5", output_tolerance="1e-2")
    assert conf[PREFIX + "timeout"] == 2.5 and conf[PREFIX + "output_tolerance"] == 0.01
    with pytest.raises(ConfigError) as info:
        validate(tmp_path, CONF_PY, {PREFIX + "timeout": "fast"}, timeout="fast")
    assert str(info.value) == ("sphinx-build -D autocast_demo_timeout='fast': not a number; it must "
                               "be a number of seconds > 0 and at most 86400 (24 h) (default 120.0)")
    # A -D value wins over conf.py's line: the message names the -D option.
    said = r"^sphinx-build -D autocast_demo_timeout: autocast_demo_timeout = -1\.0 must be"
    with pytest.raises(ConfigError, match=said):
        validate(tmp_path, CONF_PY, {PREFIX + "timeout": "-1"}, timeout="-1")
    # Sphinx calls a number's default for its value, and takes -D text for it as typed.
    assert sphinxconf.NumberDefault(1.5)(None) == 1.5 and repr(sphinxconf.NumberDefault(1.5)) == "1.5"  # type: ignore[arg-type]


def test_a_bad_shard_or_mode_names_the_variable_or_the_line(tmp_path, no_env):
    conf_py = "autocast_demo_shard = '0/1'\n"
    with pytest.raises(ConfigError) as info:
        validate(tmp_path, conf_py, shard="0/1")
    assert str(info.value).startswith(f"{tmp_path / 'conf.py'}:1: autocast_demo_shard: '0/1' is not a shard")
    no_env.setenv("AUTOCAST_DEMO_SHARD", "3/2")
    with pytest.raises(ConfigError, match=r"^AUTOCAST_DEMO_SHARD: '3/2' is not a shard"):
        validate(tmp_path, conf_py, shard="1/1")
    # Said in the console's language, as the other messages (was English inside a template).
    no_env.setitem(sphinx.locale.translators, ("console", CATALOG), Loud())
    with pytest.raises(ConfigError, match=r"^AUTOCAST_DEMO_SHARD: '3/2' IS NOT A SHARD: WRITE I/N"):
        validate(tmp_path, conf_py, shard="1/1")
    no_env.setenv("AUTOCAST_DEMO_SHARD", "1/999999")
    with pytest.raises(ConfigError, match=r"'1/999999' SPLITS THE DEMOS INTO MORE THAN \d+ SHARDS"):
        validate(tmp_path, conf_py, shard="1/1")
    no_env.delitem(sphinx.locale.translators, ("console", CATALOG))
    no_env.delenv("AUTOCAST_DEMO_SHARD")
    no_env.setenv("AUTOCAST_DEMO_EXECUTE", "sometimes")
    with pytest.raises(ConfigError) as info:
        validate(tmp_path, "")
    assert str(info.value) == "AUTOCAST_DEMO_EXECUTE='sometimes'; choose one of auto, force, never"


def test_the_conf_line_of_a_setting(tmp_path):
    (tmp_path / "conf.py").write_text(
        "import os\nextensions = ['sphinx_autocast_demo']\n# autocast_demo_timeout = 1\n"
        "autocast_demo_timeouts = 2\n  autocast_demo_timeout = 3\n", encoding="utf-8")
    path = str(tmp_path / "conf.py")
    assert conflines.conf_assignment(str(tmp_path), PREFIX + "timeout") == Location(path, 5)
    assert conflines.conf_assignment(str(tmp_path), PREFIX) == Location(path, 4)  # any of ours
    # Not assigned: the line that loads the extension; without it, the first line.
    assert conflines.conf_line(str(tmp_path), PREFIX + "budget") == Location(path, 2)
    (tmp_path / "conf.py").write_text("project = 'x'\n", encoding="utf-8")
    assert conflines.conf_line(str(tmp_path), PREFIX + "budget") == Location(path, 1)
    gone = tmp_path / "none"
    assert str(conflines.conf_line(str(gone), PREFIX + "budget")) == str(gone / "conf.py")
