"""`python -m kata` runs the same command line as `kata`."""

from kata.cli import app

app(prog_name="kata")
