"""report.html's plots are laid out once, with room measured for their labels: every label drawn lies
inside the figure, however long the names on the y axis."""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from llmjury.reporting.report_html import _margins


@pytest.mark.parametrize("labels", [["a", "b"], ["gpt-4o-mini-2024-07-18 / socratic-tutor-v3 (ours)", "x"],
                                    [f"model {i} {'w' * 3 * i}" for i in range(12)]])
def test_every_label_of_a_whisker_plot_is_inside_the_figure(labels):
    figure = Figure(figsize=(8, 0.32 * len(labels) + 1.2))
    FigureCanvasAgg(figure)
    ax = figure.subplots()
    ax.errorbar(range(len(labels)), range(len(labels)), xerr=0.5, fmt="o")
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_xlabel("rating")
    _margins(figure, labels, 8)
    renderer = figure.canvas.get_renderer()
    figure.draw(renderer)
    inside = figure.bbox
    low, high = ax.get_xlim()
    drawn = [label for label, at in zip(ax.get_xticklabels(), ax.get_xticks(), strict=True) if low <= at <= high]
    for text in [*ax.get_yticklabels(), *drawn, ax.xaxis.label]:
        box = text.get_window_extent(renderer)
        assert box.x0 >= inside.x0 and box.x1 <= inside.x1 and box.y0 >= inside.y0 and box.y1 <= inside.y1, \
            text.get_text()
    assert ax.get_position().x0 * figure.get_size_inches()[0] < 0.3 + max(len(label) for label in labels) * 0.1
