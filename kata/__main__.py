"""`python -m kata` runs the same command line as `kata`."""

from cli import app

app(prog_name="kata")
