"""A plugin whose import fails, as when its dependency is not installed."""

raise ImportError("fake plugin needs 'a-missing-dependency'")
