"""Deliberately broken plugins: one module per way a plugin can fail."""
