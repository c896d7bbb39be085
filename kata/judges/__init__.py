"""The judges: where a learner's file meets the reference engine outside a grader.

    cli.py          `kata engine run`, `compare` and `plan` (the `engine` sub-app of kata's CLI)
    cli_support.py  its one-line errors, argument checks, console, and the policy-file loader
    plan_report.py  `kata engine plan`: a serving plan judged beside the reference, in 80 columns

They need kata's own modules (the grading plugin's loader, the catalog, the output layer), which
the engine itself never imports: kata.engine stands alone, and these sit on top of it.
"""
