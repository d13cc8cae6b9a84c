"""The session's messages: each where it belongs in time."""

from __future__ import annotations

from client.session import Session


def test_a_line_said_late_goes_before_the_news_it_caused() -> None:
    session = Session("t")
    session.say("Paired.")
    since = session.said
    session.say("The race starts in 3 seconds.")  # came in while the request was answered
    session.say("Go! The race has started.")
    session.say_before("A bot took a seat: this race is unrated.", since)
    assert list(session.messages) == [
        "Paired.",
        "A bot took a seat: this race is unrated.",
        "The race starts in 3 seconds.",
        "Go! The race has started.",
    ]
    for n in range(50):  # a full list of messages drops its oldest
        session.say(f"line {n}")
    since = session.said
    session.say_before("late", since)
    assert list(session.messages)[-1] == "late"
    assert len(session.messages) == session.messages.maxlen
