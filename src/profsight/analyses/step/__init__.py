"""analyses/step."""
