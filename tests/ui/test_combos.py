"""The eliding drop-down: its width follows the panel, not its longest choice, and the full text
of the current choice is its tooltip."""

from __future__ import annotations

from gpudesk.ui.widgets.combos import ElidingComboBox

LONG = "NVIDIA Jetson Nano Developer Kit (4 GB), 10 units on Gigabit Ethernet"


def test_a_long_choice_does_not_widen_the_combo_and_is_its_tooltip(qtbot):
    combo = ElidingComboBox(min_chars=10)
    qtbot.addWidget(combo)
    combo.addItems(["short", LONG])
    assert combo.sizeHint().width() < combo.fontMetrics().horizontalAdvance(LONG) / 2
    combo.setCurrentIndex(1)
    assert combo.toolTip() == LONG
    combo.resize(160, combo.sizeHint().height())
    combo.show()
    image = combo.grab()  # paints without error at a width far below the text's
    assert image.width() >= 160
