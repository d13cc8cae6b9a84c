"""The analysis wing's pure core: its events and what a reader is sent."""
