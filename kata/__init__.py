"""The kata workbook's machinery: catalog, workspace, store, grading harness, sessions, views.

kata/cli.py is the command line over this package; everything else here is importable and
unit-tested without it. kata/engine/ is the reference inference engine, standing alone;
kata/judges/ runs a learner's file on it (`kata engine ...`). docs/ARCHITECTURE.md names every module.
"""
