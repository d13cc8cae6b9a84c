"""Who is in a room: the spectator count kept as members come and go matches the members."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from server.race.wire.audience import SPECTATORS, Audience, Member, Role
from tests.server.parts import Peer

PEERS = [Peer(f"s{i}") for i in range(4)]

steps = st.lists(
    st.tuples(
        st.sampled_from(["add", "remove"]),
        st.sampled_from(PEERS),
        st.sampled_from([Role.PLAYER, Role.SPECTATOR]),
    ),
    max_size=30,
)


@given(steps)
def test_the_spectator_count_is_the_spectators_among_the_members(
    plan: list[tuple[str, Peer, Role]],
) -> None:
    audience = Audience()
    for step, peer, role in plan:
        if step == "add":  # a peer already here joins again, maybe in another role
            audience.add(Member(peer, role, player=peer.session if role is Role.PLAYER else None))
        else:
            audience.remove(peer)
        assert audience.spectator_count() == len(audience.of(SPECTATORS))
        assert audience.spectator_count() == sum(
            m.role is Role.SPECTATOR for m in audience.members.values()
        )


def test_a_peer_that_leaves_is_sent_nothing_that_waited_for_it() -> None:
    audience = Audience()
    peer = PEERS[0]
    audience.add(Member(peer, Role.SPECTATOR, watch_all=True))
    audience.waiting[peer] = [b"frame"]
    assert audience.of(SPECTATORS) == [peer]
    audience.remove(peer)
    assert audience.waiting == {}
    assert audience.of(SPECTATORS) == []
    assert audience.spectator_count() == 0
