"""The analysis request of a connection."""
