"""A bad shard (``AUTOCAST_DEMO_SHARD``, ``autocast_demo_shard``) stops a real build of
tests/roots/test-environments at its setting, before anything runs. The rules of result sets,
shards and scoped records, on made-up results, are tests/unit/test_across_environments.py."""

from __future__ import annotations

from conftest import copy_root, sphinx_build


def test_a_bad_shard_stops_the_build_at_its_setting_before_anything_runs(tmp_path_factory):
    src = copy_root("environments", tmp_path_factory)
    by_env = sphinx_build(src, src / "_build", env={"AUTOCAST_DEMO_SHARD": "3/2"})
    assert by_env.returncode == 2
    assert "AUTOCAST_DEMO_SHARD: '3/2' is not a shard: write i/n with 1 <= i <= n" in by_env.stderr
    with open(src / "conf.py", "a", encoding="utf-8") as conf:
        conf.write('autocast_demo_shard = "0/2"\n')
    line = len((src / "conf.py").read_text().splitlines())
    in_conf = sphinx_build(src, src / "_build")
    assert in_conf.returncode == 2
    assert f"conf.py:{line}: autocast_demo_shard: '0/2' is not a shard" in in_conf.stderr
    assert not (src / "_build" / "index.html").exists()
