"""Finding papers: the word index, ranking, lookup by title or author, and "papers like this" spaces."""
