"""`ExplainingProfiler`, where Lightning users import it: ``from profsight.lightning import
ExplainingProfiler`` (it lives with the other integrations, `profsight.integrations`)."""

from profsight.integrations.lightning_profiler import ExplainingProfiler

__all__ = ["ExplainingProfiler"]
