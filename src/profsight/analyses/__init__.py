"""Analyses: each turns a profile into plain data (breakdowns, findings, a verdict), never
text. `pipeline` runs them; `step` measures the step, `findings` holds the rules, `replay`
prices the fixes."""
