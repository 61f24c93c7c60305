"""Results under pydata-sphinx-theme, furo and alabaster; sphinx-design tabs and their fallback."""

from __future__ import annotations

import pytest
from conftest import copy_root, sphinx_build, verdicts

MATCH = "\u2713 matches eager"
THEMES = {  # theme -> extensions (alabaster without sphinx-design: the plain fallback)
    "pydata_sphinx_theme": "sphinx_autocast_demo,sphinx_design",
    "furo": "sphinx_autocast_demo,sphinx_design",
    "alabaster": "sphinx_autocast_demo",
}


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    src = copy_root("themes", tmp_path_factory)
    cache = tmp_path_factory.mktemp("cache")  # torch runs in the first build only
    return {
        theme: sphinx_build(src, src / "_build" / theme, "-D", f"html_theme={theme}",
                            "-D", f"extensions={extensions}", "-D", f"autocast_demo_cache_dir={cache}")
        for theme, extensions in THEMES.items()
    }


@pytest.mark.parametrize("theme", THEMES)
def test_results_table_renders_under_each_theme(builds, theme):
    build = builds[theme]
    assert build.returncode == 0, build.stderr
    assert "WARNING" not in build.stderr, build.stderr
    soup = build.html("index")
    assert verdicts(soup, "per-value") == [MATCH, MATCH]
    assert verdicts(soup, "same-everywhere") == [MATCH, MATCH]
    header = [th.get_text(strip=True) for th in soup.find(id="per-value").select("thead th")]
    # (every record holds: no "as recorded?" column of yes, the footer says it once)
    assert header == ["backward_pass_autocast", "compiled = eager?"]
    values = [tr.select_one("th strong, td strong").get_text()
              for tr in soup.find(id="per-value").select("tbody tr")]
    assert values == ["same_as_forward", "off"]
    # What html.py's visitors write through each theme's own translator (pydata-sphinx-theme's
    # is a class of its own): scoped headers, row headers, the caption, the box that scrolls.
    table = soup.find(id="per-value").find("table")
    assert [th.get("scope") for th in table.select("thead th")] == ["col"] * 2
    assert [(tr.find().name, tr.find().get("scope")) for tr in table.select("tbody tr")] == [
        ("th", "row")] * 2
    assert table.find().name == "caption" and table.caption.get_text() == (
        "Results of this demo: compiled against eager, value by value")
    assert table.find_parent(class_="autocast-demo-scroll") is not None
    assert soup.select_one('link[href*="autocast_demo.css"]') is not None
    assert (build.out / "_static" / "autocast_demo.css").exists()


def test_only_the_first_build_ran_torch(builds):
    first, *rest = builds.values()
    assert first.runs() == (8, 0)
    assert all(b.runs() == (0, 4) for b in rest)


@pytest.mark.parametrize("theme", ["pydata_sphinx_theme", "furo"])
def test_printed_output_goes_in_tabs_synchronised_by_value(builds, theme):
    soup = builds[theme].html("index")
    tabs = soup.find(id="per-value").select(".sd-tab-set")
    assert len(tabs) == 1
    labels = tabs[0].select("label.sd-tab-label")
    assert [label.get_text(strip=True) for label in labels] == ["same_as_forward", "off"]
    assert [label["data-sync-id"] for label in labels] == ["same_as_forward", "off"]
    assert {label["data-sync-group"] for label in labels} == {"autocast-demo-value"}
    inputs = tabs[0].select("input[type=radio]")
    assert [i["id"] for i in inputs] == [label["for"] for label in labels]
    assert len({i["name"] for i in inputs}) == 1 and inputs[0].has_attr("checked")
    panels = tabs[0].select(".sd-tab-content pre")
    assert [p.get_text().strip() for p in panels] == ["same_as_forward", "off"]
    # Input, label, content as siblings: what sphinx-design's CSS selectors expect.
    kinds = [c.name for c in tabs[0].children if c.name]
    assert kinds == ["input", "label", "div"] * 2
    # The same output under every value needs no tabs.
    assert not soup.find(id="same-everywhere").select(".sd-tab-set")
    assert soup.select_one('script[src*="design-tabs.js"]') is not None  # the sync script


def test_without_sphinx_design_each_value_gets_a_plain_block(builds):
    soup = builds["alabaster"].html("index")
    assert not soup.select(".sd-tab-set")
    boxes = soup.find(id="per-value").select(".autocast-demo-output")
    assert [b.select_one("pre").get_text().strip() for b in boxes] == ["same_as_forward", "off"]
    assert "Printed under off:" in boxes[1].get_text()
