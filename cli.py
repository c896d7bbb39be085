"""The command line lives in kata/cli.py (`kata` runs `kata.cli:app`); this name stays importable
for scripts written against it."""

from kata.cli import app  # noqa: F401

if __name__ == "__main__":  # pragma: no cover
    app()
