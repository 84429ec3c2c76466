"""Text as the analyses read it: markup cleaning, tokens, links, names in abstracts, the derived columns."""
