"""Fails at import, as a plugin whose dependency is missing does."""

raise ImportError("v2s_broken_plugin.broken_import needs 'a-package-that-is-not-installed'")
