"""Is the code really there? Check the repositories papers link to, and keep the answers.

Three layers, each unaware of the others' insides (transport apart from models, the cache apart
from both):

- `client` knows URLs, headers, tokens, rate limits, retries, timeouts and bounded reads. It only
  ever talks to the configured API bases (``GITHUB_API_URL``, ``GITLAB_API_URL``, ``HF_ENDPOINT``)
  with URL-encoded path segments: never to a URL taken from an abstract.
- `states` turns API answers into one `repo_state` (pure functions, no I/O).
- `store` keeps answers and ETags in SQLite (WAL, numbered migrations, one transaction per write).

`targets` finds what to check in the paper table; `checker` runs a check with bounded concurrency;
`cli` is ``paper-dashboard check-code``.
"""
