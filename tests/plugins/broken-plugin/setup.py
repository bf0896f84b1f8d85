"""v2s-broken-plugin: a deliberately broken v2s-harness plugin, used by the integration tests.

Each entry point fails in its own way; `harness list` must keep working and show all four under
"Failed plugins".
"""

from setuptools import setup

setup(
    name="v2s-broken-plugin",
    version="0.1.0",
    description="Deliberately broken v2s-harness plugins (test fixture; do not use).",
    python_requires=">=3.10",
    packages=["v2s_broken_plugin"],
    entry_points={
        "harness": [
            "broken-import = v2s_broken_plugin.broken_import",
            "broken-register = v2s_broken_plugin.broken_register",
            "broken-type = v2s_broken_plugin.broken_type",
            "broken-hookname = v2s_broken_plugin.broken_hookname",
        ],
    },
)
