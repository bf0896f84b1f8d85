"""Data the harness fetches and prepares for `harness data ...`, and the facts that describe it.

- `fetch`: resumable HTTP downloads;
- `senteval`: `harness data senteval`, SentEval's `get_transfer_data.bash` with verification;
- `preprocess`: that script's text preprocessing (`cat -v`, the PTB sed script, Moses);
- `senteval_tasks`: SentEval's task table (names, directories, files, expected line counts),
  shared by the downloader here and the task plugin that reads the data.

Nothing here imports a plugin, and importing the package is cheap (standard library only).
"""
