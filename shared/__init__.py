"""The pure game code of Solitaire Arena: no I/O, no clock, used by server and client alike."""
