"""The referee: players' reports, the moderators' actions (fair-play marks, closing an account)
and their audit log."""
