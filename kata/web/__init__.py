"""The practice room (`kata serve`): the session's screen in a browser, on this machine only.

app.py is the web application and its rules (token, Host, POST for actions), room.py what each
screen shows and each button does (kata.session's functions, as the command line calls them),
review.py the review and progress pages, charts.py their SVG, render.py prompts and results as
HTML. static/ holds the page and its assets, the code editor built from src/ included. Importing
this package loads nothing; only `kata serve` imports its modules.
"""
