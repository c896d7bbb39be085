"""The kata workbook's machinery: catalog, workspace, store, grading harness, sessions, views.

cli.py (at the repository root) is the command line over this package; everything here is
importable and unit-tested without it.
"""
