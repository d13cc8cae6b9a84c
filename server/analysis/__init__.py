"""Every finished game analysed: the solver's verdict of each position, and the move that threw
a won game away (docs/architecture.md, "server/analysis/")."""
