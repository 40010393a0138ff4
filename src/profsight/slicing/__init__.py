"""slicing."""
