"""The report's plots, one module each (matplotlib figures rendered to inline SVG)."""
