"""Group commit: one loop turn's items in one batch, each caller answered on its own."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import pytest

from server.store.group_commit import GroupCommit, Outcome


class Recorder:
    def __init__(self, fail: BaseException | None = None) -> None:
        self.batches: list[list[int]] = []
        self.fail = fail
        self.release = asyncio.Event()
        self.release.set()

    async def send(self, items: Sequence[int]) -> list[int | BaseException]:
        self.batches.append(list(items))
        await self.release.wait()
        if self.fail is not None:
            raise self.fail
        return [ValueError(item) if item < 0 else item * 10 for item in items]


async def test_one_turn_is_one_batch_in_order() -> None:
    sent = Recorder()
    commits: GroupCommit[int, int] = GroupCommit(sent.send)
    assert await asyncio.gather(*(commits.submit(n) for n in range(5))) == [0, 10, 20, 30, 40]
    assert sent.batches == [[0, 1, 2, 3, 4]]
    assert await commits.submit(7) == 70
    assert sent.batches[-1] == [7]


async def test_the_batch_is_sent_in_the_next_loop_turn() -> None:
    """One turn after the submits, not two: each turn of a loaded server is milliseconds."""
    sent = Recorder()
    sent.release.clear()
    commits: GroupCommit[int, int] = GroupCommit(sent.send)
    answers = [commits.submit(1), commits.submit(2)]
    assert sent.batches == []
    await asyncio.sleep(0)
    assert sent.batches == [[1, 2]]
    sent.release.set()
    assert await asyncio.gather(*answers) == [10, 20]


async def test_a_batch_cancelled_before_it_is_sent_cancels_its_callers() -> None:
    """A shutdown that cancels every task leaves no caller waiting for ever."""
    sent = Recorder()
    commits: GroupCommit[int, int] = GroupCommit(sent.send)
    answer = commits.submit(1)
    for task in asyncio.all_tasks():
        if task.get_name() == "group-commit":
            task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await answer
    assert sent.batches == []
    assert await commits.submit(2) == 20  # and the next turn's items are sent as ever
    await commits.aclose()


async def test_a_batch_cancelled_in_flight_leaves_the_next_turns_callers_alone() -> None:
    sent = Recorder()
    sent.release.clear()
    commits: GroupCommit[int, int] = GroupCommit(sent.send)
    first = commits.submit(1)
    await asyncio.sleep(0)
    [in_flight] = [t for t in asyncio.all_tasks() if t.get_name() == "group-commit"]
    second = commits.submit(2)  # the next turn's batch, not sent yet
    in_flight.cancel()
    sent.release.set()
    with pytest.raises(asyncio.CancelledError):
        await first
    assert await second == 20
    await commits.aclose()


async def test_a_turn_larger_than_max_batch_is_split() -> None:
    sent = Recorder()
    commits: GroupCommit[int, int] = GroupCommit(sent.send, max_batch=2)
    await asyncio.gather(*(commits.submit(n) for n in range(5)))
    assert sent.batches == [[0, 1], [2, 3], [4]]


async def test_an_item_error_is_its_callers_alone() -> None:
    commits: GroupCommit[int, int] = GroupCommit(Recorder().send)
    answers = await asyncio.gather(
        commits.submit(1), commits.submit(-1), commits.submit(2), return_exceptions=True
    )
    assert answers[0] == 10
    assert answers[2] == 20
    assert isinstance(answers[1], ValueError)


async def test_a_broken_batch_fails_every_caller() -> None:
    commits: GroupCommit[int, int] = GroupCommit(Recorder(fail=ConnectionError("gone")).send)
    answers = await asyncio.gather(commits.submit(1), commits.submit(2), return_exceptions=True)
    assert all(isinstance(a, ConnectionError) for a in answers)


async def test_a_caller_that_gives_up_leaves_the_others_answered() -> None:
    sent = Recorder()
    sent.release.clear()
    commits: GroupCommit[int, int] = GroupCommit(sent.send)
    leaving = asyncio.ensure_future(commits.submit(1))
    staying = commits.submit(2)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    leaving.cancel()
    sent.release.set()
    assert await staying == 20
    with pytest.raises(asyncio.CancelledError):
        await leaving
    await commits.aclose()


async def test_a_sender_with_the_wrong_count_is_an_error_not_a_hang() -> None:
    async def short(items: Sequence[int]) -> list[int | BaseException]:
        return [1]

    commits: GroupCommit[int, int] = GroupCommit(short)
    with pytest.raises(RuntimeError):
        await asyncio.gather(commits.submit(1), commits.submit(2))


def test_max_batch_is_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        GroupCommit(Recorder().send, max_batch=0)


class NowRecorder:
    """A sender that writes at once: keeps each batch's callback, for the test to tell."""

    def __init__(self, takes: bool = True) -> None:
        self.takes = takes
        self.batches: list[list[int]] = []
        self.told: list[Callable[[Outcome[int]], None]] = []

    def send_now(self, items: Sequence[int], told: Callable[[Outcome[int]], None]) -> bool:
        if not self.takes:
            return False
        if any(item == 13 for item in items):
            raise TypeError("13 cannot be written")
        self.batches.append(list(items))
        self.told.append(told)
        return True


async def test_a_batch_sent_now_answers_its_callers_as_it_is_told() -> None:
    """No task awaits the reply: the callers' futures are done the moment the reply is read,
    so they wake in the next loop turn, not the one after."""
    now, later = NowRecorder(), Recorder()
    commits: GroupCommit[int, int] = GroupCommit(later.send, send_now=now.send_now)
    answers = [commits.submit(1), commits.submit(-1), commits.submit(2)]
    await asyncio.sleep(0)
    assert now.batches == [[1, -1, 2]]
    assert later.batches == []
    assert not any(a.done() for a in answers)
    [told] = now.told
    told([10, ValueError(-1), 20])
    assert all(a.done() for a in answers)  # at once, in the telling's own callback
    assert answers[0].result() == 10
    assert isinstance(answers[1].exception(), ValueError)
    assert answers[2].result() == 20
    told([0, 0, 0])  # told twice (a sender's bug): the first answer stands
    assert answers[0].result() == 10
    await commits.aclose()


async def test_a_batch_not_sent_now_goes_through_send() -> None:
    now, later = NowRecorder(takes=False), Recorder()
    commits: GroupCommit[int, int] = GroupCommit(later.send, send_now=now.send_now)
    assert list(await asyncio.gather(commits.submit(1), commits.submit(2))) == [10, 20]
    assert later.batches == [[1, 2]]


async def test_a_batch_told_a_failure_or_a_coroutine_or_refused_answers_every_caller() -> None:
    now = NowRecorder()
    commits: GroupCommit[int, int] = GroupCommit(Recorder().send, send_now=now.send_now)
    failed = [commits.submit(1), commits.submit(2)]
    await asyncio.sleep(0)
    now.told[0](ConnectionError("gone"))
    assert all(isinstance(f.exception(), ConnectionError) for f in failed)

    async def retried() -> list[int | BaseException]:
        await asyncio.sleep(0)
        return [30, 40]

    finished = [commits.submit(3), commits.submit(4)]
    await asyncio.sleep(0)
    now.told[1](retried())  # more round trips: a task finishes the batch
    assert await asyncio.gather(*finished) == [30, 40]

    refused = [commits.submit(5), commits.submit(13)]
    assert all(
        isinstance(a, TypeError) for a in await asyncio.gather(*refused, return_exceptions=True)
    )
    await commits.aclose()


async def test_close_waits_for_a_batch_sent_now_and_not_yet_told() -> None:
    now = NowRecorder()
    commits: GroupCommit[int, int] = GroupCommit(Recorder().send, send_now=now.send_now)
    answer = commits.submit(1)
    await asyncio.sleep(0)
    closing = asyncio.ensure_future(commits.aclose())
    await asyncio.sleep(0.01)
    assert not closing.done()
    now.told[0]([10])
    await closing
    assert answer.result() == 10
