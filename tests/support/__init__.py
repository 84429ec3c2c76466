"""What the test modules share: corpora made for tests, servers started for real, browser helpers."""
