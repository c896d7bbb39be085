"""`python -m tests.kata_test_clock ARGS...`: kata's command line with the test clock on, so that
$KATA_NOW sets the time (a plain `kata` ignores it). For tests that run `kata` as a process."""

import kata.session.base as session

session.TEST_CLOCK = True

from kata.cli import app  # noqa: E402 - the switch goes on before the command line loads

app(prog_name="kata")
