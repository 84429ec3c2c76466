"""Paper Dashboard: see what is in a conference's list of paper abstracts in minutes."""

__version__ = "0.1.0"
