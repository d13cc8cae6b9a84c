"""The frame writer: bursts coalesce into one redraw, unchanged frames are not written again."""

from __future__ import annotations

import asyncio
import io

from client.terminal import Display, read_script


class Frames:
    def __init__(self) -> None:
        self.lines = ["a", "b"]
        self.built = 0

    def __call__(self) -> list[str]:
        self.built += 1
        return list(self.lines)


async def test_a_burst_of_events_costs_one_redraw() -> None:
    out = io.StringIO()
    frames = Frames()
    display = Display(frames, out=out, in_place=True, fps=30)
    display.invalidate()
    await asyncio.sleep(0.01)
    assert display.frames_drawn == 1
    for i in range(500):  # a fast player: 500 events within one frame interval
        frames.lines = ["a", f"move {i}"]
        display.invalidate()
    await asyncio.sleep(0.2)
    assert display.frames_drawn == 2
    assert out.getvalue().endswith("\x1b[Ha\x1b[K\r\nmove 499\x1b[K\r\n\x1b[K\x1b[J")
    assert "move 0" not in out.getvalue()


async def test_an_unchanged_frame_is_not_written_again() -> None:
    out = io.StringIO()
    display = Display(Frames(), out=out, in_place=True)
    display.flush()
    written = out.getvalue()
    display.invalidate()
    await asyncio.sleep(0.1)
    display.flush()
    assert out.getvalue() == written
    assert display.frames_drawn == 1


def test_plain_output_prints_whole_frames() -> None:
    out = io.StringIO()
    display = Display(Frames(), out=out, in_place=False)
    display.flush()
    assert out.getvalue() == "a\nb\n\n"


def test_a_disabled_display_writes_nothing() -> None:
    out = io.StringIO()
    display = Display(Frames(), out=out, in_place=True, enabled=False)
    display.start()
    display.flush()
    display.close()
    assert out.getvalue() == ""


def test_scripts_skip_blank_lines_and_comments(tmp_path) -> None:
    path = tmp_path / "moves"
    path.write_text("# opening\nd\n\n  3 5  # friendly\nresign\n")
    assert read_script(str(path)) == ["d", "3 5", "resign"]
    assert read_script("-", io.StringIO("wf\n")) == ["wf"]
