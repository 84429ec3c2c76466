"""The HTML report: one self-contained page of what the filters show."""
