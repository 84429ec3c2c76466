"""What the corpus says: topics, research areas, terms, the map, the topic tree, trends and review scores."""
