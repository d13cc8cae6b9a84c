"""The analysis wing's I/O: the analyses kept, and the process that makes them."""
