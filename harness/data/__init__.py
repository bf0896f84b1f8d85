"""Data the harness fetches and prepares for `harness data ...`, and the facts that describe it.

- `fetch`: resumable HTTP downloads;
- `newscrawl`: `harness data newscrawl`, WMT News Crawl streamed, gunzipped and length-filtered
  as the paper's `zcat | awk 'NF<15' | head -n N`;
- `preprocess`: the text preprocessing of SentEval's `get_transfer_data.bash` (`cat -v`, the
  PTB sed script, Moses through sacremoses), which the SentEval tasks' plugin uses for
  `harness data senteval` (its layout, download and preparation are the plugin's).

Nothing here imports a plugin, and importing the package is cheap.
"""
