"""Figures: one colour-blind-safe style for the whole book, and images shown with alt text."""

from __future__ import annotations

import base64
import html
import io

import matplotlib.pyplot as plt  # the backend is the user's (matplotlib falls back to Agg without a display)
import seaborn as sns

PALETTE = "colorblind"


def use_book_style() -> None:
    """Seaborn's colour-blind palette, readable sizes, no top/right spines."""
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE)
    plt.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight", "axes.spines.top": False,
                         "axes.spines.right": False})


def glue_figure(name: str, fig) -> None:
    """Glue ``fig`` as a PNG under ``name``, then close it. The prose places it with a numbered,
    captioned ``{glue:figure}`` (``:name: fig-...`` for ``{numref}``, ``:alt:`` for screen readers);
    the rendered page links the image file instead of inlining it."""
    from IPython.display import Image

    from .report import glue

    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    glue(name, Image(buf.getvalue(), format="png"))


def show(fig, alt: str, caption: str | None = None) -> None:
    """Display ``fig`` as a PNG with ``alt`` text (required: screen readers read it), then close it."""
    from IPython.display import HTML, display

    if not alt.strip():
        raise ValueError("every figure needs alt text")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    display(HTML(f'<figure class="rcstudy-figure"><img src="data:image/png;base64,{data}" '
                 f'alt="{html.escape(alt)}" style="max-width:100%"/>{cap}</figure>'))
