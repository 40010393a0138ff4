"""Renderers: the only code that formats output. Each takes model objects, returns text."""
