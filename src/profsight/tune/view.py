"""`Tuned`: a `TuneReport` with its renderings, as `profsight.tune.tune` returns it."""

from __future__ import annotations

from msgspec.structs import asdict

from profsight.tune.render import render_tune, tune_fragment
from profsight.tune.result import TuneReport


class Tuned(TuneReport, frozen=True):
    """What ``tune`` measured (``print(tuned)``, ``.markdown()``, ``.json()``, ``.html()``;
    Jupyter shows it as a page fragment)."""

    @classmethod
    def of(cls, data: TuneReport) -> Tuned:
        return cls(**asdict(data))

    def text(self) -> str:
        return render_tune(self, "text")

    def markdown(self) -> str:
        return render_tune(self, "markdown")

    def json(self) -> str:
        return render_tune(self, "json")

    def html(self) -> str:
        return render_tune(self, "html")

    def _repr_html_(self) -> str:
        return tune_fragment(self)

    def __str__(self) -> str:
        return self.text()
