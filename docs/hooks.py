"""MkDocs hook: tidy the docstrings' reStructuredText roles in the API reference.

The docstrings write cross-references as Sphinx roles (``:func:`lid```); the numpy-style
renderer of mkdocstrings keeps the role name as text. This hook drops the role name so the
reference reads as code (``lid``), and turns ``~module.Name`` into ``Name`` as Sphinx would.
"""

from __future__ import annotations

import re

_ROLES = r":(?:py:)?(?:func|class|meth|data|mod|attr|obj|exc|const|term|ref):"
_TILDE = re.compile(_ROLES + r"<code>~(?:\w+\.)*(\w+)</code>")
_ROLE = re.compile(_ROLES + r"(<code>)")


def on_page_content(html: str, **kwargs: object) -> str:
    """Remove Sphinx role prefixes left in rendered docstrings."""
    html = _TILDE.sub(r"<code>\1</code>", html)
    return _ROLE.sub(r"\1", html)
