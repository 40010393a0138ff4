"""One BLAS thread for profsight's own process, and the record of what was set.

The command line uses no BLAS, and a BLAS thread pool started by numpy would keep the loader
from forking a second decoding process (see `profsight.loaders.parallel`); so, for this
process only and unless the user set them, BLAS libraries are told to use one thread, before
numpy is imported. A command that starts the user's training (``tune``) takes the variables
it set out again once numpy is loaded, so that the training runs on every core.
"""

from __future__ import annotations

import os

_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
DEFAULTED: list[str] = []
"""The variables `one_blas_thread` set (the user had not)."""


def one_blas_thread() -> None:
    for var in _BLAS_THREADS:
        if var not in os.environ:
            os.environ[var] = "1"
            DEFAULTED.append(var)


def users_threads() -> None:
    """The environment as the user had it, for the processes started from now on."""
    for var in DEFAULTED:
        os.environ.pop(var, None)
