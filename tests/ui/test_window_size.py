"""The first window fits the screen it opens on (issue 31): its size comes from the screen's
available geometry, and a remembered size is used only while it still fits."""

from __future__ import annotations

from PySide6.QtCore import QRect

from gpudesk.ui.window.state import FRAME_ALLOWANCE, PREFERRED, first_size, fits


def test_the_first_size_leaves_room_for_the_frame_on_a_small_screen():
    laptop = QRect(0, 0, 1366, 768 - 32)  # a 1366x768 screen with a 32-pixel panel
    width, height = first_size(laptop)
    assert (width, height) == (1320, 768 - 32 - FRAME_ALLOWANCE[1])
    assert height + FRAME_ALLOWANCE[1] <= laptop.height() and width + FRAME_ALLOWANCE[0] <= laptop.width()
    assert first_size(QRect(0, 0, 1920, 1040)) == PREFERRED  # room enough: the preferred size
    assert first_size(None) == PREFERRED and first_size(QRect()) == PREFERRED


def test_a_remembered_geometry_is_kept_only_while_it_fits():
    screen = QRect(0, 0, 1366, 736)
    assert fits(QRect(10, 10, 1300, 700), screen)
    assert not fits(QRect(0, 0, 1336, 868), screen)  # the old 1320x820 window and its frame
    assert not fits(QRect(1500, 0, 800, 600), screen)  # left on a second monitor that is gone
    assert fits(QRect(0, 0, 5000, 5000), None)  # no screen to judge by
