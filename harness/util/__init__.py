"""Utilities with no notion of a run: the content-addressed artifact cache (`cache`), sentence
vectors on disk (`vectors`) and the torch device a run uses (`devices`)."""
