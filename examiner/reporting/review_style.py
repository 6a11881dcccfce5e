"""The review page's style sheet: the report's CSS plus the review page's own rules, shared by the main page
(view_server.py) and the random-sample mode (sample_page.py)."""

from __future__ import annotations

from examiner.reporting.answer_fold import FOLD_CSS
from examiner.reporting.html import CSS

PAGE_CSS = CSS + """
form.filters{display:flex;gap:.8em;flex-wrap:wrap;align-items:end;background:#eef2f7;padding:.6em;border-radius:4px}
form.filters label{display:flex;flex-direction:column;font-size:.85em}
article.row{border:1px solid #ccc;border-left:4px solid #4c78a8;padding:.5em .8em;margin:.8em 0}
article.row.v-incorrect{border-left-color:#c62828}article.row.v-abstained{border-left-color:#f9a825}article.row.v-unrelated{border-left-color:#999}
article.row.v-unscored{border-left-color:#b35900}
.label{font-weight:600;color:#555;display:inline-block;min-width:6em}
.in-force{background:#fff6d6;padding:.3em .6em;margin:.3em 0}
form.override{display:flex;gap:.5em;flex-wrap:wrap;margin-top:.4em}
form.override input[name=reason]{flex:1;min-width:18em}
.banner{background:#fde2e1;border:1px solid #c62828;padding:.5em .8em}
""" + FOLD_CSS

__all__ = ["PAGE_CSS"]
