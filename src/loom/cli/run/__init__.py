"""`loom run`: one task without a person at the keyboard.

- `command`: the Typer command (its options are the table `fast` reads too);
- `fast`: a plain command line read without Typer (start-up time), checked against
  `command` by tests/cli/test_run_fast.py;
- `headless`: the run itself (`RunOptions`, `run_headless`);
- `signals`: Ctrl-C and SIGTERM wherever the run waits;
- `output`: the text, json and stream-json writers and the result.
"""
