"""The report's sections, one module each: a function returning the section's HTML."""
