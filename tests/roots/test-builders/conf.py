extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
project = "builders"
# What this root tests is how each builder writes the results, not what a backend does: the
# faster aot_eager.
autocast_demo_backend = "aot_eager"
# What EPUB asks of every project, so that each builder runs with -W.
version = "1"
copyright = "2026, the tests"
