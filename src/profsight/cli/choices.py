"""The choices the command line offers, kept light so that parsing imports nothing heavy.

`tests/test_cli.py` checks that they equal the registries they name.
"""

from __future__ import annotations

#: `profsight.renderers.table_formats.TABLE_FORMATS`
TABLE_FORMATS = ("text", "json", "csv", "markdown")
#: `profsight.renderers.report_formats.REPORT_FORMATS`
REPORT_FORMATS = ("text", "markdown", "json", "html")
#: `profsight.model.table.GROUP_BYS`
GROUP_BYS = ("name", "shape", "module")
TREE_FORMATS = ("text", "json")
#: `profsight.renderers.diff_render.DIFF_FORMATS`
DIFF_FORMATS = ("text", "markdown", "json", "html")
#: `profsight.compare.diff.BYS`
DIFF_BYS = ("total", "self")
#: `profsight.job.executors.EXECUTORS`
EXECUTORS = ("process", "serial", "dask")
