"""The command line's commands, a module per audience, each registering on one app.

    base.py             the app (KataGroup, the global options) and the plumbing every command shares
    learner_catalog.py  `kata init`, `list`, `show`: the workbook and the catalog
    learner_session.py  `kata start`, `hunt`, `status`, `check`, `submit`, `watch`, `serve`, `hint`, `finish`
    learner_records.py  `kata review`, `progress`, `snapshots`, `restore`, `doctor`, `history`, `solution`
    instructor.py       `kata validate`, `new`, `bundle`, `regrade`, `runner`, `grade-batch`, `gradebook`

kata/cli.py imports them in the order `kata -h` lists them; the engine's commands are
kata/judges/cli.py. Importing this package loads nothing.
"""
