"""`python cli.py COMMAND ...` from a clone's root: the same command line as `kata COMMAND ...`.

A thin entry beside katas/, solutions/ and graders/: the app is kata/cli.py's (the `kata` console
script is `kata.cli:app`). It is not installed: a wheel adds the kata package alone.
"""

from kata.cli import app

if __name__ == "__main__":
    app(prog_name="kata")
