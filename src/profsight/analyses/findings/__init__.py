"""analyses/findings."""
