"""Analyses: each turns a profile into plain data (breakdowns, findings), never text."""
