"""Plugin modules for tests/test_plugins.py, loaded through fake entry points.

Each module is one plugin, good or broken in one way; `EntryPoint(name=..., value=
"tests.fake_plugins.<module>", group="harness")` makes it look installed.
"""
