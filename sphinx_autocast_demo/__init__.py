"""Sphinx extension: run torch.compile + autocast snippets under every backward_pass_autocast
value at build time, check them against eager, and fail the build when the docs drift."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    from . import accept, builder, config, directives, events, render, report, state

    config.register(app)
    app.connect("config-inited", config.validate)
    app.add_node(directives.results_placeholder)
    app.add_directive("autocast-demo", directives.AutocastDemo)
    app.add_directive("autocast-demo-setup", directives.AutocastDemoSetup)
    app.connect("env-purge-doc", state.purge)
    app.connect("env-merge-info", state.merge)
    app.connect("env-get-outdated", events.outdated)
    app.connect("env-before-read-docs", events.before_read)
    app.connect("env-updated", events.execute_all)
    app.connect("doctree-resolved", render.resolve)
    app.connect("build-finished", events.finish)
    app.connect("config-inited", accept.validate)
    app.connect("build-finished", accept.finish, priority=900)  # after the summary's status
    app.add_builder(builder.AutocastCheckBuilder)
    app.connect("builder-inited", report.show_warning_types)
    app.add_css_file("autocast_demo.css")
    app.connect("builder-inited", events.add_static_path)
    app.setup_extension("sphinx_autocast_demo.summary")
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 1}


STATIC = Path(__file__).parent / "static"
