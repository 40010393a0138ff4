"""analyses/replay."""
