"""A report's figures as PNG files."""
import io


def save_png(fig, path):
    """The figure as a 256-colour PNG, a third of matplotlib's RGBA file (a plot has few colours)."""
    from PIL import Image
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=100)
    image = Image.open(buffer).convert("RGB").quantize(colors=256, dither=Image.Dither.NONE)
    image.save(path, format="PNG", optimize=True)
