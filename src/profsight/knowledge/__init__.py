"""Domain knowledge: every profiler-specific string lives here, as named constants and tables."""
