"""Data the harness fetches and prepares for `harness data ...`, and the facts that describe it.

- `fetch`: resumable HTTP downloads;
- `newscrawl`: `harness data newscrawl`, WMT News Crawl streamed, gunzipped and length-filtered
  as the paper's `zcat | awk 'NF<15' | head -n N`;
- `senteval`, `senteval_prepare`: `harness data senteval`, SentEval's `get_transfer_data.bash`
  with verification;
- `preprocess`: that script's text preprocessing (`cat -v`, the PTB sed script, Moses through
  sacremoses);
- `senteval_tasks`: SentEval's task table (names, directories, files, expected line counts),
  shared by the downloader here and the task plugin that reads the data.

Nothing here imports a plugin, and importing the package is cheap.
"""
