"""MkDocs hook: tidy the docstrings' reStructuredText roles in the API reference.

The docstrings write cross-references as Sphinx roles (``:func:`lid```); the numpy-style
renderer of mkdocstrings keeps the role name as text. This hook drops the role name so the
reference reads as code (``lid``), and turns ``~module.Name`` into ``Name`` as Sphinx would.
"""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|data|mod|attr|obj|exc|const|term|ref):(<code>)~?")
_TILDE = re.compile(r"<code>~(?:[A-Za-z_][\w]*\.)+([A-Za-z_]\w*)</code>")


def on_page_content(html: str, **kwargs: object) -> str:
    """Remove Sphinx role prefixes left in rendered docstrings."""
    html = _ROLE.sub(r"\1", html)
    return _TILDE.sub(r"<code>\1</code>", html)
